"""Start-up cost: a command imports only what every command needs.

`privaudit --version`, `privaudit ci` and every other command start by importing the CLI and, through
it, the audit core and the registry. Two heavy dependencies are needed only on rare paths and are
imported there: scipy.optimize (~0.3 s on this machine kind; the analytic Gaussian's calibration
and logistic models with many features) and jsonschema (~0.1 s; reading a journal back). This
checks, in a fresh interpreter, that importing the CLI loads neither (not a timing: a module list).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import algorithms
from algorithms.literature.basic import analytic_delta
from audit.learned import NEWTON_MAX_FEATURES, fit_logistic

HEAVY = ("scipy.optimize", "jsonschema")


def _loaded_after(code: str) -> set[str]:
    probe = (f"{code}\nimport sys\n"
             f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_importing_the_cli_and_the_registry_loads_no_rarely_needed_dependency():
    assert _loaded_after("import privaudit.cli, algorithms, attacks, reports") == set()


@pytest.mark.parametrize("code, loads", [
    # the rare paths still work, and load what they need when they need it
    ("from algorithms.literature.basic import analytic_sigma; analytic_sigma(1.0, 1e-5)",
     {"scipy.optimize"}),
    ("from audit.journal_check import record_problem; record_problem({})", {"jsonschema"}),
])
def test_rare_paths_import_their_dependency_on_first_use(code, loads):
    assert _loaded_after(code) == loads


def test_the_calibration_needing_scipy_optimize_is_still_right():
    # the analytic Gaussian (Balle & Wang 2018, Alg. 1): the smallest sigma whose delta(eps) is
    # the claimed delta; a 1 % smaller sigma must exceed it
    g = algorithms.get("lit-gaussian-analytic")
    assert analytic_delta(g.sigma, g.epsilon) == pytest.approx(g.delta, rel=1e-6)
    assert analytic_delta(0.99 * g.sigma, g.epsilon) > 1.05 * g.delta


def test_a_logistic_model_with_many_features_still_fits():
    # beyond NEWTON_MAX_FEATURES the fit runs L-BFGS (scipy.optimize, imported on first use):
    # the one informative coordinate of 80 must carry the largest weight, with the right sign
    rng = np.random.default_rng(0)
    m = NEWTON_MAX_FEATURES + 16
    fa = rng.normal(size=(4000, m))
    fa[:, 3] += 1.0
    fb = rng.normal(size=(4000, m))
    w = fit_logistic(fa, fb)
    assert w is not None and int(np.argmax(np.abs(w))) == 3 and w[3] == 1.0
