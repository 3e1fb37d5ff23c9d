"""Property-based tests (hypothesis): the statistics, `Dataset`/`Claim` validation, and the
readers of CI configs, journals, stored results and input distances never fail in any way but a
`PrivauditError` naming the problem.

Every property is exact (no statistical tolerance), so there is no false-alarm rate to analyse;
hypothesis runs are derandomised (fixed database-free seed) to keep CI reproducible.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit import Claim, Dataset, stats
from audit.binning import bin_index
from audit.errors import PrivauditError
from audit.journal import Journal
from audit.journal_check import record_problem
from audit.learned import score_grid
from audit.neighbours import input_distance, parse_input_distance
from privaudit.ci_config import parse_config
from reports.jsonio import loads as load_result_text

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=True)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=25)


# --- statistics --------------------------------------------------------------------------------
@SETTINGS
@given(n=st.integers(1, 10**9), frac=st.floats(0, 1), alpha=st.floats(1e-12, 0.5))
def test_clopper_pearson_brackets_the_estimate(n, frac, alpha):
    k = int(round(frac * n))
    lo, hi = float(stats.cp_lower(k, n, alpha)), float(stats.cp_upper(k, n, alpha))
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    if k > 0:   # more successes never lower the lower bound
        assert float(stats.cp_lower(k - 1, n, alpha)) <= lo


@SETTINGS
@given(n=st.integers(32, 500), loc=st.floats(-1e6, 1e6), scale=st.floats(1e-6, 1e4),
       shape=st.sampled_from(["normal", "laplace", "uniform"]), repeats=st.integers(0, 40),
       seed=st.integers(0, 2**32 - 1))
def test_bin_index_is_searchsorted(n, loc, scale, shape, repeats, seed):
    """The lookup-table binning equals a binary search element for element: on quantile-like
    grids with far-tail points (as exploration's), with repeated edges, on values at the edges,
    just beside them, far out, infinite and NaN (enough values for the table to be used)."""
    rng = np.random.default_rng(seed)
    inner = getattr(rng, shape)(size=n)
    e = loc + scale * np.concatenate([inner, inner.min() - 2.0 ** np.arange(8),
                                      inner.max() + 2.0 ** np.arange(8)])
    e = np.sort(np.concatenate([e, rng.choice(e, repeats)]))
    v = np.concatenate([rng.choice(e, 4000), np.nextafter(rng.choice(e, 4000), np.inf),
                        np.nextafter(rng.choice(e, 4000), -np.inf),
                        loc + scale * getattr(rng, shape)(size=8000), [np.nan, np.inf, -np.inf]])
    rng.shuffle(v)
    assert np.array_equal(bin_index(e, v), np.searchsorted(e, v, side="right"))


@SETTINGS
@given(p=st.floats(0, 1), q=st.floats(0, 1), delta=st.floats(0, 0.99), eps=st.floats(0, 50))
def test_bounds_are_consistent(p, q, delta, eps):
    e = float(stats.epsilon_lower(p, q, delta))
    d = float(stats.delta_lower(p, q, eps))
    assert e >= 0 and not math.isnan(e) and 0 <= d <= 1
    # a violation at (eps, delta) means delta_lower(eps) > delta and epsilon_lower(delta) > eps
    if p > math.exp(eps) * q + delta and q > 0:
        assert d > delta - 1e-12 and e >= eps - 1e-9


@SETTINGS
@given(n=st.integers(1, 10**12), confidence=st.floats(0.5, 0.999999), tests=st.integers(1, 1000))
def test_ceiling_is_finite_and_grows_with_runs(n, confidence, tests):
    c = stats.max_certifiable_epsilon(n, confidence, tests)
    assert 0 <= c < math.inf
    assert stats.max_certifiable_epsilon(2 * n, confidence, tests) >= c


# --- Dataset and Claim validation ----------------------------------------------------------
@SETTINGS
@given(X=json_values, y=json_values)
def test_dataset_from_anything_is_valid_or_a_clear_error(X, y):
    try:
        d = Dataset.from_dict({"X": X, "y": y})
    except PrivauditError:
        return
    assert d.X.dtype == np.float64 and d.X.ndim == 2 and np.all(np.isfinite(d.X))
    assert d.y.dtype == np.int8 and set(np.unique(d.y)) <= {0, 1} and len(d.y) == d.n


@SETTINGS
@given(d=json_values)
def test_claim_from_anything_is_valid_or_a_clear_error(d):
    try:
        c = Claim.from_dict(d)
    except PrivauditError:
        return
    assert 0 <= c.epsilon <= 700 and 0 <= c.delta < 1


@SETTINGS
@given(spec=json_values | st.text(max_size=20))
def test_input_distance_parse(spec):
    try:
        rel = parse_input_distance(spec)
    except PrivauditError:
        return
    assert rel is None or (rel.norm in ("hamming", "l1", "l2", "linf") and rel.bound >= 0)


@SETTINGS
@given(a=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=6),
       b=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=6))
def test_input_distances_are_norms(a, b):
    a, b = np.array(a), np.array(b)
    if a.shape != b.shape:
        assert input_distance(a, b, "l1") == math.inf
        return
    l1, l2, linf, ham = (input_distance(a, b, n) for n in ("l1", "l2", "linf", "hamming"))
    assert linf <= l2 * (1 + 1e-9) + 1e-9 and l2 <= l1 * (1 + 1e-9) + 1e-9
    assert ham == np.count_nonzero(a != b) and input_distance(a, a, "l1") == 0


# --- readers ---------------------------------------------------------------------------------
toml_keys = st.sampled_from(["confidence", "seed", "runner", "address", "explore_runs",
                             "confirm_runs", "algorithm", "blackbox", "params", "claim", "expect",
                             "pairs", "input_distance", "tests", "against", "name", "bogus"])
toml_values = st.sampled_from(['1', '0', '-1', '1e308', 'nan', 'inf', '"dp-rr"', '"local"',
                               '"ray"', '"x:y"', '""', '{ epsilon = 1.0 }', '{ variant = "bv-rr-eps" }',
                               '[1, 2]', 'true', '"l1:1"', '"pass"', '"violation"', '0.95',
                               '{ epsilon = -1 }', '"../../etc/passwd"', "'\\u0000'"])


@SETTINGS
@given(defaults=st.lists(st.tuples(toml_keys, toml_values), max_size=4),
       audits=st.lists(st.lists(st.tuples(toml_keys, toml_values), max_size=5), max_size=3))
def test_config_reader_accepts_or_lists_problems(tmp_path_factory, defaults, audits):
    lines = ["[defaults]"] + [f"{k} = {v}" for k, v in dict(defaults).items()]
    for a in audits:
        lines += ["[[audit]]"] + [f"{k} = {v}" for k, v in dict(a).items()]
    text = "\n".join(lines) + "\n"
    try:
        cfg = parse_config(text, "fuzz.toml", base_dir=tmp_path_factory.getbasetemp())
    except PrivauditError as exc:
        assert str(exc).strip()
        return
    assert 0 < cfg.confidence < 1 and all(a.confirm_runs >= 1 for a in cfg.audits)


@SETTINGS
@given(text=st.text(max_size=200))
def test_config_reader_on_arbitrary_text(text):
    try:
        parse_config(text, "fuzz.toml")
    except PrivauditError:
        pass


@SETTINGS
@given(rec=json_values)
def test_journal_record_check_never_raises(rec):
    problem = record_problem(rec)
    assert problem is None or isinstance(problem, str)


@SETTINGS
@given(lines=st.lists(json_values.map(json.dumps) | st.text(max_size=30), max_size=6))
def test_journal_reader_loads_or_refuses(tmp_path_factory, lines):
    d = tmp_path_factory.mktemp("j")
    text = "\n".join(lines) + "\n"
    (d / "journal.jsonl").write_text(text, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            j = Journal(d)
        except PrivauditError:
            return
    j.close()
    assert j.loaded + j.torn <= len(text.encode().splitlines()) + 1


@SETTINGS
@given(d=json_values)
def test_result_reader_loads_or_refuses(d):
    try:
        text = json.dumps(d)
    except ValueError:
        return
    with pytest.raises(PrivauditError):
        load_result_text(text)   # random JSON is never a valid result


def test_bin_index_uses_its_table_on_an_exploration_grid(monkeypatch):
    """On the grid exploration builds (score_grid of a learning sample) the lookup table is used:
    the binary search only sees the cell starts and the few values outside the table's window,
    never the whole array (else the speed-up would be gone while the results stay equal)."""
    rng = np.random.default_rng(0)
    e = np.array(score_grid(rng.laplace(0, 10, 20_000)))
    v = rng.laplace(0, 10, 1 << 18)
    sizes = []
    real = np.searchsorted

    def spy(a, x, *args, **kw):
        sizes.append(np.size(x))
        return real(a, x, *args, **kw)

    monkeypatch.setattr(np, "searchsorted", spy)
    got = bin_index(e, v)
    monkeypatch.undo()
    assert np.array_equal(got, np.searchsorted(e, v, side="right"))
    assert sizes and max(sizes) < v.size // 4
