"""Monte Carlo helpers shared by the learner tests.

`covers` checks exact probabilities against two-sided Clopper–Pearson intervals at level
``2 * A`` per probability; each test file states how many such checks it makes, so its
family-wise false-alarm rate is at most that number times ``2 * A``.
"""

import numpy as np

from audit.stats import cp_lower, cp_upper

A = 1e-7


def covers(counts, runs, p) -> bool:
    """Do the Clopper–Pearson intervals of `counts` out of `runs` contain the exact `p`?"""
    counts, p = np.asarray(counts, float), np.asarray(p, float)
    return bool(np.all((cp_lower(counts, runs, A) <= p) & (p <= cp_upper(counts, runs, A))))


def label_ones(learner, data, queries, runs, seed):
    """How many of `runs` runs predicted 1 at each query (checking the output contract)."""
    out = learner.predict(data, queries, runs, np.random.default_rng(seed))
    assert out.shape == (runs, len(queries)) and out.dtype == np.int8
    return out.sum(axis=0)
