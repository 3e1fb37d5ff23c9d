"""Nondeterministic black boxes (randomness outside `rng`) are detected and reported."""

from __future__ import annotations

import numpy as np

from audit import Claim, audit
from audit.determinism import nondeterminism


class FromRng:
    name = "from-rng"
    claim = Claim(1.0)
    pairs = [(np.array([0]), np.array([1]))]

    def sample(self, inp, runs, rng):
        return rng.integers(0, 2, size=runs)


class FromGlobal(FromRng):
    name = "from-global"

    def sample(self, inp, runs, rng):
        return np.random.randint(0, 2, size=runs)   # the bug: the global generator


class DeclaredIrreproducible(FromGlobal):
    reproducible = False


def test_check_tells_rng_use_from_global_use():
    assert nondeterminism(FromRng(), np.array([0]), None, seed=3) is None
    note = nondeterminism(FromGlobal(), np.array([0]), None, seed=3)
    # two calls of 256 fair bits agree by chance with probability 2^-256
    assert note is not None and note.startswith("nondeterministic")


def test_audit_reports_it_in_notes_and_runner():
    r = audit(FromGlobal(), explore_runs=2000, confirm_runs=2000, seed=0)
    assert any(n.startswith("nondeterministic") for n in r.notes)
    assert r.runner.get("reproducible") is False
    ok = audit(FromRng(), explore_runs=2000, confirm_runs=2000, seed=0)
    assert not any(n.startswith("nondeterministic") for n in ok.notes)
    declared = audit(DeclaredIrreproducible(), explore_runs=2000, confirm_runs=2000, seed=0)
    assert not any(n.startswith("nondeterministic") for n in declared.notes)   # said already
