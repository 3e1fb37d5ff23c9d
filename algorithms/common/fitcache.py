"""Fits made once per dataset (planted bugs BV-API-1/2/3 of Dagan & Feldman spec 5.6).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from audit.types import Dataset


def data_seed(data: Dataset) -> int:
    """A seed computed from the dataset's bytes (used ONLY by planted bug BV-API-2/BV-API-1)."""
    h = hashlib.sha256(data.X.tobytes() + data.y.tobytes()).digest()
    return int.from_bytes(h[:8], "little")


# Planted bug BV-API-3 (spec 5.6 / 5.3): a fit (the subsample I and the EM hypothesis h) made
# once per dataset and reused by every later call -- the auditor's re-fits included -- as if
# `fit(S)` had been called once and cached. The one draw is seeded from the dataset's content
# (and a fixed salt), so every process, Ray worker and rerun reuses the *same* fit: counts stay
# identical across runners and seeds. (BV-API-2 differs: there every coin, the final flip
# included, is a function of S; here only the fit is, and the flip coins stay fresh.) The memo
# only saves recomputing it; least recently used entries are dropped.
_FIT_CACHE: OrderedDict = OrderedDict()


FIT_CACHE_SIZE = 4096


_FIT_SALT = 0x5EED_A913


def cached_fit(token: str, data: Dataset, draw: Callable[[np.random.Generator], Any]) -> Any:
    """BV-API-3: ``draw(rng)`` made once for ``(token, data)`` and reused after.

    ``token`` names the learner's configuration; ``data`` is keyed on its content, and the
    draw's generator is seeded from that content, so equal data always gets the same fit back.
    """
    seed = data_seed(data)
    key = (token, seed, data.X.shape)
    if key in _FIT_CACHE:
        _FIT_CACHE.move_to_end(key)
        return _FIT_CACHE[key]
    fit = _FIT_CACHE[key] = draw(np.random.default_rng(np.random.SeedSequence([seed, _FIT_SALT])))
    while len(_FIT_CACHE) > FIT_CACHE_SIZE:
        _FIT_CACHE.popitem(last=False)
    return fit
