"""Baselines of Dagan & Feldman (COLT 2020), Section 1: DF-B1 and DF-B2 (spec section 3.8).

DF-B1 [SSSSS10]: uniform stability by subsampling or averaging.

* ``mode="sub"``: ERM on a fresh uniform ``m``-subset, ``m = floor(gamma n)``: ``m/n <= gamma``-
  uniformly stable (the changed record is in the subsample with probability ``m/n``; otherwise
  the output distributions coincide).
* ``mode="avg"``: a data-independent (fixed) partition into ``k = ceil(1/gamma)`` blocks; ERM on
  a uniformly random block: ``1/k <= gamma``-stable.

Claim: ``(0, gamma)`` -- gamma-uniform stability = (0, gamma)-private prediction (paper Sec. 2),
replace-one, prediction scope. Sample complexity [PAPER]: agnostic ``O(d/(gamma alpha^2))``.

DF-B2 [DF18, BTT18; reconstruction, spec 3.8]: DF-FLIP over B-sub,
``m = floor(n alpha (e^eps - 1)/(1 - 2 alpha))``, then flip the label with probability alpha:
``Pr[y] in [alpha, 1 - alpha]`` and the additive gap ``<= (1-2alpha) m/n``, so the loss is
``ln(1 + (1-2alpha)(m/n)/alpha) <= eps`` (tight on the gap-inclusion design D2).
Claim: eps-private prediction, replace-one, prediction scope; ``O~(d/(alpha^3 eps))`` samples.

References
----------
Y. Dagan and V. Feldman, "PAC learning with stable and private predictions", COLT 2020, Sec. 1.
S. Shalev-Shwartz, O. Shamir, N. Srebro, K. Sridharan, "Learnability, stability and uniform
convergence", JMLR 2010 [SSSSS10]. C. Dwork and V. Feldman, "Privacy-preserving prediction",
COLT 2018 [DF18]. R. Bassily, A. Thakurta, O. Thakkar, "Model-agnostic private learning",
NeurIPS 2018 [BTT18].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from audit import validate
from audit.errors import PrivauditError
from audit.types import Claim, Dataset

from ..common.hypotheses import HypothesisClass, make_class
from ..common.checks import check_positive, check_runs
from ..common.variants import Row, describe, row_of
from ..registry import register
from .real import (
    PAPER,
    Prepared,
    block_of_position,
    block_votes,
    fixed_block_counts,
    flip_labels,
    prepare,
)

MAX_COMPOSITIONS = 300_000


# ---------------------------------------------------------------------------------------------
# subsample machinery shared with DF-PP2
# ---------------------------------------------------------------------------------------------
def groups_of(prep: Prepared) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (location, label) groups: keys ``2 loc + y`` and sizes."""
    return np.unique(prep.rec_loc * 2 + prep.y, return_counts=True)


def subsample_counts(prep: Prepared, m: int, runs: int, rng: np.random.Generator
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Label counts per location (runs, L) of a fresh uniform ``m``-subset of the records
    (multivariate hypergeometric over the (location, label) groups: the exact law)."""
    keys, sizes = groups_of(prep)
    draw = rng.multivariate_hypergeometric(sizes, m, size=runs)          # (runs, G)
    L = len(prep.locs)
    c = np.zeros((runs, L, 2), np.int64)
    c[:, keys // 2, keys % 2] = draw
    return c[..., 0], c[..., 1]


def compositions(sizes: np.ndarray, m: int, limit: int = MAX_COMPOSITIONS) -> np.ndarray:
    """Every vector ``c`` with ``0 <= c_g <= sizes_g`` and ``sum c = m``: (count, G) int64."""
    sizes = np.asarray(sizes, np.int64)
    suffix = np.concatenate([np.cumsum(sizes[::-1])[::-1], [0]])
    parts = np.zeros((1, 0), np.int64)
    for g, s in enumerate(sizes):
        used = parts.sum(axis=1)
        lo = np.maximum(0, m - used - suffix[g + 1])
        hi = np.minimum(s, m - used)
        reps = np.maximum(hi - lo + 1, 0)
        if reps.sum() > limit:
            raise PrivauditError(f"exact oracle: more than {limit} subsample compositions; "
                                 f"use fewer distinct (x, y) values or a smaller subsample")
        idx = np.repeat(np.arange(len(parts)), reps)
        offs = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        parts = np.column_stack([parts[idx], lo[idx] + offs])
    return parts


def log_comb(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from scipy.special import gammaln
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return gammaln(a + 1) - gammaln(b + 1) - gammaln(a - b + 1)


def subsample_erm_exact(prep: Prepared, m: int) -> np.ndarray:
    """Exact ``Pr[ERM(S_I)(x) = 1]`` per query for a uniform ``m``-subset ``I``."""
    keys, sizes = groups_of(prep)
    comp = compositions(sizes, m)
    logp = log_comb(sizes[None, :], comp).sum(axis=1) - log_comb(prep.n, m)
    L = len(prep.locs)
    c = np.zeros((len(comp), L, 2), np.int64)
    c[:, keys // 2, keys % 2] = comp
    votes = block_votes(c[:, None, :, 0], c[:, None, :, 1], prep)[:, 0, :]     # (count, q)
    return np.clip(np.exp(logp) @ votes.astype(np.float64), 0.0, 1.0)


def pair_gap_inclusion(H: HypothesisClass, n: int, q: int) -> tuple[Dataset, Dataset]:
    """D2 GapInclusion: a 0-cluster left and a 1-cluster right of an empty gap holding ``x_q``.

    S adds ``(x_q, 0)`` -- the label the first-row (leftmost) gap hypothesis does not predict at
    ``x_q``; S' puts that record inside the 0-cluster. A subsample ERM predicts 0 at ``x_q`` iff
    the record is in the subsample: ``Pr_S[0] = m/n``, ``Pr_S'[0] = 0``.
    """
    lo, hi = max(q - 8, 0), min(q + 8, H.N - 1)
    xs = [lo if i % 2 == 0 else hi for i in range(n - 1)]
    ys = [0 if i % 2 == 0 else 1 for i in range(n - 1)]
    S = Dataset(H.domain[np.array(xs + [q])], np.array(ys + [0]))
    return S, S.replace(n - 1, H.domain[lo], 0)


# ---------------------------------------------------------------------------------------------
# DF-B1
# ---------------------------------------------------------------------------------------------
B1_VARIANTS = {
    "correct": "ERM on a fresh uniform m-subset, m = floor(gamma n) (mode='sub'), or on a "
               "uniformly random block of a fixed partition into ceil(1/gamma) (mode='avg')",
}


@dataclass(eq=False)
class StableBaseline:
    """DF-B1 [SSSSS10]: gamma-uniformly stable learner by subsampling (``sub``) or averaging
    (``avg``). Claim: (0, gamma)-private prediction = gamma-uniform stability, replace-one."""

    gamma: float = 0.1
    mode: str = "sub"
    hclass: str = "thr"
    grid: int = 64
    variant: str = "correct"
    name: str = "df-b1"
    chunk_runs: int = 1 << 15

    def __post_init__(self) -> None:
        self.gamma = check_positive("gamma", self.gamma, upper=1.0)
        validate.choice("mode", self.mode, ("sub", "avg"))
        validate.choice("variant", self.variant, tuple(B1_VARIANTS))
        self.H = make_class(self.hclass, self.grid)
        self.claim = Claim(0.0, min(self.gamma, 0.999999), "replace-one", "prediction")
        self.certified = self.claim
        self.k = math.ceil(1 / self.gamma)
        self._q = self.H.N // 2

    def m_of(self, n: int) -> int:
        m = int(math.floor(self.gamma * n + 1e-9))
        if m < 1:
            raise PrivauditError(f"{self.name}: gamma n = {self.gamma * n:g} < 1; need n >= {math.ceil(1 / self.gamma)}")
        return m

    @cached_property
    def pairs(self) -> list[tuple[Dataset, Dataset]]:
        return [pair_gap_inclusion(self.H, 100, self._q)] if self.hclass == "thr" else []

    @cached_property
    def queries(self) -> np.ndarray:
        return self.H.domain[[self._q]]

    def _base(self, prep: Prepared, runs: int, rng: np.random.Generator) -> np.ndarray:
        if self.mode == "sub":
            c0, c1 = subsample_counts(prep, self.m_of(prep.n), runs, rng)
            return block_votes(c0[:, None], c1[:, None], prep)[:, 0, :]
        if prep.n < self.k:
            raise PrivauditError(f"{self.name}: n = {prep.n} < k = {self.k} blocks")
        c0, c1 = fixed_block_counts(prep, block_of_position(prep.n, self.k), self.k)
        votes = block_votes(c0, c1, prep)[0]                    # (k, q)
        return votes[rng.integers(self.k, size=runs)]

    def predict(self, data: Dataset, queries: np.ndarray, runs: int,
                rng: np.random.Generator) -> np.ndarray:
        runs = check_runs(runs)
        prep = prepare(self.H, data, queries)
        return self._base(prep, runs, rng).astype(np.int8)

    def _base_exact(self, prep: Prepared) -> np.ndarray:
        if self.mode == "sub":
            return subsample_erm_exact(prep, self.m_of(prep.n))
        if prep.n < self.k:
            raise PrivauditError(f"{self.name}: n = {prep.n} < k = {self.k} blocks")
        c0, c1 = fixed_block_counts(prep, block_of_position(prep.n, self.k), self.k)
        return block_votes(c0, c1, prep)[0].mean(axis=0)

    def exact(self, data: Dataset, queries: np.ndarray) -> np.ndarray:
        """Exact ``Pr[label = 1]``: enumeration of subsample compositions over the distinct
        (x, y) values (``sub``; PrivauditError if more than 300,000) or the block average."""
        return self._base_exact(prepare(self.H, data, queries))


@register("df-b1", kind="learner", paper=f"{PAPER}; baseline of Shalev-Shwartz et al. (JMLR 2010)",
          section="Sec. 1 (SSSSS10 subsample/average stability), spec 3.8",
          summary="ERM on a random m = gamma n subsample (or a random block of a fixed partition): "
                  "gamma-uniformly stable", variants=B1_VARIANTS)
def make_df_b1(gamma: float = 0.1, mode: str = "sub", hclass: str = "thr", grid: int = 64,
               variant: str = "correct") -> StableBaseline:
    return StableBaseline(gamma=gamma, mode=mode, hclass=hclass, grid=grid, variant=variant)


# ---------------------------------------------------------------------------------------------
# DF-B2
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class B2Row(Row):
    """A DF-B2 variant: the subsample fraction ``m/n`` and whether the output is flipped."""

    alpha_factor: bool = True    # m/n = alpha (e^eps - 1)/(1 - 2 alpha) (False: the alpha forgotten)
    flip: bool = True            # DF-FLIP with probability alpha on the output


B2_TABLE = {
    "correct": B2Row("flip(ERM on a uniform m-subset, alpha) with m = floor(n alpha (e^eps - 1)/(1 - 2 alpha))"),
    "bv-b2-1": B2Row("planted bug: subsample fraction (e^eps - 1)/(1 - 2 alpha), the factor alpha "
                     "forgotten (like BV-COR-3): loss ln(1 + (1-2alpha)(m/n)/alpha) far above eps",
                     alpha_factor=False),
    "bv-b2-2": B2Row("planted bug: the output flip is omitted while eps-privacy is still claimed "
                     "(like BV-COR-1): a label of probability 0 under S' -> infinite loss", flip=False),
}
B2_VARIANTS = describe(B2_TABLE)


@dataclass(eq=False)
class AggregationBaseline:
    """DF-B2 [DF18, BTT18, reconstruction]: DF-FLIP over B-sub. Claim: eps-private prediction
    (pure), replace-one, prediction scope; certified ``ln(1 + (1-2alpha)(m/n)/alpha) <= eps``."""

    epsilon: float = 1.0
    alpha: float = 0.1
    hclass: str = "thr"
    grid: int = 64
    variant: str = "correct"
    name: str = "df-b2"
    chunk_runs: int = 1 << 15

    def __post_init__(self) -> None:
        self.epsilon = check_positive("epsilon", self.epsilon)
        self.alpha = check_positive("alpha", self.alpha, upper=0.5, upper_open=True)
        self.row = row_of(B2_TABLE, self.variant, self.name)
        self.H = make_class(self.hclass, self.grid)
        if self.variant != "correct":
            self.name = f"df-b2[{self.variant}]"
        self.claim = Claim(self.epsilon, 0.0, "replace-one", "prediction")
        self.certified = self.claim
        a = self.alpha
        frac = (math.exp(self.epsilon) - 1) / (1 - 2 * a)
        self.fraction = min(1.0, a * frac if self.row.alpha_factor else frac)
        self._q = self.H.N // 2

    def m_of(self, n: int) -> int:
        m = int(math.floor(self.fraction * n + 1e-9))
        if m < 1:
            raise PrivauditError(f"{self.name}: subsample m = floor({self.fraction:.4g} n) = 0; "
                                 f"need n >= {math.ceil(1 / self.fraction)}")
        return m

    def certified_for(self, n: int) -> float:
        """The tight loss ``ln(1 + (1-2alpha)(m/n)/alpha)`` for ``n`` records (correct variant)."""
        a = self.alpha
        return math.log1p((1 - 2 * a) * (self.m_of(n) / n) / a)

    @cached_property
    def pairs(self) -> list[tuple[Dataset, Dataset]]:
        return [pair_gap_inclusion(self.H, 200, self._q)] if self.hclass == "thr" else []

    @cached_property
    def queries(self) -> np.ndarray:
        return self.H.domain[[self._q]]

    def predict(self, data: Dataset, queries: np.ndarray, runs: int,
                rng: np.random.Generator) -> np.ndarray:
        runs = check_runs(runs)
        prep = prepare(self.H, data, queries)
        c0, c1 = subsample_counts(prep, self.m_of(prep.n), runs, rng)
        out = block_votes(c0[:, None], c1[:, None], prep)[:, 0, :].astype(np.int8)
        return flip_labels(out, self.alpha, rng) if self.row.flip else out

    def exact(self, data: Dataset, queries: np.ndarray) -> np.ndarray:
        """Exact ``Pr[label = 1] = alpha + (1 - 2 alpha) Pr[ERM(S_I)(x) = 1]`` (enumeration)."""
        prep = prepare(self.H, data, queries)
        p = subsample_erm_exact(prep, self.m_of(prep.n))
        return self.alpha + (1 - 2 * self.alpha) * p if self.row.flip else p


@register("df-b2", kind="learner", paper=f"{PAPER}; reconstruction of DF18/BTT18 aggregation",
          section="Sec. 1 (agnostic private prediction by subsampling + noise), spec 3.8",
          summary="randomized response (flip alpha) over ERM on an alpha(e^eps-1)/(1-2alpha) "
                  "fraction subsample: eps-private prediction", variants=B2_VARIANTS)
def make_df_b2(epsilon: float = 1.0, alpha: float = 0.1, hclass: str = "thr", grid: int = 64,
               variant: str = "correct") -> AggregationBaseline:
    return AggregationBaseline(epsilon=epsilon, alpha=alpha, hclass=hclass, grid=grid, variant=variant)


__all__ = ["StableBaseline", "AggregationBaseline", "make_df_b1", "make_df_b2", "subsample_counts",
           "subsample_erm_exact", "compositions", "pair_gap_inclusion"]
