"""DF-STA (Theorem 1/3, Lemma 7, Remark 1), DF-FLIP and DF-COR1 (Corollary 1) as black boxes.

DF-STA ``A^sta`` (Section 3 / 3.1): draw a uniform subset ``I`` of ``n'`` record indices, build
``H_T`` (one first-index representative per labelling pattern of ``H`` on the x-values of
``S_I``), run the exponential mechanism over ``H_T`` with parameter ``eps_EM`` scoring on ALL of
``S``, output ``h(x)``. Fresh ``I`` and EM draw for every query (spec 5.3).

``mode`` selects the paper's parameterisation for a target stability ``gamma``:

* ``"outline"`` (Sec. 3 proof outline): ``n' = floor(gamma n / 2)``, ``eps_EM = gamma / 4``;
* ``"formal"`` (Lemma 7, 3 gamma_L-stable): run with ``gamma_L = gamma / 3`` (as the Theorem 1
  proof does) so the claim is ``gamma``: ``n' = min(N^net_{alpha,alpha,d}, floor(gamma_L n))``,
  ``eps_EM = gamma_L``;
* ``"cover"`` (Remark 1): ``"formal"`` with ``H_T`` replaced by a greedy alpha-cover of the
  patterns w.r.t. the records of ``S_I`` (Hamming radius ``alpha n'``, index order, uses only
  ``S_I``).

Practical mode: ``n_prime > 0`` and/or ``eps_em > 0`` override the derived values.

Claims: DF-STA is gamma-uniformly stable, ``Claim(0, gamma, replace-one, prediction)``; certified
``gamma_cert = f + (1 - f) tanh(eps_EM / 4)`` with ``f`` the (largest) ``n'/n`` (spec 3.4).
DF-COR1 runs DF-STA (outline) at ``gamma = eps alpha / 2`` and flips the label with probability
``alpha``: ``epsilon``-private prediction, ``Claim(eps, 0, replace-one, prediction)``; certified
``ln(1 + (1 - 2 alpha) gamma_cert / alpha)`` (spec 3.5).

Planted bugs and negative controls (``variant=``; spec 5.6/5.7) are the rows of `STA_TABLE`
and `COR_TABLE`, each saying what it plants.

References
----------
Y. Dagan and V. Feldman, "PAC learning with stable and private predictions", COLT 2020:
Section 3 (outline, "prediction privacy via stability"), Section 3.1 Lemma 7 and Theorem 3,
Remark 1, Corollary 1.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from typing import Callable

import numpy as np

from audit.errors import PrivauditError
from audit.types import Claim, Dataset

from ..common.checks import check_positive
from ..common.fitcache import cached_fit, data_seed
from ..common.hypotheses import HypothesisClass, make_class
from ..common.sampling import (
    count_distribution,
    em_probs,
    em_sample,
    sample_counts,
    subset_distribution,
)
from ..common.variants import Row, describe, row_of
from ..registry import register
from . import designs as df_designs
from .core import PAPER, DFLearner, Groups, check_design_n, hit_from_counts

MODES = ("outline", "formal", "cover")

# representatives of H_T: each labelling pattern on T's x-values stands for one class member
def first_reps(H: HypothesisClass, G: Groups, hit: np.ndarray) -> np.ndarray:
    """The first-index member of every class (R-HT-1: a function of T only)."""
    return H.rep_mask(hit, "first")


def last_reps(H: HypothesisClass, G: Groups, hit: np.ndarray) -> np.ndarray:
    """NC-6: the last-index member (still a function of T only)."""
    return H.rep_mask(hit, "last")


def fewest_error_reps(H: HypothesisClass, G: Groups, hit: np.ndarray) -> np.ndarray:
    """BV-STA-3: the member with the fewest errors on S (ties: first) -- depends on all of S."""
    ids = H.class_ids(hit)
    key = ids * (int(G.err.max()) + 1) + G.err[None, :]
    order = np.argsort(key, axis=1, kind="stable")
    sid = np.take_along_axis(ids, order, axis=1)
    first = np.ones(sid.shape, dtype=bool)
    first[:, 1:] = sid[:, 1:] != sid[:, :-1]
    mask = np.zeros(sid.shape, dtype=bool)
    np.put_along_axis(mask, order, first, axis=1)
    return mask


# how a run's label is released (the API bugs replace the fresh fit of every run)
def fresh_release(L: "StableLearner", G: Groups, data: Dataset, qi: np.ndarray, runs: int,
                  rng: np.random.Generator) -> np.ndarray:
    """A fresh subsample, EM draw (and flip) for every run and query (spec 5.3)."""
    return DFLearner._predict_groups(L, G, data, qi, runs, rng)


def rounded_confidence(L: "StableLearner", G: Groups, data: Dataset, qi: np.ndarray, runs: int,
                       rng: np.random.Generator) -> np.ndarray:
    """BV-API-1: ``1[E[A^S(x)] >= 1/2]`` for every run (deterministic)."""
    conf = L._confidence(G, data, qi)
    return np.broadcast_to((conf >= 0.5).astype(np.int8), (runs, qi.size)).copy()


def data_seeded(L: "StableLearner", G: Groups, data: Dataset, qi: np.ndarray, runs: int,
                rng: np.random.Generator) -> np.ndarray:
    """BV-API-2: one run seeded from a hash of S, repeated (a deterministic function of S)."""
    one = DFLearner._predict_groups(L, G, data, qi, 1, np.random.default_rng(data_seed(data)))
    return np.broadcast_to(one, (runs, qi.size)).copy()


def cached_release(L: "StableLearner", G: Groups, data: Dataset, qi: np.ndarray, runs: int,
                   rng: np.random.Generator) -> np.ndarray:
    """BV-API-3: the dataset's one cached fit ``h`` for every run; the flip coins stay fresh."""
    h = L._cached_fit(G, data)
    base = np.broadcast_to(L.H.matrix[h, qi], (runs, qi.size))
    return L._post(np.ascontiguousarray(base), rng)


def rounded_confidence_exact(L: "StableLearner", G: Groups, data: Dataset, qi: np.ndarray) -> np.ndarray:
    return (L._confidence(G, data, qi) >= 0.5).astype(np.float64)


def data_seeded_exact(L: "StableLearner", G: Groups, data: Dataset, qi: np.ndarray) -> np.ndarray:
    one = DFLearner._predict_groups(L, G, data, qi, 1, np.random.default_rng(data_seed(data)))
    return one[0].astype(np.float64)


def flipped_exact(L: "StableLearner", G: Groups, data: Dataset, qi: np.ndarray) -> np.ndarray:
    """The mechanism's law, flipped. For BV-API-3 the law of the (first, cached) fit equals the
    correct one; given the cache every later run is that fit's label (flipped): the bug is the
    dependence across runs, which no per-run law shows."""
    return L._post_prob(L._exact_core(G, qi))


@dataclass(frozen=True)
class StaRow(Row):
    """A DF-STA / DF-COR1 variant: the constants of the paper it changes and the named steps
    (representatives, release) it swaps."""

    n_prime_divisor: int = 0         # n' = n // divisor (0: derived from gamma, the paper's)
    em_per_subsample: bool = False   # EM temperature multiplied by n/n'
    gamma_without_alpha: bool = False  # COR1 gamma = eps, not eps alpha / 2
    scheme: str = "without"          # subsampling without / with replacement
    reps: Callable = first_reps      # representatives of H_T
    consistent_only: bool = False    # keep only patterns consistent with T's labels
    score_on_subsample: bool = False  # EM scored on S_I instead of S
    flip: bool = True                # DF-FLIP applied (when the learner flips)
    flip_divisor: float = 1.0        # flip probability alpha / divisor
    one_sided_flip: bool = False     # only 0 -> 1 flips
    release: Callable = fresh_release
    release_exact: Callable = flipped_exact


_COMMON = {
    "bv-sta-1": StaRow("BUG: no subsampling (I = [n]): the record always shapes H_T; diff ~ 1/2 on "
                       "D2/D3", n_prime_divisor=1),
    "bv-sta-2": StaRow("BUG: n' = n/2 (wrong fraction): diff ~ 1/4 on D2/D3", n_prime_divisor=2),
    "bv-sta-3": StaRow("BUG: data-dependent representative (the class member with the fewest errors "
                       "on S): violates R-HT-1; the gap prediction follows the record",
                       reps=fewest_error_reps),
    "bv-sta-4": StaRow("BUG: EM temperature multiplied by n/n' (per-subsample scaling): leak on D7",
                       em_per_subsample=True),
    "bv-api-1": StaRow("BUG: releases the rounded confidence 1[E[A^S(x)] >= 1/2] (deterministic; the "
                       "Learner contract needs a label, so the confidence is rounded): not private",
                       release=rounded_confidence, release_exact=rounded_confidence_exact),
    "bv-api-2": StaRow("BUG: RNG seeded from a hash of S: the output is a deterministic function of S",
                       release=data_seeded, release_exact=data_seeded_exact),
    "bv-api-3": StaRow("BUG: fit cached per dataset: I and h drawn once per dataset (seeded by its "
                       "content, so every process reuses the same fit) and reused for every later run "
                       "and query on it; the flip coins stay fresh", release=cached_release),
    "nc-2": StaRow("negative control NC-2: subsampling WITH replacement (still n'/n-stable); must pass",
                   scheme="with"),
    "nc-3": StaRow("negative control NC-3: H_T keeps only patterns consistent with T's labels (all if "
                   "none); depends only on T, must pass", consistent_only=True),
    "nc-6": StaRow("negative control NC-6: last-index representative rule; still a function of T only, "
                   "must pass", reps=last_reps),
    "nc-7": StaRow("negative control NC-7: EM scored on S_I only (a pure subsample wrapper, "
                   "n'/n-stable); must pass", score_on_subsample=True),
}

STA_TABLE = {"correct": StaRow("A^sta as published (mode outline/formal/cover)"), **_COMMON}

COR_TABLE = {
    "correct": StaRow("Corollary 1 as published: DF-STA at gamma = eps alpha / 2, then flip with prob "
                      "alpha"),
    "bv-cor-1": StaRow("BUG: flip omitted while pure eps is still claimed: unbounded on D3", flip=False),
    "bv-cor-2": StaRow("BUG: flip probability alpha/20 instead of alpha: above eps on D3 for eps <= 1",
                       flip_divisor=20.0),
    "bv-cor-3": StaRow("BUG: gamma = eps (alpha/2 forgotten): subsample fraction eps/2, loss > eps on "
                       "D2/D3", gamma_without_alpha=True),
    "bv-cor-4": StaRow("BUG: one-sided flip (only 0 -> 1; spec writes 1 -> 0, mirrored because with "
                       "first-index threshold representatives D3 makes label 0 the impossible one): "
                       "label 0 keeps probability 0 under S' on D3, unbounded loss", one_sided_flip=True),
    **{k: v for k, v in _COMMON.items() if k != "bv-sta-4"},
}
STA_VARIANTS = describe(STA_TABLE)
COR_VARIANTS = describe(COR_TABLE)


def n_net(a: float, b: float, D: int) -> int:
    """``N^net_{a,b,D}``: the Blumer et al. epsilon-net sample size (spec 4.4)."""
    return int(math.ceil(max(4 / a * math.log2(2 / b), 8 * D / a * math.log2(13 / a))))


def theory_n(gamma: float, alpha: float, beta: float, H: HypothesisClass) -> dict:
    """Theory-mode sizes for DF-STA-b (spec 4.4): ``n'``, and ``n`` from Lemma 7 + uniform convergence.

    ``n >= max(n'/gamma, 2 ln tau_{n'}(H) / (gamma alpha), N^G_{alpha,beta})`` with Hoeffding +
    union bound ``N^G = ln(2|H|/beta) / (2 alpha^2)`` for the finite class.
    """
    d = H.vc_dim
    npr = n_net(alpha, alpha, d)
    n = max(math.ceil(npr / gamma), math.ceil(2 * math.log(max(H.growth(npr), 2)) / (gamma * alpha)),
            math.ceil(math.log(2 * H.size / beta) / (2 * alpha**2)))
    return {"n_prime": npr, "n": int(n)}


class StableLearner(DFLearner):
    """DF-STA, optionally followed by DF-FLIP (then it is DF-COR1). See the module docstring."""

    def __init__(self, H: HypothesisClass, *, gamma: float, alpha: float, mode: str,
                 n_prime: int, eps_em: float, flip_alpha: float, variant: str, name: str,
                 design_n: int) -> None:
        super().__init__(H, variant)
        self.row = row_of(COR_TABLE if flip_alpha else STA_TABLE, variant, name)
        if mode not in MODES:
            raise PrivauditError(f"unknown mode {mode!r}; valid: {', '.join(MODES)}")
        self.name, self.gamma, self.alpha, self.mode = name, gamma, alpha, mode
        self.fixed_n_prime, self.fixed_eps_em = int(n_prime), float(eps_em)
        self.flip_alpha = flip_alpha               # 0: no flip (DF-STA)
        self.design_n = design_n
        self._cache_token = uuid.uuid4().hex       # BV-API-3 cache identity (kept when pickled)
        g = gamma / 3 if mode != "outline" else gamma
        if self.row.gamma_without_alpha:           # the bug: gamma = eps instead of eps alpha / 2
            g = gamma * 2 / alpha
        self._g = g
        self.frac = g / 2 if mode == "outline" else g          # n'/n upper bound (derived mode)
        self._eps = g / 4 if mode == "outline" else g          # eps_EM (derived mode)
        self._net = n_net(alpha, alpha, H.vc_dim) if mode != "outline" else None

    # parameters -------------------------------------------------------------------------------
    def n_prime(self, n: int) -> int:
        if self.row.n_prime_divisor:
            return n // self.row.n_prime_divisor
        if self.fixed_n_prime > 0:
            return min(self.fixed_n_prime, n)
        npr = int(math.floor(self.frac * n))
        return min(npr, self._net) if self._net is not None else npr

    def eps_em(self, n: int) -> float:
        e = self.fixed_eps_em if self.fixed_eps_em > 0 else self._eps
        if self.row.em_per_subsample:
            e *= n / max(self.n_prime(n), 1)
        return e

    def gamma_cert(self, n: int | None = None) -> float:
        """Certified additive stability of the unflipped learner (spec 3.4); ``n=None``: valid for
        every n in derived mode (uses the fraction ``n'/n <= frac``)."""
        if n is None and self.fixed_n_prime == 0 and not self.row.n_prime_divisor:
            f = self.frac
        else:
            n = self.design_n if n is None else n
            f = self.n_prime(n) / n
        return f + (1 - f) * math.tanh(self.eps_em(n or self.design_n) / 4)

    def _check_data(self, G: Groups) -> None:
        if self.n_prime(G.n) < 1:
            raise PrivauditError(f"{self.name}: n' = 0 for n = {G.n} (gamma = {self.gamma}); the "
                                 f"subsample must be non-empty, so n must be at least "
                                 f"{math.ceil(1 / self.frac)} (spec 5.8)")

    # the algorithm ------------------------------------------------------------------------------
    def _reps(self, G: Groups, counts: np.ndarray | None, hit_groups: np.ndarray) -> np.ndarray:
        """Representatives of H_T (or of the cover) per run: (r, |H|) bool."""
        hit = hit_from_counts(G, hit_groups)
        mask = self.row.reps(self.H, G, hit)
        if self.row.consistent_only:
            errT = np.asarray(hit_groups, dtype=np.float64) @ G.miss        # > 0 iff inconsistent
            cons = mask & (errT == 0)
            mask = np.where(cons.any(axis=1, keepdims=True), cons, mask)
        if self.mode == "cover":
            mask = self._cover(G, np.asarray(counts, dtype=np.float64), mask)
        return mask

    def _cover(self, G: Groups, counts: np.ndarray, reps: np.ndarray) -> np.ndarray:
        """Remark 1: greedy alpha-cover (index order) of the patterns, distances counted on S_I."""
        radius = self.alpha * counts.sum(axis=1)                      # alpha |I| per run
        Mg = self.H.matrix[:, G.loc].astype(np.float64)               # (|H|, groups)
        centers = np.zeros_like(reps)
        for h in np.flatnonzero(reps.any(axis=0)):
            cand = reps[:, h]
            if h > 0:
                dist = counts @ np.abs(Mg[:h] - Mg[h]).T                # (r, h) records of S_I
                covered = (centers[:, :h] & (dist <= radius[:, None])).any(axis=1)
                cand = cand & ~covered
            centers[:, h] = cand
        return centers

    def _scores(self, G: Groups, counts: np.ndarray) -> np.ndarray:
        if self.row.score_on_subsample:
            return np.asarray(counts, dtype=np.float64) @ G.miss        # err on S_I only
        return G.err.astype(np.float64)

    def _sta_draw(self, G: Groups, r: int, rng: np.random.Generator) -> np.ndarray:
        counts = sample_counts(G.count, self.n_prime(G.n), r, rng,
                               self.row.scheme)
        mask = self._reps(G, counts, counts > 0)
        logits = -0.5 * self.eps_em(G.n) * self._scores(G, counts)
        return em_sample(np.broadcast_to(logits, mask.shape), mask, rng)

    def _post(self, labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        a = self._flip_prob()
        if a == 0:
            return labels.astype(np.int8)
        coin = rng.random(labels.shape) < a
        if self.row.one_sided_flip:
            coin &= labels == 0          # BUG: label 0 is never produced by the flip
        return (labels ^ coin).astype(np.int8)

    def _flip_prob(self) -> float:
        if self.flip_alpha == 0 or not self.row.flip:
            return 0.0
        return self.flip_alpha / self.row.flip_divisor

    def _post_prob(self, p1: np.ndarray) -> np.ndarray:
        a = self._flip_prob()
        if self.row.one_sided_flip:
            return p1 + a * (1 - p1)
        return a + (1 - 2 * a) * p1

    def _fit_eval(self, G: Groups, qidx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        h = self._sta_draw(G, qidx.size, rng)
        return self._post(self.H.matrix[h, qidx], rng)

    def _predict_groups(self, G: Groups, data: Dataset, qi: np.ndarray, runs: int,
                        rng: np.random.Generator) -> np.ndarray:
        return self.row.release(self, G, data, qi, runs, rng)

    def _cached_fit(self, G: Groups, data: Dataset) -> int:
        """BV-API-3 (spec 5.6 / 5.3): ``I`` and ``h`` drawn once per dataset and reused.

        The bug the spec describes: ``fit(S)`` draws the subsample and the EM hypothesis, a
        later ``predict`` reuses them, so the auditor's re-fits on the same ``S`` (every run,
        every chunk, explore and confirm) all see one ``h``. The one draw is seeded from the
        dataset's content (`df_common.cached_fit`), so every process sees the same fit.
        """
        return cached_fit(self._cache_token, data, lambda r: int(self._sta_draw(G, 1, r)[0]))

    # exact oracle ---------------------------------------------------------------------------------
    def _confidence(self, G: Groups, data: Dataset, qi: np.ndarray) -> np.ndarray:
        try:
            return self._exact_core(G, qi)
        except PrivauditError:
            rng = np.random.default_rng(data_seed(data))              # deterministic per dataset
            return super()._predict_groups(G, data, qi, 20_000, rng).mean(axis=0)

    def _exact_core(self, G: Groups, qi: np.ndarray) -> np.ndarray:
        """Exact ``Pr[label = 1]`` of the correct algorithm's mechanism (set or count enumeration)."""
        npr = self.n_prime(G.n)
        scheme = self.row.scheme
        # the EM's scores depend on the subsample's counts, not only on its set of (x, y) groups
        if self.mode == "cover" or self.row.score_on_subsample:
            counts, p = count_distribution(G.count, npr, scheme)
        else:
            counts, p = subset_distribution(G.count, npr, scheme)
        keep = p > 0
        counts, p = np.asarray(counts)[keep], p[keep]
        Mq = self.H.matrix[:, qi].astype(np.float64)
        eps = self.eps_em(G.n)
        total = np.zeros(qi.size)
        for s in range(0, len(p), 4096):
            c = counts[s:s + 4096]
            mask = self._reps(G, c.astype(np.float64), c > 0)
            P = em_probs(np.broadcast_to(-0.5 * eps * self._scores(G, c), mask.shape), mask)
            total += p[s:s + 4096] @ (P @ Mq)
        return np.clip(total, 0.0, 1.0)

    def _exact_groups(self, G: Groups, data: Dataset, qi: np.ndarray) -> np.ndarray:
        return self.row.release_exact(self, G, data, qi)


def _attach_designs(L: StableLearner, n: int) -> None:
    H = L.H
    designs = [df_designs.d3_stable_not_private(H, n), df_designs.d2_gap(H, n),
               df_designs.d7_tie_break(H, n, k_query=n // 8)]
    # D7 replicas: nothing new for a learner that re-fits every run; state kept across fits
    # (BV-API-3) disagrees on each replica with probability ~1/2 (df_designs.d7_replicas)
    designs += df_designs.d7_replicas(H, n, m=min(7, n // 8 - 1))
    L.pairs = [(a, b) for a, b, _ in designs]
    L.queries = np.unique(np.vstack([q for _, _, q in designs]), axis=0)


@register("df-sta", kind="learner", paper=PAPER,
          section="Sec. 3 (outline), Sec. 3.1 Lemma 7 / Theorem 3 (formal), Remark 1 (cover)",
          summary="gamma-uniformly stable agnostic learner: EM over H_T of a random subsample, "
                  "scored on all of S (stability, not DP: claim (0, gamma))",
          variants=STA_VARIANTS)
def df_sta(gamma: float = 0.05, alpha: float = 0.1, mode: str = "outline", n_prime: int = 0,
           eps_em: float = 0.0, cls: str = "thr", grid: int = 64, n: int = 2000,
           variant: str = "correct") -> StableLearner:
    """DF-STA with target stability ``gamma`` (``n_prime``/``eps_em`` > 0: practical mode;
    ``n`` sizes the built-in audit pairs)."""
    gamma = check_positive("gamma", gamma, upper=1.0)
    alpha = check_positive("alpha", alpha, upper=0.5)
    eps_em = check_positive("eps_em", eps_em, allow_zero=True)
    if isinstance(n_prime, bool) or not isinstance(n_prime, (int, np.integer)) or n_prime < 0:
        raise PrivauditError(f"n_prime must be an integer >= 0 (0 = derived from gamma), got {n_prime!r}")
    L = StableLearner(make_class(cls, grid), gamma=gamma, alpha=alpha, mode=mode, n_prime=n_prime,
                      eps_em=eps_em, flip_alpha=0.0, variant=variant, name="df-sta",
                      design_n=check_design_n(n))
    L.claim = Claim(0.0, gamma, "replace-one", "prediction")
    L.certified = Claim(0.0, min(L.gamma_cert(), 0.999999), "replace-one", "prediction")
    L.theory = theory_n(gamma / 3, alpha, 0.1, L.H)
    _attach_designs(L, L.design_n)
    return L


@register("df-cor1", kind="learner", paper=PAPER, section="Corollary 1 (Sec. 3), with DF-FLIP",
          summary="eps-private prediction from stability: DF-STA at gamma = eps alpha / 2, then "
                  "randomized response on the label with probability alpha",
          variants=COR_VARIANTS)
def df_cor1(epsilon: float = 1.0, alpha: float = 0.1, mode: str = "outline", n_prime: int = 0,
            eps_em: float = 0.0, cls: str = "thr", grid: int = 64, n: int = 2000,
            variant: str = "correct") -> StableLearner:
    """DF-COR1: eps-private prediction, (2 alpha, beta)-agnostic PAC (Corollary 1)."""
    epsilon = check_positive("epsilon", epsilon)
    alpha = check_positive("alpha", alpha, upper=0.49)
    eps_em = check_positive("eps_em", eps_em, allow_zero=True)
    if isinstance(n_prime, bool) or not isinstance(n_prime, (int, np.integer)) or n_prime < 0:
        raise PrivauditError(f"n_prime must be an integer >= 0 (0 = derived), got {n_prime!r}")
    gamma = epsilon * alpha / 2      # formal/cover: Lemma 7 is then run at gamma / 3 (3x stable)
    L = StableLearner(make_class(cls, grid), gamma=gamma, alpha=alpha, mode=mode, n_prime=n_prime,
                      eps_em=eps_em, flip_alpha=alpha, variant=variant, name="df-cor1",
                      design_n=check_design_n(n))
    L.epsilon = epsilon
    L.claim = Claim(epsilon, 0.0, "replace-one", "prediction")
    cert = math.log1p((1 - 2 * alpha) * L.gamma_cert() / alpha)
    L.certified = Claim(cert, 0.0, "replace-one", "prediction")
    _attach_designs(L, L.design_n)
    return L


__all__ = ["StableLearner", "df_sta", "df_cor1", "STA_VARIANTS", "COR_VARIANTS", "STA_TABLE", "COR_TABLE", "StaRow", "theory_n", "n_net"]
