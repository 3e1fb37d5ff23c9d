"""Classic differential-privacy building blocks as vectorised `Mechanism` black boxes.

Every mechanism draws all its randomness for ``runs`` runs in one numpy call. Each class states
its claim; each planted-bug variant says which bug it plants. Default adversarial inputs are in
the ``pairs`` attribute, so ``audit(mech, mech.pairs)`` is meaningful out of the box.

References
----------
.. [W65] S. L. Warner, "Randomized response", JASA 60 (1965).
.. [DMNS06] C. Dwork, F. McSherry, K. Nissim, A. Smith, "Calibrating noise to sensitivity in
   private data analysis", TCC 2006 (the Laplace mechanism).
.. [DR14] C. Dwork, A. Roth, "The algorithmic foundations of differential privacy" (2014),
   Thm 3.6 (Laplace), Thm A.1 (Gaussian), Thm 3.10 (exponential mechanism).
.. [MT07] F. McSherry, K. Talwar, "Mechanism design via differential privacy", FOCS 2007.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from audit.errors import PrivauditError
from audit.neighbours import InputDistance
from audit.types import Claim

from ..common.checks import check_positive
from ..common.sampling import em_log_weights
from ..common.variants import Row, describe, row_of
from ..registry import register


def _as_vector(inp, name: str) -> np.ndarray:
    try:
        v = np.asarray(inp, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise PrivauditError(f"{name}: input must be numeric, got {type(inp).__name__}") from None
    if v.size == 0 or not np.all(np.isfinite(v)):
        raise PrivauditError(f"{name}: input must be a non-empty finite array")
    return v


# ---------------------------------------------------------------------------------------------
# The variants of each mechanism: one row per variant (algorithms/common/variants.py), the
# constant a planted bug changes written as a field whose default is the published value.
@dataclass(frozen=True)
class RRRow(Row):
    eps_factor: float = 1.0       # runs with eps_factor * eps while claiming eps
    debug_leak: bool = False      # a debug path releases 2 + bit in a fraction flaw_rate of runs


RR_TABLE = {
    "correct": RRRow("keeps the bit with probability e^eps/(1+e^eps)"),
    "bv-rr-eps": RRRow("mis-stated epsilon: actually runs with 2*eps", eps_factor=2.0),
    "bv-rr-det": RRRow("debug path reveals the bit in a fraction flaw_rate of runs", debug_leak=True),
}


@dataclass(frozen=True)
class LaplaceRow(Row):
    scale_divisor: float = 1.0    # noise scale sensitivity / (epsilon * scale_divisor)
    clamp_hi: float = 1.0         # records clamped to [0, clamp_hi]


LAPLACE_TABLE = {
    "correct": LaplaceRow("noise scale sensitivity/epsilon"),
    "bv-laplace-scale": LaplaceRow("noise scale halved (true loss 2*eps)", scale_divisor=2.0),
    "bv-laplace-sensitivity": LaplaceRow("records clamped to [0,2] but noise calibrated to 1",
                                         clamp_hi=2.0),
}


@dataclass(frozen=True)
class GaussRow(Row):
    sigma_divisor: float = 1.0    # sigma of DR14 Thm A.1 divided by this


GAUSS_TABLE = {
    "correct": GaussRow("sigma from DR14 Thm A.1"),
    "bv-gauss-sigma": GaussRow("sigma divided by 4", sigma_divisor=4.0),
}


@dataclass(frozen=True)
class EMRow(Row):
    divisor: float = 2.0          # weights exp(eps u / (divisor sensitivity))
    argmax: bool = False          # argmax u instead of sampling


EM_TABLE = {
    "correct": EMRow("weights exp(eps u / (2 sensitivity))"),
    "bv-em-half": EMRow("weights exp(eps u / sensitivity): the 1/2 is missing", divisor=1.0),
    "bv-em-argmax": EMRow("argmax instead of sampling (deterministic)", argmax=True),
}


@dataclass
class RandomizedResponse:
    """Randomized response [W65]: report the input bit with probability e^eps / (1 + e^eps).

    Claim: epsilon-DP (pure) for one record (replace-one: the bit changes), model scope.
    Input: an array holding one bit; output: (runs,) int8 bits.

    Variants: the rows of `RR_TABLE` (a mis-stated epsilon; a debug path that leaks the bit in
    one run out of ``1/flaw_rate``: infinite loss, small probability).
    """

    epsilon: float = 1.0
    variant: str = "correct"
    flaw_rate: float = 0.01
    name: str = "dp-rr"
    pairs: list = field(default_factory=lambda: [(np.array([0]), np.array([1]))])

    def __post_init__(self) -> None:
        self.epsilon = check_positive("epsilon", self.epsilon)
        self.claim = Claim(self.epsilon, 0.0, "replace-one", "model")
        self.input_distance = InputDistance("hamming", 1)   # one record (the bit) changes
        self.row = row_of(RR_TABLE, self.variant, self.name)
        true_eps = self.row.eps_factor * self.epsilon
        self.p_keep = math.exp(true_eps) / (1.0 + math.exp(true_eps))

    def sample(self, inp, runs: int, rng: np.random.Generator) -> np.ndarray:
        v = np.asarray(inp).reshape(-1)
        if v.size != 1 or v[0] not in (0, 1):
            raise PrivauditError(f"{self.name}: input must be one bit (0 or 1), got {np.asarray(inp).tolist()}")
        bit = np.int8(v[0])
        flip = rng.random(runs) >= self.p_keep
        out = np.bitwise_xor(bit, flip.view(np.int8))
        if self.row.debug_leak:
            # the leak: a run that takes the debug path outputs 2 + bit, a code that exists
            # only under one input
            leak = rng.random(runs) < self.flaw_rate
            out = np.where(leak, 2 + bit, out).astype(np.int8)
        return out

    def exact(self, inp) -> dict:
        """Exact output distribution {code: probability}."""
        bit = int(np.asarray(inp).reshape(-1)[0])
        leak = self.flaw_rate if self.row.debug_leak else 0.0
        return {bit: (1 - leak) * self.p_keep, 1 - bit: (1 - leak) * (1 - self.p_keep),
                **({2 + bit: leak} if leak else {})}


@register("dp-rr", kind="mechanism", paper="Warner (1965); Dwork & Roth (2014)",
          section="DR14 Sec. 3.2 (randomized response)",
          summary="randomized response on one bit; epsilon-DP",
          variants=describe(RR_TABLE))
def randomized_response(epsilon: float = 1.0, variant: str = "correct",
                        flaw_rate: float = 0.01) -> RandomizedResponse:
    return RandomizedResponse(epsilon=epsilon, variant=variant, flaw_rate=flaw_rate)


# ---------------------------------------------------------------------------------------------
@dataclass
class LaplaceMechanism:
    """Laplace mechanism [DMNS06; DR14 Thm 3.6] on the sum query, records in [0, 1].

    Output ``sum(inp) + Lap(sensitivity / epsilon)``. Claim: epsilon-DP, replace-one, model scope
    (changing one record moves the sum by at most `sensitivity` = 1).

    Variants: the rows of `LAPLACE_TABLE` (half the noise, true loss 2 eps; records clamped to
    [0, 2] while the noise is still calibrated to sensitivity 1).
    """

    epsilon: float = 1.0
    sensitivity: float = 1.0
    variant: str = "correct"
    name: str = "dp-laplace"
    pairs: list = field(default_factory=lambda: [(np.array([0.0]), np.array([1.0]))])

    def __post_init__(self) -> None:
        self.epsilon = check_positive("epsilon", self.epsilon)
        self.sensitivity = check_positive("sensitivity", self.sensitivity)
        self.claim = Claim(self.epsilon, 0.0, "replace-one", "model")
        self.input_distance = InputDistance("hamming", 1)   # one record replaced
        self.row = row_of(LAPLACE_TABLE, self.variant, self.name)
        self.scale = self.sensitivity / self.epsilon / self.row.scale_divisor
        if self.row.clamp_hi != 1.0:          # the design: records at both ends of the clamp
            self.pairs = [(np.array([0.0]), np.array([self.row.clamp_hi]))]

    def sample(self, inp, runs: int, rng: np.random.Generator) -> np.ndarray:
        v = _as_vector(inp, self.name)
        value = np.clip(v, 0.0, self.row.clamp_hi).sum()
        return value + rng.laplace(0.0, self.scale, size=runs)


@register("dp-laplace", kind="mechanism", paper="Dwork, McSherry, Nissim & Smith (2006)",
          section="DR14 Thm 3.6 (Laplace mechanism)",
          summary="sum query of records in [0,1] plus Laplace(1/eps) noise; epsilon-DP",
          variants=describe(LAPLACE_TABLE))
def laplace(epsilon: float = 1.0, sensitivity: float = 1.0, variant: str = "correct") -> LaplaceMechanism:
    return LaplaceMechanism(epsilon=epsilon, sensitivity=sensitivity, variant=variant)


# ---------------------------------------------------------------------------------------------
@dataclass
class GaussianMechanism:
    """Gaussian mechanism [DR14 Thm A.1] on the sum query, records in [0, 1].

    Output ``sum(inp) + N(0, sigma^2)`` with ``sigma = sensitivity sqrt(2 ln(1.25/delta)) / eps``.
    Claim: (epsilon, delta)-DP for epsilon < 1, replace-one, model scope.

    Variants: the rows of `GAUSS_TABLE` (sigma divided by 4, the classic "forgot the square
    root" magnitude slip).
    """

    epsilon: float = 0.5
    delta: float = 1e-5
    sensitivity: float = 1.0
    variant: str = "correct"
    name: str = "dp-gaussian"
    pairs: list = field(default_factory=lambda: [(np.array([0.0]), np.array([1.0]))])

    def __post_init__(self) -> None:
        self.epsilon = check_positive("epsilon", self.epsilon)
        if not 0.0 < float(self.delta) < 1.0:
            raise PrivauditError(f"{self.name}: delta must be in (0, 1), got {self.delta}")
        if self.epsilon >= 1.0:
            raise PrivauditError(f"{self.name}: the classic calibration (DR14 Thm A.1) needs epsilon < 1, "
                                 f"got {self.epsilon}")
        self.claim = Claim(self.epsilon, float(self.delta), "replace-one", "model")
        self.input_distance = InputDistance("hamming", 1)   # one record replaced
        self.row = row_of(GAUSS_TABLE, self.variant, self.name)
        self.sigma = (self.sensitivity * math.sqrt(2 * math.log(1.25 / self.delta)) / self.epsilon
                      / self.row.sigma_divisor)

    def sample(self, inp, runs: int, rng: np.random.Generator) -> np.ndarray:
        v = _as_vector(inp, self.name)
        return np.clip(v, 0.0, 1.0).sum() + rng.normal(0.0, self.sigma, size=runs)


@register("dp-gaussian", kind="mechanism", paper="Dwork & Roth (2014)",
          section="DR14 Thm A.1 (Gaussian mechanism)",
          summary="sum query plus N(0, sigma^2), sigma = sqrt(2 ln(1.25/delta))/eps; (eps, delta)-DP",
          variants=describe(GAUSS_TABLE))
def gaussian(epsilon: float = 0.5, delta: float = 1e-5, sensitivity: float = 1.0,
             variant: str = "correct") -> GaussianMechanism:
    return GaussianMechanism(epsilon=epsilon, delta=delta, sensitivity=sensitivity, variant=variant)


# ---------------------------------------------------------------------------------------------
def em_worst_pair(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Utility vectors ``u = (0, 1, ..., 1)`` and ``u' = (1, 0, ..., 0)``: neighbours (every
    score moves by at most 1) on which candidate 0's loss tends to eps as k grows."""
    u = np.ones(k)
    u[0] = 0.0
    u2 = np.zeros(k)
    u2[0] = 1.0
    return u, u2


@dataclass
class ExponentialMechanism:
    """Exponential mechanism [MT07; DR14 Thm 3.10] over k candidates with given utilities.

    Input: the utility vector ``u`` (sensitivity `sensitivity`: neighbouring inputs move each
    score by at most that much). Output: candidate r with probability proportional to
    ``exp(eps u_r / (2 sensitivity))``, sampled by Gumbel-max in float64 with the max subtracted.
    Claim: epsilon-DP, replace-one, model scope.

    The log-weights are `algorithms.common.sampling.em_log_weights`; the draw stays Gumbel-max
    (one Gumbel per run and candidate), not the inverse-CDF `em_sample` of the learners: the two
    samplers consume the generator differently, so merging them would change every seeded draw.

    Variants: the rows of `EM_TABLE` (the missing 1/2, true loss up to 2 eps; argmax instead of
    sampling, ties to the lowest index: deterministic, infinite loss).
    """

    epsilon: float = 1.0
    k: int = 20
    sensitivity: float = 1.0
    variant: str = "correct"
    name: str = "dp-em"
    pairs: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.epsilon = check_positive("epsilon", self.epsilon)
        if int(self.k) < 2:
            raise PrivauditError(f"{self.name}: k must be >= 2, got {self.k}")
        self.k = int(self.k)
        self.row = row_of(EM_TABLE, self.variant, self.name)
        self.claim = Claim(self.epsilon, 0.0, "replace-one", "model")
        # neighbouring inputs move every score by at most the sensitivity
        self.input_distance = InputDistance("linf", float(self.sensitivity))
        if not self.pairs:
            u, u2 = em_worst_pair(self.k)
            self.pairs = [(u * float(self.sensitivity), u2 * float(self.sensitivity))]

    def probabilities(self, inp) -> np.ndarray:
        w = np.exp(em_log_weights(_as_vector(inp, self.name), self.epsilon, self.sensitivity,
                                  self.row.divisor))
        if self.row.argmax:
            w = np.zeros_like(w)
            w[int(np.argmax(_as_vector(inp, self.name)))] = 1.0
        return w / w.sum()

    def sample(self, inp, runs: int, rng: np.random.Generator) -> np.ndarray:
        u = _as_vector(inp, self.name)
        if self.row.argmax:
            return np.full(runs, int(np.argmax(u)), dtype=np.int64)
        logits = em_log_weights(u, self.epsilon, self.sensitivity, self.row.divisor)
        gumbel = rng.gumbel(size=(runs, u.size))
        gumbel += logits        # in place: no second (runs, k) array
        return np.argmax(gumbel, axis=1)

    def exact(self, inp) -> dict:
        return {i: float(p) for i, p in enumerate(self.probabilities(inp)) if p > 0}


@register("dp-em", kind="mechanism", paper="McSherry & Talwar (2007); Dwork & Roth (2014)",
          section="DR14 Thm 3.10 (exponential mechanism)",
          summary="exponential mechanism over k candidates, Gumbel-max; epsilon-DP",
          variants=describe(EM_TABLE))
def exponential(epsilon: float = 1.0, k: int = 20, sensitivity: float = 1.0,
                variant: str = "correct") -> ExponentialMechanism:
    return ExponentialMechanism(epsilon=epsilon, k=k, sensitivity=sensitivity, variant=variant)
