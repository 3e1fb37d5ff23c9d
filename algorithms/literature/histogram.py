"""Noisy histogram (correct, and with the scale bug) and noisy prefix sums.

References
----------
.. [DMNS06] Dwork, McSherry, Nissim & Smith, TCC 2006 (histogram queries have l1-sensitivity 1).
.. [DWWZK18] Ding, Wang, Wang, Zhang & Kifer, "Detecting violations of differential privacy"
   (StatDP), ACM CCS 2018, Sec. 6: "Histogram" and the incorrect "Histogram with Lap(eps)".
.. [BSBV21] Bichsel, Steffen, Bogunovic & Vechev, "DP-Sniper", IEEE S&P 2021, Table 2
   (HistogramLaplace, HistogramEps; PrefixSum).
"""

from __future__ import annotations

import numpy as np

from audit import validate
from audit.neighbours import InputDistance
from audit.types import Claim

from ..registry import register
from .base import EPSILON0, LiteratureMechanism, epsilon as _eps, laplace_noise
from .patterns import statdp_patterns, with_witness


class NoisyHistogram(LiteratureMechanism):
    """Noisy histogram: every bin count plus independent Laplace noise [DMNS06].

    Input: the histogram (n counts); one record added or removed moves one count by 1 (l1
    sensitivity 1). Output: n floats. Claim: eps-DP, add-remove, model scope.

    ``scale_bug=False``: noise Lap(1/eps); true epsilon = eps.
    ``scale_bug=True`` (`lit-histogram-bug`, StatDP's incorrect "Histogram"): noise Lap(eps) instead
    of Lap(1/eps) — at eps = 0.1 the noise is 100 times too small; true epsilon = 1/eps = 10.

    The noise is drawn by `laplace_noise` (exactly Laplace, 2-3x faster than ``rng.laplace``).
    """

    input_distance = InputDistance("l1", 1)   # the answer vector moves by at most 1 in l1 (sensitivity 1)

    true_reference = "Lap(b) noise on an l1-sensitivity-1 query loses exactly 1/b"

    def __init__(self, epsilon: float = EPSILON0, n: int = 5, scale_bug: bool = False) -> None:
        self.epsilon = _eps(epsilon)
        self.n = validate.count("n", n)
        self.scale = self.epsilon if scale_bug else 1.0 / self.epsilon
        self.name = "lit-histogram-bug" if scale_bug else "lit-histogram"
        witness = ([2.0] + [1.0] * (self.n - 1), [1.0] * self.n)
        super().__init__(Claim(self.epsilon, 0.0, "add-remove"), 1.0 / self.scale,
                         with_witness(witness, statdp_patterns(self.n, l1=True)),
                         {"epsilon": self.epsilon, "n": self.n})

    def sample(self, inp, runs, rng):
        # the faster exact Laplace sampler: these draws are nearly all of the row's cost
        out = laplace_noise(rng, self.scale, (runs, self.n))
        out += self.vector(inp, self.n)   # in place: one (runs, n) array fewer per call
        return out


class PrefixSum(LiteratureMechanism):
    """Noisy prefix sums: ``y_i = sum_{j <= i} (x_j + Lap(1/eps))`` ([BSBV21]'s PrefixSum).

    Post-processing of the noisy histogram of x (n counts, l1 sensitivity 1), so eps-DP,
    add-remove, model scope; true epsilon = eps (the first coordinate alone is tight).
    """

    input_distance = InputDistance("l1", 1)   # the answer vector moves by at most 1 in l1 (sensitivity 1)

    name = "lit-prefix-sum"
    true_reference = "post-processing of the noisy histogram (eps, tight on y_1)"

    def __init__(self, epsilon: float = EPSILON0, n: int = 5) -> None:
        self.epsilon = _eps(epsilon)
        self.n = validate.count("n", n)
        super().__init__(Claim(self.epsilon, 0.0, "add-remove"), self.epsilon,
                         statdp_patterns(self.n, l1=True), {"epsilon": self.epsilon, "n": self.n})

    def sample(self, inp, runs, rng):
        noisy = self.vector(inp, self.n) + rng.laplace(0.0, 1.0 / self.epsilon, size=(runs, self.n))
        return np.cumsum(noisy, axis=1)


@register("lit-histogram", kind="mechanism", paper="Dwork, McSherry, Nissim & Smith (TCC 2006)",
          section="StatDP (CCS 2018) Sec. 6 'Histogram'; DP-Sniper Table 2 'HistogramLaplace'",
          summary="every bin count plus Lap(1/eps); eps-DP, add-remove")
def lit_histogram(epsilon: float = EPSILON0, n: int = 5) -> NoisyHistogram:
    return NoisyHistogram(epsilon, n, scale_bug=False)


@register("lit-histogram-bug", kind="mechanism", paper="Ding et al. (CCS 2018, StatDP)",
          section="Sec. 6 incorrect 'Histogram' (Lap(eps)); DP-Sniper Table 2 'HistogramEps'",
          summary="every bin plus Lap(eps) instead of Lap(1/eps): true eps = 1/eps = 10 at 0.1",
          expect={"correct": "violation"})
def lit_histogram_bug(epsilon: float = EPSILON0, n: int = 5) -> NoisyHistogram:
    return NoisyHistogram(epsilon, n, scale_bug=True)


@register("lit-prefix-sum", kind="mechanism", paper="Bichsel et al. (S&P 2021, DP-Sniper)",
          section="benchmark 'PrefixSum' (noisy prefix sums)",
          summary="cumulative sums of a Lap(1/eps) noisy histogram; eps-DP, add-remove")
def lit_prefix_sum(epsilon: float = EPSILON0, n: int = 5) -> PrefixSum:
    return PrefixSum(epsilon, n)
