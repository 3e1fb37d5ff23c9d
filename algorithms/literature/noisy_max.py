"""Report noisy max with Laplace or exponential noise, releasing the index or the value.

References
----------
.. [DR14] Dwork & Roth (2014), Sec. 3.3 (report noisy max) and Claim 3.9.
.. [DWWZK18] Ding et al., "Detecting violations of differential privacy" (StatDP), ACM CCS 2018,
   Sec. 6.1: noisy max with Lap(2/eps) or Exp(2/eps) noise returning the argmax (correct) or the
   max value (incorrect).
.. [BSBV21] DP-Sniper, IEEE S&P 2021, Table 2: NoisyMax{Laplace,Exponential}{Index,Value},
   true losses 0.1, 0.1, 0.25 (= n eps/2 at n = 5) and infinity.
"""

from __future__ import annotations

import math

import numpy as np

from audit import validate
from audit.neighbours import InputDistance
from audit.types import Claim

from ..registry import register
from .base import EPSILON0, LiteratureMechanism, epsilon as _eps
from .patterns import statdp_patterns, with_witness

# DP-Sniper Table 2 witnesses (a -> b) per (noise, release)
_WITNESS = {
    ("laplace", "index"): ([1.0] * 5, [0.0, 2.0, 2.0, 2.0, 2.0]),
    ("exponential", "index"): ([2.0, 0.0, 0.0, 0.0, 0.0], [1.0] * 5),
    ("laplace", "value"): ([1.0] * 5, [2.0] * 5),
    ("exponential", "value"): ([1.0] * 5, [2.0] * 5),
}


class ReportNoisyMax(LiteratureMechanism):
    """Report noisy max [DR14 Sec. 3.3] over n sensitivity-1 queries (answers may all move by 1).

    Each answer gets independent noise of scale 2/eps — Laplace or exponential (one-sided) — and
    the mechanism releases the index of the largest noisy answer (``release="index"``: eps-DP,
    since it is the exponential mechanism's equivalent for Gumbel/exponential noise and DR14 Claim
    3.9's argument with the factor 2 for non-monotone queries) or its noisy value
    (``release="value"``: not eps-DP. With Laplace noise the max of n shifted densities loses n
    eps/2, 0.25 at n = 5; with exponential noise the value's support ``[max q, inf)`` moves with
    the input, so the loss is infinite). Claim: eps-DP, replace-one, model scope.
    """

    input_distance = InputDistance("linf", 1)   # every query answer moves by at most 1 (StatDP/DP-Sniper patterns)

    true_reference = "StatDP Sec. 6.1; DP-Sniper Table 2 (index: eps; Laplace value: n eps/2; exponential value: inf)"

    def __init__(self, noise: str, release: str, epsilon: float = EPSILON0, n: int = 5) -> None:
        self.noise = validate.choice("noise", noise, ("laplace", "exponential"))
        self.release = validate.choice("release", release, ("index", "value"))
        self.epsilon = _eps(epsilon)
        self.n = validate.count("n", n, minimum=2)
        self.name = f"lit-rnm-{'laplace' if noise == 'laplace' else 'exp'}-{release}"
        if release == "index":
            true = self.epsilon
        else:
            true = self.n * self.epsilon / 2.0 if noise == "laplace" else math.inf
        pats = statdp_patterns(self.n)
        pairs = with_witness(_WITNESS[(noise, release)], pats) if self.n == 5 else pats
        super().__init__(Claim(self.epsilon), true, pairs, {"epsilon": self.epsilon, "n": self.n})

    def sample(self, inp, runs, rng):
        q = self.vector(inp, self.n)
        scale = 2.0 / self.epsilon
        noise = (rng.laplace(0.0, scale, size=(runs, self.n)) if self.noise == "laplace"
                 else rng.exponential(scale, size=(runs, self.n)))
        noisy = q + noise
        if self.release == "index":
            return np.argmax(noisy, axis=1).astype(np.int64)
        return noisy.max(axis=1)


def _register(noise: str, release: str, paper_row: str) -> None:
    name = f"lit-rnm-{'laplace' if noise == 'laplace' else 'exp'}-{release}"
    private = release == "index"

    @register(name, kind="mechanism", paper="Ding et al. (CCS 2018, StatDP); Dwork & Roth (2014)",
              section=f"StatDP Sec. 6.1; DP-Sniper Table 2 '{paper_row}'",
              summary=(f"report noisy max, {noise} noise of scale 2/eps, releases the {release}; "
                       + ("eps-DP" if private else "NOT eps-DP as published")),
              expect=None if private else {"correct": "violation"})
    def factory(epsilon: float = EPSILON0, n: int = 5) -> ReportNoisyMax:
        return ReportNoisyMax(noise, release, epsilon, n)


_register("laplace", "index", "NoisyMaxLaplace (index)")
_register("exponential", "index", "NoisyMaxExponential (index)")
_register("laplace", "value", "NoisyMaxLaplace (value)")
_register("exponential", "value", "NoisyMaxExponential (value)")
