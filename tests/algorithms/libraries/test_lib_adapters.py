"""Adapters for real DP libraries (`lib-…`): what they declare, how they refuse untested or broken
installs, and how non-seedable black boxes are audited. Tests needing a library skip (naming the
reason) when the ``libs`` extra is not installed."""

import numpy as np
import pytest

import algorithms
from algorithms.libraries import loader
from algorithms.registry import register
from audit import Claim, audit
from audit.errors import PrivauditError
from audit.journal import Journal
from privaudit.cli import main as cli_main

LIB = [n for n in algorithms.names() if n.startswith("lib-")]
ISSUE_LIST = {"lib-diffprivlib-laplace", "lib-diffprivlib-laplace-bounded", "lib-diffprivlib-geometric",
              "lib-diffprivlib-exponential", "lib-diffprivlib-mean", "lib-diffprivlib-sum",
              "lib-diffprivlib-count", "lib-opendp-laplace", "lib-opendp-geometric",
              "lib-opendp-noisy-max", "lib-opendp-sum", "lib-pydp-bounded-sum",
              "lib-pydp-bounded-mean", "lib-pydp-count"}


def needs(name):
    reason = algorithms.spec(name).unavailable()
    if reason:
        pytest.skip(f"{name}: {reason}")
    return algorithms.get(name)


def test_every_adapter_the_issue_lists_is_registered():
    assert ISSUE_LIST <= set(LIB)


@pytest.mark.parametrize("name", LIB)
def test_adapter_declares_claim_relation_domain_and_is_not_reproducible(name):
    m = needs(name)
    assert m.reproducible is False and m.claim.epsilon > 0
    assert m.relation in ("replace-one", "add-remove") and m.domain and m.pairs
    assert m.params["library"].startswith(m.library)
    out = m.sample(m.pairs[0][0], 50, np.random.default_rng(0))
    assert out.shape == (50,) and np.all(np.isfinite(out))


def test_untested_major_version_is_refused(monkeypatch):
    monkeypatch.setattr(loader.metadata, "version", lambda dist: "9.0.0")
    loader.unavailable.cache_clear()
    try:
        reason = loader.unavailable("opendp")
        assert "untested" in reason and "0.16" in reason
        with pytest.raises(PrivauditError, match="untested"):
            algorithms.get("lib-opendp-laplace")
        assert algorithms.info("lib-opendp-laplace")["unavailable"] == reason
        assert algorithms.info("lib-opendp-laplace")["claim"] is None
    finally:
        loader.unavailable.cache_clear()


def test_missing_library_is_reported_with_the_install_hint(monkeypatch):
    def missing(dist):
        raise loader.metadata.PackageNotFoundError(dist)
    monkeypatch.setattr(loader.metadata, "version", missing)
    loader.unavailable.cache_clear()
    try:
        assert loader.unavailable("python-dp") == "python-dp is not installed (pip install 'privaudit[libs]')"
    finally:
        loader.unavailable.cache_clear()


def test_diffprivlib_import_failure_names_scikit_learn(monkeypatch):
    monkeypatch.setattr(loader.metadata, "version",
                        lambda dist: {"diffprivlib": "0.6.6", "scikit-learn": "1.6.1"}[dist])

    def broken(module):
        raise ImportError("cannot import name '_check_n_features' from 'sklearn.utils.validation'")
    monkeypatch.setattr(loader.importlib, "import_module", broken)
    loader.unavailable.cache_clear()
    try:
        reason = loader.unavailable("diffprivlib")
        assert "scikit-learn < 1.6" in reason and "1.6.1" in reason
    finally:
        loader.unavailable.cache_clear()


def test_unavailable_algorithm_is_listed_cleanly(capsys):
    def factory(epsilon: float = 1.0):
        raise AssertionError("never built when unavailable")
    register("lib-test-missing", kind="mechanism", paper="p", section="s", summary="x",
             requires=lambda: "testlib is not installed (pip install 'privaudit[libs]')")(factory)
    try:
        assert cli_main(["list"]) == 0
        out = capsys.readouterr().out
        assert "lib-test-missing" in out and "unavailable: testlib is not installed" in out
        with pytest.raises(PrivauditError, match="lib-test-missing is unavailable: testlib"):
            algorithms.get("lib-test-missing")
    finally:
        algorithms.registry._REGISTRY.pop("lib-test-missing")


class OwnEntropy:
    """A black box that ignores `rng` (draws from the OS), like a real library."""

    name = "own-entropy-rr"
    claim = Claim(1.0)
    reproducible = False
    pairs = [(np.array([0]), np.array([1]))]

    def sample(self, inp, runs, rng):
        p = np.e / (1 + np.e)
        flip = np.random.default_rng().random(runs) >= p
        return np.bitwise_xor(int(np.asarray(inp).reshape(-1)[0]), flip.astype(np.int64))


def test_non_reproducible_black_box_is_said_so_and_resumes_from_its_journal(tmp_path):
    bb = OwnEntropy()
    # its own entropy: the verdict is random on every run; at confidence 0.999 a false alarm on
    # randomized response at its claim has probability <= 1e-3
    kw = dict(explore_runs=20_000, confirm_runs=100_000, seed=0, confidence=0.999)
    with Journal(tmp_path) as j:
        first = audit(bb, bb.pairs, journal=j, **kw)
        written = j.written
    assert first.runner["reproducible"] is False
    assert any("not reproducible" in n for n in first.notes)
    assert not first.violation  # randomized response at its claim (false alarm <= 1e-3)
    with Journal(tmp_path) as j:  # a resumed audit takes every finished chunk's counts as stored
        again = audit(bb, bb.pairs, journal=j, **kw)
        assert j.written == 0 and j.hits == written > 0
    assert again.confirmed[0].k_p == first.confirmed[0].k_p


# ---------------------------------------------------------------------------------------------
# audits of every adapter on its documented claim (slow: the libraries are called once per run)
# ---------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("name", LIB)
def test_adapter_passes_its_documented_claim(name):
    """The libraries' own noise is not seedable, so this outcome is random on every run. One audit
    at confidence 0.95 flags a library that keeps a tight claim (geometric, Laplace at their
    exact epsilon) with probability up to 0.05 -- over 14 adapters a false CI failure about half
    the time (seen: lib-opendp-geometric 1.0064 > 1). So, as issue 14 asks of any reported
    library violation, a flag must be confirmed by an independent second audit (fresh library
    noise, another seed family) before the test fails, and each audit runs at confidence 0.99:
    a false failure has probability <= 0.01^2 = 1e-4 per adapter, <= 1.4e-3 per suite of 14.
    Slow adapters (< 10^4 calls/s) are audited on their first pair only."""
    m = needs(name)
    pairs = m.pairs if name in FAST else m.pairs[:1]
    r = audit(m, pairs, explore_runs=2_000, confirm_runs=10_000, seed=0, confidence=0.99)
    if r.violation:
        again = audit(m, pairs, explore_runs=2_000, confirm_runs=10_000, seed=1, confidence=0.99)
        assert not again.violation, (r.summary(), again.summary())
    assert r.epsilon_lower <= m.claim.epsilon


FAST = {"lib-diffprivlib-laplace", "lib-diffprivlib-geometric", "lib-diffprivlib-exponential",
        "lib-opendp-laplace", "lib-opendp-geometric", "lib-pydp-bounded-sum", "lib-pydp-bounded-mean",
        "lib-pydp-count"}


@pytest.mark.parametrize("name", LIB)
def test_adapter_travels_to_a_worker(name):
    """Ray ships the black box by (cloud)pickle; library objects are rebuilt on arrival."""
    cloudpickle = pytest.importorskip("cloudpickle")
    m = needs(name)
    copy = cloudpickle.loads(cloudpickle.dumps(m))
    assert copy.claim == m.claim and copy.sample(m.pairs[0][0], 20, None).shape == (20,)
