"""RAPPOR and one-time RAPPOR (Erlingsson, Pihur & Korolova, ACM CCS 2014).

A client's value v is hashed into a Bloom filter B of k bits (h bits set). The permanent
randomized response (PRR) keeps each bit with probability 1 - f and otherwise sets it to 1 or 0
with probability f/2 each; the instantaneous randomized response (IRR) reports 1 with probability
q where the PRR bit is 1 and p where it is 0. One-time RAPPOR reports the PRR bits directly.

References
----------
.. [EPK14] Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: randomized aggregatable
   privacy-preserving ordinal response", CCS 2014: Sec. 3 (the algorithm), Sec. 3.1 / Thm 1
   (PRR: eps_inf = 2h ln((1 - f/2)/(f/2))), Sec. 3.1 (one report: eps_1 = h ln(q*(1-p*) /
   (p*(1-q*))), q* = (1 - f/2) q + (f/2) p, p* = (f/2) q + (1 - f/2) p).
.. [DWWZK18] StatDP (CCS 2018) Sec. 6 and DP-Sniper (S&P 2021) benchmark both.

The hash is a fixed stand-in (value v sets bits ``(v h + j) mod k``, j < h): privacy does not
depend on which hash is used, only on how many bits two values' filters differ in (2h here for
the default pair 0 -> 1, the worst case).
"""

from __future__ import annotations

import math

import numpy as np

from audit import validate
from audit.errors import PrivauditError
from audit.neighbours import InputDistance
from audit.types import Claim

from ..registry import register
from .base import LiteratureMechanism


class Rappor(LiteratureMechanism):
    """RAPPOR [EPK14 Sec. 3] on one client value; ``one_time=True``: one-time RAPPOR (PRR only).

    Claim, replace-one (the client's value changes), model scope: one report of RAPPOR is
    eps_1-DP (PRR drawn afresh for this report: a new client), one-time RAPPOR is eps_inf-DP. Both
    are exact (tight) on values whose filters share no bit. Output: (runs, k) int8 bits.
    """

    input_distance = InputDistance("hamming", 1)   # one client's value changes

    true_reference = "EPK14 Sec. 3.1 (tight for disjoint Bloom filters)"

    def __init__(self, one_time: bool = False, k: int = 8, h: int = 2, f: float = 0.5,
                 p: float = 0.5, q: float = 0.75) -> None:
        self.k = validate.count("k", k, maximum=30)
        self.h = validate.count("h", h, maximum=self.k)
        self.f = validate.probability("f", f, allow_zero=False)
        self.p = validate.probability("p", p)
        self.q = validate.probability("q", q, allow_one=True)
        if self.q <= self.p:
            raise PrivauditError(f"RAPPOR needs q > p, got q = {q}, p = {p}")
        self.one_time = bool(one_time)
        self.name = "lit-rappor-onetime" if one_time else "lit-rappor"
        eps_inf = 2 * self.h * math.log((1 - self.f / 2) / (self.f / 2))
        qs = (1 - self.f / 2) * self.q + self.f / 2 * self.p
        ps = self.f / 2 * self.q + (1 - self.f / 2) * self.p
        eps_1 = self.h * math.log(qs * (1 - ps) / (ps * (1 - qs)))
        true = eps_inf if one_time else eps_1
        super().__init__(Claim(true), true, [([0.0], [1.0]), ([0.0], [2.0])],
                         {"k": self.k, "h": self.h, "f": self.f, "p": self.p, "q": self.q})

    def bloom(self, v: int) -> np.ndarray:
        b = np.zeros(self.k, dtype=bool)
        b[[(v * self.h + j) % self.k for j in range(self.h)]] = True
        return b

    def sample(self, inp, runs, rng):
        x = self.vector(inp, 1)[0]
        if x != round(x) or x < 0:
            raise PrivauditError(f"{self.name}: input must be a non-negative integer value, got {x}")
        b = self.bloom(int(x))
        u = rng.random((runs, self.k))
        # PRR: with prob f/2 -> 1, f/2 -> 0, 1 - f -> B
        prr = np.where(u < self.f / 2, True, np.where(u < self.f, False, b))
        if self.one_time:
            return prr.astype(np.int8)
        return (rng.random((runs, self.k)) < np.where(prr, self.q, self.p)).astype(np.int8)


@register("lit-rappor", kind="mechanism", paper="Erlingsson, Pihur & Korolova (CCS 2014)",
          section="Sec. 3 (PRR + IRR), Sec. 3.1 (eps_1 of one report)",
          summary="RAPPOR, one report (Bloom filter, PRR, IRR); eps_1-DP, tight")
def lit_rappor(k: int = 8, h: int = 2, f: float = 0.5, p: float = 0.5, q: float = 0.75) -> Rappor:
    return Rappor(False, k, h, f, p, q)


@register("lit-rappor-onetime", kind="mechanism", paper="Erlingsson, Pihur & Korolova (CCS 2014)",
          section="Sec. 3.1 (PRR only: eps_inf = 2h ln((1-f/2)/(f/2)))",
          summary="one-time RAPPOR: the permanent randomized response bits; eps_inf-DP, tight")
def lit_rappor_onetime(k: int = 8, h: int = 2, f: float = 0.5) -> Rappor:
    return Rappor(True, k, h, f)
