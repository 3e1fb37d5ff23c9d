"""pytest plugin (entry point ``pytest11``): privacy assertions inside a user's test suite.

Two ways to write a privacy test::

    from audit.testing import assert_private

    @pytest.mark.privacy                       # shares the session's false-alarm budget
    def test_my_mechanism():
        assert_private(MyMechanism(epsilon=1.0), pairs=[([0], [1])])

    @pytest.mark.privacy(my_mechanism, claim=1.0, pairs=[([0], [1])])   # the marker audits it
    def test_my_mechanism_marked():
        pass                                   # (runs after the body, if the body passed)

``@pytest.mark.privacy(obj=None, *, audits=1, **kwargs)``:

* ``obj``: audited after the test body (an object, a registered algorithm name with
  ``params={...}``, or ``"module:attr"``); the other keyword arguments go to `assert_private`.
* ``audits``: how many assert_private calls the test makes (the marker's own audit included);
  a test that makes more fails, so the budget below stays valid.
* budget keywords (``confidence``, ``explore_runs``, ``confirm_runs``, ``seed``, ...) become the
  defaults of assert_private calls inside the test.

Session error control: with ``--privaudit-confidence C`` (ini ``privaudit_confidence``, default
0.95), each assert_private call inside a marked test runs at ``1 - (1 - C)/M`` unless it sets its
own confidence, M being the total ``audits`` of all selected marked tests. By the union bound the
probability that any of them fails on a correct algorithm is at most ``1 - C``. The terminal
summary reports the session's total ``sum(1 - confidence)`` over every call actually made.
"""

from __future__ import annotations

import pytest

import algorithms
from audit import testing
from audit.testing import BUDGET_KEYS, assert_private
from privaudit.resolve import build_target

_saved_key = pytest.StashKey[list]()     # audit.testing.CALLS of an enclosing session
_budget_key = pytest.StashKey[dict]()    # the session's confidence split over marked tests
_ctx_key = pytest.StashKey[tuple]()      # a marked test's context and its ContextVar token


def pytest_addoption(parser) -> None:
    group = parser.getgroup("privaudit", "privacy audits (audit.testing.assert_private)")
    group.addoption("--privaudit-confidence", type=float, default=None,
                    help="session-wide confidence shared by tests marked @pytest.mark.privacy "
                         "(default: ini privaudit_confidence or 0.95)")
    parser.addini("privaudit_confidence", "session-wide confidence of privacy-marked tests",
                  default="0.95")


def pytest_configure(config) -> None:

    # each session (also one run in-process by pytester) records its own calls
    config.stash[_saved_key] = testing.CALLS
    testing.CALLS = []
    config.addinivalue_line(
        "markers",
        "privacy(obj=None, *, audits=1, **kwargs): a test that audits a learner or mechanism with "
        "audit.testing.assert_private; marked tests share the session's false-alarm budget")


def _session_confidence(config) -> float:
    value = config.getoption("privaudit_confidence")
    if value is None:
        value = config.getini("privaudit_confidence")
    try:
        c = float(value)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"privaudit confidence must be a number, got {value!r}") from None
    if not 0.0 < c < 1.0:
        raise pytest.UsageError(f"privaudit confidence must be in (0, 1), got {c}")
    return c


def _declared(item) -> int:
    m = item.get_closest_marker("privacy")
    audits = m.kwargs.get("audits", 1) if m is not None else 0
    if isinstance(audits, bool) or not isinstance(audits, int) or audits < 1:
        raise pytest.UsageError(f"{item.nodeid}: privacy(audits=...) must be a positive integer, "
                                f"got {audits!r}")
    return audits


def pytest_unconfigure(config) -> None:

    saved = config.stash.get(_saved_key, None)
    if saved is not None:
        testing.CALLS = saved


def pytest_collection_finish(session) -> None:
    marked = [it for it in session.items if it.get_closest_marker("privacy") is not None]
    total = sum(_declared(it) for it in marked)
    conf = _session_confidence(session.config)
    session.config.stash[_budget_key] = {
        "session_confidence": conf, "audits": total,
        "per_audit": 1.0 - (1.0 - conf) / total if total else conf}


def _resolve(obj, params: dict):
    """The marker's target: an object, a registered name, ``module:attr``, or a factory."""
    if isinstance(obj, str):
        if obj not in algorithms.names() and params:
            raise pytest.UsageError(f"privacy marker: params= applies to registered algorithms, "
                                    f"not {obj!r}")
        registered = obj in algorithms.names()
        return build_target(obj if registered else None, None if registered else obj,
                            params=params).obj
    if params:
        raise pytest.UsageError("privacy marker: params= applies to registered algorithm names")
    if not (hasattr(obj, "sample") or hasattr(obj, "predict")) and callable(obj):
        return obj()
    return obj


def pytest_runtest_setup(item) -> None:
    m = item.get_closest_marker("privacy")
    if m is None:
        return

    budget = item.config.stash.get(_budget_key, None)
    defaults = {k: v for k, v in m.kwargs.items() if k in testing.BUDGET_KEYS}
    if budget is not None and "confidence" not in defaults:
        defaults["confidence"] = budget["per_audit"]
    ctx = {"defaults": defaults, "calls": [], "limit": _declared(item), "test": item.nodeid}
    item.stash[_ctx_key] = (ctx, testing._CONTEXT.set(ctx))


@pytest.hookimpl(trylast=True)
def pytest_runtest_call(item) -> None:
    """After a passing body, audit the marker's own target (if it names one)."""
    m = item.get_closest_marker("privacy")
    if m is None or not m.args:
        return
    if len(m.args) > 1:
        raise pytest.UsageError(f"{item.nodeid}: privacy marker takes one positional argument (the "
                                f"object to audit), got {len(m.args)}")

    kwargs = {k: v for k, v in m.kwargs.items() if k not in ("audits", "params")}
    unknown = sorted(set(kwargs) - set(BUDGET_KEYS) - {"pairs", "data", "queries", "claim"})
    if unknown:
        raise pytest.UsageError(f"{item.nodeid}: unknown privacy marker keyword(s) {unknown}")
    __tracebackhide__ = True
    assert_private(_resolve(m.args[0], dict(m.kwargs.get("params", {}))), **kwargs)


def pytest_runtest_teardown(item) -> None:
    saved = item.stash.get(_ctx_key, None)
    if saved is None:
        return

    testing._CONTEXT.reset(saved[1])
    del item.stash[_ctx_key]


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:

    calls = testing.CALLS
    if not calls:
        return
    tr = terminalreporter
    budget = config.stash.get(_budget_key, {}) or {}
    marked = [c for c in calls if c["marked"]]
    alpha = sum(1.0 - c["confidence"] for c in calls)
    tr.write_sep("-", "privaudit")
    line = f"{len(calls)} privacy audit(s), {sum(c['violation'] for c in calls)} violation(s) confirmed"
    if marked:
        line += (f"; {len(marked)} in @pytest.mark.privacy tests sharing session confidence "
                 f"{budget.get('session_confidence', 0.95):g} over {budget.get('audits', 0)} "
                 f"declared audit(s)")
    tr.write_line(line)
    tr.write_line(f"false-alarm probability of this session's privacy checks <= {alpha:.3g} "
                  f"(union bound: sum of 1 - confidence over every call)")
