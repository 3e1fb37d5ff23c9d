"""The stable histogram ``Hist`` (BLM-7, Lemma 15) and the GenericLearner (BLM-8, Lemma 16).

``Hist(u_1..u_k; eps_H, delta_H)`` (spec 3.7): counts ``c_u`` on the support only, noisy counts
``chat_u = c_u + Lap(2/eps_H)`` (scale 2 because a substitution moves two counts by 1), release
``L = {u : chat_u > tau}`` with ``tau = 1 + (2/eps_H) ln(1/delta_H)`` in count units, estimates
``a_u = chat_u / k``. Claim: (eps_H, delta_H)-DP under substitution of one list entry: buckets in
both supports cost eps_H/2 each, a bucket in one support only is released with probability
``0.5 exp(-(tau-1) / b) = delta_H / 2``.

The GenericLearner (spec 3.8) is the exponential mechanism ``Pr[h] ~ exp(-eps_G err_{S'}(h) / 2)``
over a finite, data-independent candidate list; it is the project's shared EM (`algorithms.dagan_feldman.em`,
`algorithms.common.sampling`), re-exported here with the BLM bug names.

Planted bugs (spec 6.6; ``variant=``: no noise, threshold skipped, ``log10`` in ``tau``, ``tau``
for scale ``1/eps_H``, Laplace scale ``1/eps_H``, noisy max), each flagged on the designs of
`hist_pairs`, and benign changes that must *not* be flagged (``tau`` with ``ln(2/delta)``;
without the ``+1``: delta_eff = ``0.5 delta e^(eps_H/2) <= delta`` for ``eps_H <= 1.38``) are the
rows of `HIST_TABLE`; the GenericLearner's (ERM; the missing 1/2) those of `GL_TABLE`.

References
----------
M. Bun, R. Livni and S. Moran, FOCS 2020: Lemma 15 (stable histograms, after [KKMN09, BNS16b]),
Lemma 16 (GenericLearner, [KLN+11, MT07]).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from audit.errors import PrivauditError
from audit.neighbours import InputDistance
from audit.types import Claim, Dataset

from ..common.checks import check_positive
from ..common.hypotheses import make_class
from ..common.variants import Row, describe, row_of
from ..dagan_feldman.em import (
    EM_TABLE,
    EM_VARIANTS,
    ExponentialMechanismLearner,
    em_pick,
    em_scale,
)
from ..registry import register

PAPER = "Bun, Livni & Moran, An equivalence between private classification and online prediction (FOCS 2020)"

# -- the variants: one row each (algorithms/common/variants.py) ---------------------------------
def tau_published(eps_H: float, delta: float) -> float:
    """``tau = 1 + (2/eps_H) ln(1/delta)`` (Lemma 15, count units)."""
    return 1.0 + (2.0 / eps_H) * math.log(1.0 / delta)


def tau_log10(eps_H: float, delta: float) -> float:
    """B3: ``log10`` instead of ``ln``."""
    return 1.0 + (2.0 / eps_H) * math.log10(1.0 / delta)


def tau_unit_scale(eps_H: float, delta: float) -> float:
    """B4: ``tau`` computed for Laplace scale ``1/eps_H``."""
    return 1.0 + math.log(1.0 / delta) / eps_H


def tau_ln2(eps_H: float, delta: float) -> float:
    """Benign: the conservative ``1 + (2/eps_H) ln(2/delta)``."""
    return 1.0 + (2.0 / eps_H) * math.log(2.0 / delta)


def tau_no_plus1(eps_H: float, delta: float) -> float:
    """Benign: ``(2/eps_H) ln(1/delta)`` without the ``+1``."""
    return (2.0 / eps_H) * math.log(1.0 / delta)


def threshold_release(support: np.ndarray, chat: np.ndarray, tau: float) -> np.ndarray:
    """The published release ``{u in support : chat_u > tau}``."""
    return support & (chat > tau)


def support_release(support: np.ndarray, chat: np.ndarray, tau: float) -> np.ndarray:
    """B2: the threshold test skipped, the whole noisy support released."""
    return support


def noisy_max_release(support: np.ndarray, chat: np.ndarray, tau: float) -> np.ndarray:
    """B13: the noisy max over the support instead of a threshold."""
    best = np.argmax(np.where(support, chat, -np.inf), axis=1)
    released = np.zeros(support.shape, dtype=bool)
    released[np.arange(support.shape[0]), best] = True
    return released & support


@dataclass(frozen=True)
class HistRow(Row):
    """A Hist variant: the Laplace scale, the threshold formula and the release rule."""

    scale_numerator: float = 2.0         # Laplace scale numerator / eps_H (0: no noise)
    tau: Callable[[float, float], float] = tau_published
    release: Callable = threshold_release
    thresholded: bool = True             # the release compares with tau (exact law: max(tau, extra))
    closed_form: bool = True             # items released independently (an exact law exists)


HIST_TABLE = {
    "correct": HistRow("Laplace(2/eps_H) on the support, release chat > tau = 1 + (2/eps_H) ln(1/delta)"),
    "b1": HistRow("BUG B1: no noise (deterministic threshold): a count crossing tau flips the release",
                  scale_numerator=0.0),
    "b2": HistRow("BUG B2: the threshold test is skipped: the whole noisy support is released",
                  release=support_release, thresholded=False),
    "b3": HistRow("BUG B3: tau uses log10(1/delta) instead of ln(1/delta): delta_eff = 0.5 "
                  "delta^(1/ln 10)", tau=tau_log10),
    "b4": HistRow("BUG B4: tau = 1 + ln(1/delta)/eps_H (computed for scale 1/eps_H): delta_eff = 0.5 "
                  "sqrt(delta)", tau=tau_unit_scale),
    "b5": HistRow("BUG B5: Laplace scale 1/eps_H (forgot that a substitution moves two counts): "
                  "realizes 2 eps_H", scale_numerator=1.0),
    "b13": HistRow("BUG B13: noisy max over the support instead of thresholding: a new item wins w.p. "
                   "~1/k", release=noisy_max_release, closed_form=False),
    "benign-ln2": HistRow("benign: conservative tau = 1 + (2/eps_H) ln(2/delta); must NOT be flagged",
                          tau=tau_ln2),
    "benign-no-plus1": HistRow("benign: tau without the +1 (delta_eff = 0.5 delta e^(eps_H/2) <= delta); "
                               "must NOT be flagged", tau=tau_no_plus1),
}
HIST_VARIANTS = describe(HIST_TABLE)
MAX_ITEM = 62          # released sets are int64 bitmasks over item ids 0..61


def hist_tau(eps_H: float, delta: float, variant: str = "correct") -> float:
    """The release threshold in count units (spec 3.7), per variant."""
    return HIST_TABLE[variant].tau(eps_H, delta)


def hist_scale(eps_H: float, variant: str = "correct") -> float:
    """The Laplace scale (0 for the noiseless bug B1)."""
    return HIST_TABLE[variant].scale_numerator / eps_H


def hist_release(counts: np.ndarray, eps_H: float, delta: float, variant: str,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Run Hist on many count vectors at once.

    Parameters
    ----------
    counts : (r, U) int
        Item counts of r independent runs (0 = not in that run's support).

    Returns
    -------
    released : (r, U) bool, chat : (r, U) float64 (noisy counts; 0 off the support).
    """
    row = HIST_TABLE[variant]
    counts = np.asarray(counts)
    support = counts > 0
    b = hist_scale(eps_H, variant)
    noise = rng.laplace(0.0, b, size=counts.shape) if b > 0 else np.zeros(counts.shape)
    chat = np.where(support, counts + noise, 0.0)     # noise only on the support
    return row.release(support, chat, row.tau(eps_H, delta)), chat


def laplace_tail(c: np.ndarray | float, t: float, b: float) -> np.ndarray:
    """``P(c + Lap(b) > t)`` (``b = 0``: the indicator ``c > t``)."""
    c = np.asarray(c, dtype=np.float64)
    if b == 0:
        return (c > t).astype(np.float64)
    z = (t - c) / b
    return np.where(z >= 0, 0.5 * np.exp(-np.abs(z)), 1.0 - 0.5 * np.exp(-np.abs(z)))


def release_probabilities(counts: np.ndarray, eps_H: float, delta: float, variant: str,
                          extra_threshold: float = -np.inf) -> np.ndarray:
    """Exact ``P(u released and chat_u >= extra_threshold)`` per item (independent across items),
    for every variant except ``b13`` (whose release couples the items)."""
    counts = np.asarray(counts, dtype=np.float64)
    row = HIST_TABLE[variant]
    if not row.closed_form:
        raise PrivauditError(f"Hist {variant} (noisy max) has no closed-form release law")
    b = hist_scale(eps_H, variant)
    t = max(row.tau(eps_H, delta), extra_threshold) if row.thresholded else extra_threshold
    return np.where(counts > 0, laplace_tail(counts, t, b), 0.0)


# ---------------------------------------------------------------------------------------------
def hist_pairs(eps_H: float, delta: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Adversarial item lists (spec 6.3), each a substitution of one entry.

    1. *crossing two-bucket*: ``floor(tau)+1`` copies of item 0 and ``floor(tau)`` of item 1; one
       0 becomes 1 (the event ``{0 in L, 1 not in L}`` has ratio about ``e^(0.9 eps_H)``; a
       noiseless threshold flips deterministically);
    2. *tight two-bucket*: ``floor(tau)`` copies of 0, ``ceil(tau)`` of 1 (ratio exactly
       ``e^eps_H``);
    3. *singleton*: one copy of item 2 and many of item 1; the 2 becomes a 1 (``P[2 in L] =
       delta/2`` vs 0: the delta part);
    4. *distinct*: items 3..10 once each; one becomes the new item 11 (noisy max releases it
       w.p. ~1/8 vs 0).
    """
    tau = hist_tau(eps_H, delta)
    f = int(math.floor(tau))
    c = int(math.ceil(tau))
    big = int(math.ceil(tau + 20.0 / eps_H))

    def pair(items: list[int], i: int, new: int) -> tuple[np.ndarray, np.ndarray]:
        a = np.array(items, dtype=np.int64)
        b = a.copy()
        b[i] = new
        return a, b

    return [pair([0] * (f + 1) + [1] * f, 0, 1),
            pair([0] * f + [1] * c, 0, 1),
            pair([2] + [1] * big, 0, 1),
            pair(list(range(3, 11)), 0, 11)]


@dataclass
class StableHistogram:
    """``Hist`` of Lemma 15 as a `Mechanism`: input = a vector of item ids (ints in 0..61),
    output = the released set ``L`` as an int64 bitmask (bit u set iff u in L), one per run.

    Claim: (epsilon, delta)-DP, substitution of one list entry ("replace-one"), model scope.
    The estimates ``a_u`` are not part of the output (the auditor sees the set; M prunes on the
    estimates internally).
    """

    epsilon: float = 1.0
    delta: float = 1e-3
    variant: str = "correct"
    name: str = "blm-hist"
    pairs: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.epsilon = check_positive("epsilon", self.epsilon)
        self.delta = check_positive("delta", self.delta, upper=0.5)
        row_of(HIST_TABLE, self.variant, "Hist")
        self.claim = Claim(self.epsilon, self.delta, "replace-one", "model")
        self.input_distance = InputDistance("hamming", 1)   # one list entry substituted
        if not self.pairs:
            self.pairs = hist_pairs(self.epsilon, self.delta)

    def _items(self, inp) -> np.ndarray:
        v = np.asarray(inp)
        if v.ndim != 1 or v.size == 0 or v.dtype.kind not in "iuf" or not np.all(np.isfinite(v)):
            raise PrivauditError(f"{self.name}: input must be a non-empty 1-D vector of item ids")
        if np.any(v != np.rint(v)) or np.any((v < 0) | (v >= MAX_ITEM)):
            raise PrivauditError(f"{self.name}: item ids must be integers in [0, {MAX_ITEM}), got "
                                 f"{np.unique(v)[:5].tolist()}")
        return v.astype(np.int64)

    def sample(self, inp, runs: int, rng: np.random.Generator) -> np.ndarray:
        items = self._items(inp)
        counts = np.bincount(items, minlength=MAX_ITEM)
        ids = np.flatnonzero(counts)
        released, _ = hist_release(np.broadcast_to(counts[ids], (runs, ids.size)), self.epsilon,
                                   self.delta, self.variant, rng)
        return (released.astype(np.int64) << ids[None, :]).sum(axis=1)

    def exact(self, inp) -> dict:
        """Exact output law ``{bitmask: probability}`` (support of at most 16 items)."""
        items = self._items(inp)
        counts = np.bincount(items, minlength=MAX_ITEM)
        ids = np.flatnonzero(counts)
        if ids.size > 16:
            raise PrivauditError(f"{self.name}: exact law needs at most 16 distinct items, got {ids.size}")
        r = release_probabilities(counts[ids], self.epsilon, self.delta, self.variant)
        out: dict = {}
        for bits in itertools.product((0, 1), repeat=ids.size):
            b = np.array(bits, dtype=bool)
            p = float(np.prod(np.where(b, r, 1.0 - r)))
            if p > 0:
                code = int(sum(1 << int(u) for u in ids[b]))
                out[code] = out.get(code, 0.0) + p
        return out


@register("blm-hist", kind="mechanism", paper=PAPER, section="Lemma 15 (stable histogram)",
          summary="stable histogram: Laplace(2/eps) on the support, release counts above "
                  "1 + (2/eps) ln(1/delta); (eps, delta)-DP; output = released set as a bitmask",
          variants=HIST_VARIANTS)
def blm_hist(epsilon: float = 1.0, delta: float = 1e-3, variant: str = "correct") -> StableHistogram:
    return StableHistogram(epsilon=epsilon, delta=delta, variant=variant)


# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GLRow(Row):
    """A GenericLearner variant: the row of the shared EM (`algorithms.dagan_feldman.em`) it runs."""

    em: str = "correct"


GL_TABLE = {
    "correct": GLRow("exponential mechanism Pr[h] ~ exp(-eps_G err_S'(h) / 2) over the candidates"),
    "b9": GLRow("BUG B9: returns the ERM (argmin err, first index) over the candidates instead of "
                "sampling", em="bv-em-3"),
    "b10": GLRow("BUG B10: temperature exp(-eps_G err) (the /2 is missing): realizes 2 eps_G",
                 em="bv-em-1"),
}
GL_VARIANTS = describe(GL_TABLE)
GL_TO_EM = {k: r.em for k, r in GL_TABLE.items()}


def gl_pick(err: np.ndarray, mask: np.ndarray, eps_G: float, variant: str,
            rng: np.random.Generator) -> np.ndarray:
    """GenericLearner over per-run candidate sets: one pick per row of ``mask`` ((r, U) bool, every
    row non-empty) with scores ``err`` ((U,) counts); the shared EM of `df_em`."""
    c, argmax = em_scale(EM_TABLE[GL_TO_EM[variant]], eps_G, 1)
    return em_pick(-c * np.asarray(err, dtype=np.float64), mask, argmax, rng, mask.shape[0])


def gl_probabilities(err: np.ndarray, eps_G: float, variant: str) -> np.ndarray:
    """Exact pick probabilities over the given candidates (all available)."""
    c, argmax = em_scale(EM_TABLE[GL_TO_EM[variant]], eps_G, 1)
    L = -c * np.asarray(err, dtype=np.float64)
    if argmax:
        P = np.zeros(L.size)
        P[int(np.argmax(L))] = 1.0
        return P
    w = np.exp(L - L.max())
    return w / w.sum()


def gl_design(H, epsilon: float, x0: int | None = None, gap: int | None = None, pad: int = 30):
    """Spec 6.3's two-candidate design over thresholds: candidates ``a = t_j`` and ``b = t_{j+1}``
    disagree only at ``x_j``; ``S'`` has ``g`` more examples at ``x_j`` labelled ``b(x_j) = 0``
    than ``1``, the neighbour flips one 1 into a 0 (gap ``g + 2``); ``pad`` examples at each
    neighbouring point give every other threshold at least ``pad`` errors."""
    if H.N < 3:
        raise PrivauditError("the GenericLearner design needs a domain of at least 3 points")
    j = H.N // 2 if x0 is None else int(x0)
    g = max(1, round(3.0 / epsilon)) if gap is None else int(gap)
    locs = [j - 1] * pad + [j + 1] * pad + [j] * (g + 1) + [j]
    ys = [0] * pad + [1] * pad + [0] * (g + 1) + [1]
    S = Dataset(H.domain[locs], np.array(ys))
    S2 = S.relabel(len(ys) - 1, 0)
    return S, S2, H.domain[[j - 1, j, j + 1]]


@register("blm-gl", kind="learner", paper=PAPER, section="Lemma 16 (GenericLearner)",
          summary="GenericLearner: exponential mechanism over the whole finite class with score "
                  "-err_S(h) (KLN+11); eps-DP, one model per run",
          variants=GL_VARIANTS)
def blm_gl(epsilon: float = 1.0, cls: str = "thr", grid: int = 8, variant: str = "correct"):
    """GenericLearner (BLM-8) over the whole class ``cls`` (the project's EM learner, shared with
    ``df-b3``), with spec 6.3's two-candidate designs as its default pairs."""
    row_of(GL_TABLE, variant, "GenericLearner")
    epsilon = check_positive("epsilon", epsilon)
    H = make_class(cls, grid)
    L = ExponentialMechanismLearner(H, epsilon, np.arange(H.size), 0.0, False, GL_TO_EM[variant], "blm-gl")
    L.variant_blm = variant
    S, S2, q = gl_design(H, epsilon)
    Sb, Sb2, _ = gl_design(H, epsilon, gap=-1)        # B9's design: err_a - err_b = -1 -> +1
    L.pairs = [(S, S2), (Sb, Sb2)]
    L.queries = q
    return L


assert set(GL_TO_EM.values()) <= set(EM_VARIANTS)

__all__ = ["StableHistogram", "hist_release", "hist_tau", "hist_scale", "hist_pairs",
           "release_probabilities", "laplace_tail", "gl_pick", "gl_probabilities", "gl_design",
           "HIST_VARIANTS", "HIST_TABLE", "HistRow", "GL_VARIANTS", "GL_TABLE", "PAPER"]
