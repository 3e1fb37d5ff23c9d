"""Li, Wang & Ye: Baseline-A+V (spec B2) and the planted P2 bugs V14 / V17.

* ``lwy-b2`` -- the ABMS20 variant of the classic transformation [Alon, Beimel, Moran & Stemmer
  2020, as described in Li-Wang-Ye Sec. 3]: S = U o V with V public; run Baseline-A (EM over
  ``Pi_C(S_X)`` with score ``err_S``, eps_EM, Delta = 1/n, then ``g = A(S^h)``) and also release
  ``V^h``. Private w.r.t. U only. The improper-learner handling releases ``g XOR h_bar`` with
  ``h_bar`` the first concept of C consistent with ``V^h`` -- a post-processing of ``(g, V^h)``.
* ``lwy-p0`` -- the Theorem 18 pipeline calibrated to a target epsilon (spec P0-a): A_Agnostic at
  the internal eps_int (largest <= 1/3 whose Lemma 15 bound is <= the target, by bisection) with
  A = W1 around an eps0-DP EMLearner (Lemma 14: m = floor(k / (6 eps0)) draws with replacement).
* `SharedStateP2` -- ``lwy-p2`` with ``variant="v14"`` (one I, h and partition shared by every
  query of a run) or ``"v17"`` (P1's portions cut from T in record-index order, no shuffle).

References
----------
X. Li, C. Wang, X. Ye, COLT 2025 (arXiv 2510.01291), Sec. 3, Theorem 20, App. B.
N. Alon, A. Beimel, S. Moran, U. Stemmer, "Closure properties for private classification and
online prediction", COLT 2020.
"""

from __future__ import annotations

import math

import numpy as np

from audit.errors import PrivauditError
from audit.types import Claim, Dataset

from ..common.checks import check_positive
from ..common.variants import describe
from ..registry import register
from . import designs
from .core import (
    PAPER,
    Base,
    Cells,
    RelabelRule,
    aggregate,
    b1_certified,
    base_outputs,
    base_probs,
    cells_of,
    em_sample,
    grid_class,
    k_of,
    n2_certified,
    pick,
    pick_probs,
    portion_counts,
    relabel_logits,
    subsample_counts,
)
from .learners import (
    Aggregate,
    LWYRow,
    Transformation,
    _check_base,
    _check_n,
    _check_neighbours,
    _claims_n2,
    _thr_queries,
)

RELEASES = ("aux", "g", "vh")


class PublicPart(Transformation):
    """Baseline-A+V: the data is U; a fixed public V is appended, S = U o V.

    ``release`` picks the post-processing of ``(g, V^h)`` the predictor shows at the queries:
    "aux" ``(g XOR h_bar)(x)`` (the improper-learner handling), "g" ``g(x)``, "vh" ``h(x)`` for
    x in ``V_X`` only (the released ``V^h``)."""

    def __init__(self, H, eps_EM: float, V: Dataset, base: Base, release: str) -> None:
        super().__init__(H, "b1", eps_EM, base, "correct", eps_EM=eps_EM)
        self.V, self.release = V, release
        self.vloc = np.unique(H.index(V.X))
        M = H.matrix
        agree = (M[:, None, self.vloc] == M[None, :, self.vloc]).all(axis=2)   # (h, c)
        self.hbar = np.argmax(agree, axis=1)                                   # first consistent c

    def _cells(self, data: Dataset) -> Cells:
        return cells_of(self.H, Dataset(np.vstack([data.X, self.V.X]), np.concatenate([data.y, self.V.y])))

    def _check_q(self, qidx: np.ndarray) -> None:
        if self.release == "vh" and not np.isin(qidx, self.vloc).all():
            raise PrivauditError(f"{self.name}: release='vh' publishes h on V_X only; queries must "
                                 f"be points of V (domain values {self.H.domain[self.vloc].ravel().tolist()})")

    def _fit_predict(self, cells, qidx, B, rng):
        self._check_q(qidx)
        if self.release == "g":
            return super()._fit_predict(cells, qidx, B, rng)
        rule = self.rule(cells.n)
        blk = relabel_logits(self.H, cells, np.broadcast_to(cells.count, (B, cells.count.size)), rule)
        h = pick(blk.logits, rule.argmax, rng)
        if self.release == "vh":
            return self.H.matrix[h[:, None], qidx[None, :]]
        g = base_outputs(self.H, self.base, h, blk.wT, blk.dis, qidx, rng)
        return g ^ self.H.matrix[self.hbar[h][:, None], qidx[None, :]]

    def _exact(self, cells, qidx):
        self._check_q(qidx)
        if self.release == "g":
            return super()._exact(cells, qidx)
        rule = self.rule(cells.n)
        blk = relabel_logits(self.H, cells, cells.count[None, :], rule)
        Ph = pick_probs(blk.logits, rule.argmax)[0]                         # (K,)
        if self.release == "vh":
            return Ph @ self.H.matrix[:, qidx].astype(np.float64)
        L = base_probs(self.H, self.base, blk.wT, blk.dis, qidx)[0]         # (K, q) Pr[g = 1]
        hb = self.H.matrix[self.hbar][:, qidx].astype(np.float64)
        return Ph @ (L * (1 - hb) + (1 - L) * hb)


@register("lwy-b2", kind="learner", paper=PAPER,
          section="Sec. 3, ABMS20 variant (Baseline-A+V) and improper-learner handling",
          summary="Baseline-A on S = U o V that also releases V^h (V public); private w.r.t. U; "
                  "default output g XOR h_bar, h_bar consistent with V^h",
          variants={"correct": "Baseline-A+V as described in Sec. 3 (release of (A(S^h), V^h))"})
def lwy_b2(eps_EM: float = 1.0, base: str = "em", eps_A: float = 1.0, delta_A: float = 0.0,
           u_size: int = 40, v_size: int = 20, release: str = "aux", cls: str = "thr", grid: int = 8,
           neighbours: str = "replace-one", variant: str = "correct") -> PublicPart:
    """Baseline-A+V (spec B2). Claim w.r.t. U with V fixed [spec 4.1, derived as Claim 23]:
    substitution ``(eps_EM + eps_A + 2 ln 2, 4 e^eps_EM delta_A)``; label flips in U ``(eps_EM, 0)``
    (given h, ``S^h`` and ``V^h`` do not depend on U's labels). Changes inside V are not covered.

    Built-in V: half (1, 0), half (6, 1), plus two (2, 1) points so ``V^h`` shows h at x = 2.
    Pairs (datasets of U): label flip at x = 2 with a biased U (the EM channel, near-tight for
    release "vh"), or the D2 / D3 substitutions of record 0."""
    eps_EM = check_positive("eps_EM", eps_EM)
    if release not in RELEASES:
        raise PrivauditError(f"release must be one of {', '.join(RELEASES)}, got {release!r}")
    _check_neighbours(neighbours)
    neighbours = "replace-one" if neighbours == "auto" else neighbours
    _check_base(base, eps_A, delta_A)
    u_size, v_size = _check_n(u_size, 8, "u_size"), _check_n(v_size, 2, "v_size")
    H = grid_class(cls, grid)
    if H.N < 8:
        raise PrivauditError(f"lwy-b2: the built-in designs need grid >= 8, got {grid}")
    V = designs._ds([(2.0, 1, 2), (1.0, 0, v_size // 2), (6.0, 1, v_size - v_size // 2)])
    L = PublicPart(H, eps_EM, V, Base(base, eps_A, delta_A, 2), release)
    L.name = "lwy-b2"
    if neighbours == "label":
        L.claim = Claim(eps_EM, 0.0, "label", "model")
        # all of U at x = 2: with V's two (2, 1) points, 6 more ones than zeros there puts the
        # pattern "h(2) = 0" in the EM's tail (exact loss 0.93 of eps_EM = 1 at u_size = 40)
        c1 = u_size // 2 + 2
        L.pairs = [designs.d1_label(u_size, c1)]
    else:
        e, d = b1_certified(eps_EM, eps_A, delta_A)
        L.claim = Claim(e, d, "replace-one", "model")
        L.pairs = [designs.d2_membership(u_size), designs.d3_split(u_size)]
    L.queries = np.array([[2.0]]) if release == "vh" else _thr_queries(H)
    L.params = dict(eps_EM=eps_EM, base=base, eps_A=eps_A, delta_A=delta_A, u_size=u_size,
                    v_size=v_size, release=release, cls=cls, grid=grid, neighbours=neighbours,
                    variant=variant)
    return L


# -- P0: Theorem 18 with calibration --------------------------------------------------------------
def calibrate(target: float, n: int, eps_A: float = 1.0) -> float:
    """Spec P0-a: the largest eps_int in [1/n, 1/3] (bisection) with ``n2_certified(eps_int, n,
    eps_A) <= target``; PrivauditError if even eps_int = 1/n (|T| = 1) exceeds the target."""
    f = lambda e: n2_certified(e, n, eps_A, 0.0)[0]          # noqa: E731
    lo, hi = 1.0 / n, 1.0 / 3.0
    if f(lo) > target:
        raise PrivauditError(f"lwy-p0: no eps_int >= 1/n meets target {target} at n = {n} "
                             f"(the bound is {f(lo):.3g} at |T| = 1); increase n or the target")
    if f(hi) <= target:
        return hi
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) <= target else (lo, mid)
    return lo


class Calibrated(Transformation):
    """Theorem 18's pipeline: A_Agnostic at eps_int with A = W1(EMLearner(eps0)) (``wrap=True``)
    or A = EMLearner(1) itself (``wrap=False``: already an empirical learner, spec 3.2)."""

    def __init__(self, H, eps_int: float, eps0: float, wrap: bool, base: Base) -> None:
        super().__init__(H, "n2", eps_int, base, "correct")
        self.eps0, self.wrap = eps0, wrap

    def draws(self, n: int) -> int:
        """Lemma 14: W1 takes m = floor(k / (6 eps0)) draws, so 6 eps0 m / k <= 1."""
        return max(1, int(math.floor(self.k(n) / (6.0 * self.eps0) + 1e-9)))

    def _fit_predict(self, cells, qidx, B, rng):
        if not self.wrap:
            return super()._fit_predict(cells, qidx, B, rng)
        k = self._checked_k(cells)
        rule = self.rule(cells.n)
        blk = relabel_logits(self.H, cells, subsample_counts(cells.count, k, B, rng), rule)
        h = pick(blk.logits, False, rng)
        # W1: m i.i.d. draws from T^h (labels h), then EMLearner(eps0) on the draws
        c = rng.multinomial(self.draws(cells.n), blk.wT / k).astype(np.float64)       # (B, N)
        Mh = self.H.matrix[h].astype(np.float64)                                      # (B, N)
        M = self.H.matrix.astype(np.float64)
        err = (c * (1.0 - Mh)) @ M.T + (c * Mh) @ (1.0 - M).T                         # (B, K)
        g = em_sample(-0.5 * self.eps0 * err, None, rng)
        return self.H.matrix[g[:, None], qidx[None, :]]

    def _exact(self, cells, qidx):
        if self.wrap:
            raise PrivauditError(f"{self.name}: no exact oracle with the W1 wrapper (use wrap=False)")
        return super()._exact(cells, qidx)


@register("lwy-p0", kind="learner", paper=PAPER, section="Theorem 18 (PAC to agnostic), calibrated (spec P0-a)",
          summary="A_Agnostic at the internal eps whose certified Lemma 15 bound meets a target eps, "
                  "with A = W1 around an eps0-DP EMLearner (Lemma 14)",
          variants={"correct": "Theorem 18 with eps_int calibrated so the certified bound is <= the target"})
def lwy_p0(epsilon: float = 0.5, eps0: float = 1.0, wrap: bool = True, base: str = "em",
           cls: str = "thr", grid: int = 8, n: int = 1000, variant: str = "correct") -> Calibrated:
    """Claim ``(n2_certified(eps_int, n, 1), 0)`` <= ``epsilon`` for datasets of ``n`` records
    (W1 makes A (6 eps0 m / k)-DP with 6 eps0 m / k <= 1, and the bound grows with eps_A).
    ``base="locprobe"`` (with ``wrap=False``) swaps A for the 1-DP LocProbe audit probe (D2)."""
    epsilon = check_positive("epsilon", epsilon)
    eps0 = check_positive("eps0", eps0, upper=1.0)
    n = _check_n(n)
    _check_base(base, 1.0, 0.0)
    if base != "em" and wrap:
        raise PrivauditError(f"lwy-p0: the W1 wrapper runs EMLearner; base={base!r} needs wrap=False")
    eps_int = calibrate(epsilon, n)
    H = grid_class(cls, grid)
    if H.N < 8:
        raise PrivauditError(f"lwy-p0: the built-in designs need grid >= 8, got {grid}")
    L = Calibrated(H, eps_int, eps0, bool(wrap), Base(base, 1.0, 0.0, 2))
    L.name = "lwy-p0"
    L.eps_int = eps_int
    L.claim = Claim(n2_certified(eps_int, n, 1.0, 0.0)[0], 0.0, "replace-one", "model")
    L.pairs = ([designs.d2_membership(n)] if base == "locprobe"
               else [designs.d3_split(n), designs.d2_membership(n)])
    L.queries = _thr_queries(H)[:1] if base == "locprobe" else _thr_queries(H)
    L.params = dict(epsilon=epsilon, eps0=eps0, wrap=bool(wrap), base=base, cls=cls, grid=grid, n=n,
                    variant=variant, eps_int=eps_int, k=L.k(n))
    return L


# -- planted P2 bugs ------------------------------------------------------------------------------
V14_DOC = ("BUG V14: one I, h and partition shared by all queries of a run (fresh aggregator coins "
           "only), claiming the single-query certified eps for the whole transcript (model scope)")
V17_DOC = ("BUG V17: P1's portions are consecutive blocks of T in record-index order (T^h not "
           "shuffled), so the output depends on the order of the records")


class SharedStateP2(Aggregate):
    """Theorem 20's P2 with a planted bug (spec 4.4).

    V14 -- shared state. Every run draws one I, one h and one partition and answers all its
    queries with fresh aggregator coins from the same votes. Each query's marginal law is exactly
    the correct P2's, so a prediction-scope audit (single-query events) can never see it; the
    bug is the claim: the single-query eps_cert stated for the transcript (model scope), where
    the joint events are audited. Not detectable black-box at feasible budgets (issue 5 study):
    a violation needs ``(1 - k/n) e^eps + (k/n) R > e^eps_cert``, i.e. a joint likelihood ratio
    R > 34 on the k/n = 10 % of runs whose T holds the record (eps = 0.1, eps_cert = 1.479; the
    4 e^2 = 29.6 of Lemma 15 is why). One record moves one vote, so each answer's ratio is at most
    e (eps_agg = 1), and only where the votes are deterministic -- all r = 13 portions agree
    (D2 at query u), minority answer 0.0015 vs 0.0041 -- so R > 34 needs >= 4 all-minority
    answers: probability <= 0.1 * 0.0041^4 ~ 3e-11 (> 1e10 runs). With balanced votes the count
    is random (the partition) and one extra vote shifts a ~Binomial(13, 1/2) count: measured
    epsilon_lower <= 0.03 at 2e5 runs for Q = 4, 8 answers at x = 2 over designs with 0 to 15 %
    of (3, 0) records. Label flips cannot show it either: T's labels are never read and h is
    eps-DP, so the shared transcript is itself eps-DP. The white-box symptom is the correlation
    of a run's answers (tests/algorithms/li_wang_ye/test_lwy_extra.py).

    V17 -- unshuffled partition. I is drawn uniformly, but T keeps the records' index order and
    P1 cuts it into consecutive portions. Index-aligned substitutions still change one portion
    by one record (the same position of T under both datasets), so replace-one audits see no
    more than for the correct P2; the proof's multiset neighbours (App. B pairs T_hat + {x_1}
    with T_hat + {x_i}) and permutation invariance are broken. A reordered neighbour
    ``S.remove(0).add(x', y')`` is refused by the replace-one check ("datasets differ in 4
    records" on a sorted D2-style S), and even on it the loss is small: T is a uniform
    subsequence, so the one-record shift of every portion boundary moves about one vote --
    measured ln P1/P2 = 0.134 (V17) vs 0.018 (correct) at 4e5 runs per side (n = 1000, eps =
    0.1, 94 records (3, 0), query 2), against eps_cert = 1.479. The white-box permutation test
    (spec 4.5(2)) shows it.
    """

    def _sizes(self, cells: Cells) -> int:
        n, k = cells.n, k_of(self.epsilon, cells.n)
        if self.epsilon * n < 1 or k >= n or k < self.r:
            raise PrivauditError(f"{self.name}: need eps n >= 1, ceil(eps n) < n and ceil(eps n) >= "
                                 f"r = {self.r} (n = {n})")
        return k

    def _relabel(self, cells: Cells, tc: np.ndarray, rng: np.random.Generator):
        rule = RelabelRule("new", self.epsilon * (cells.n - int(tc[0].sum())) / 2.0)
        blk = relabel_logits(self.H, cells, tc, rule)
        h = pick(blk.logits, False, rng)
        M = self.H.matrix.astype(np.float32)
        return h, np.rint(blk.wT).astype(np.int64), 1.0 - 2.0 * M[h], np.ascontiguousarray(M.T)

    def _fit_predict(self, cells, qidx, B, rng):           # V14: per run, not per query
        k = self._sizes(cells)
        h, wT, sign, W = self._relabel(cells, subsample_counts(cells.count, k, B, rng), rng)
        pc = portion_counts(wT, self.r, rng)                 # ONE partition for every query
        out = np.empty((B, qidx.size), dtype=np.int8)
        for j, q in enumerate(qidx):                         # q <= 8 queries
            v1 = self._votes(pc, W, np.full(B, q), sign=sign)
            out[:, j] = aggregate(v1, self.r, self.eps_agg, "em", rng)
        return out

    def _fit_eval(self, cells, qs, rng):                     # V17: a fresh run per query
        k = self._sizes(cells)
        B, n = qs.size, cells.n
        # uniform k-subset per run, kept in index order (the bug: no shuffle before P1)
        idx = np.sort(np.argpartition(rng.random((B, n)), k - 1, axis=1)[:, :k], axis=1)
        rec = cells.order[idx]                                                      # (B, k) cells
        G = cells.count.size
        tc = np.zeros((B, G), np.int64)
        np.add.at(tc, (np.repeat(np.arange(B), k), rec.ravel()), 1)
        h, _, sign, W = self._relabel(cells, tc, rng)
        s = k // self.r
        loc = cells.loc[rec[:, : self.r * s]].reshape(B, self.r, s)                 # domain points
        pc = np.zeros((B, self.r, self.H.N), np.int64)
        np.add.at(pc, (np.arange(B)[:, None, None], np.arange(self.r)[None, :, None], loc), 1)
        v1 = self._votes(pc, W, qs, sign=sign)
        return aggregate(v1, self.r, self.eps_agg, "em", rng)


def p2_variant(L: Aggregate, variant: str) -> Aggregate:
    """Turn a built ``lwy-p2`` into its V14 / V17 variant (called by the ``lwy-p2`` factory)."""
    B = SharedStateP2(L.H, L.alpha, L.eps_agg, L.mode, variant, epsilon=L.epsilon, table=P2_TABLE)
    B.__dict__.update({k: v for k, v in L.__dict__.items() if k not in ("variant", "row")})
    if B.row.shared_state:
        B.per_query = False
        B.scope = "model"
        c = L.claim
        B.certified = Claim(c.epsilon, c.delta, c.neighbours, "prediction")
        B.claim = Claim(c.epsilon, c.delta, c.neighbours, "model")
        B.queries = np.repeat(L.queries[:1], 4, axis=0)      # Q = 4 answers at one point: joint events
    return B



# lwy-p2 lives here, beside its planted bugs (V14 / V17), so li_wang_ye needs nothing from this module
P2_TABLE = {
    "correct": LWYRow("Theorem 20: A_Agnostic with A = P1 (eps_agg = 1), a fresh pipeline per query"),
    "v15": LWYRow("BUG V15: r computed for eps_agg = 1 but the aggregator applies eps (utility "
                  "regression only; privacy unaffected)", r_at_unit_eps=True),
    "v14": LWYRow("BUG V14: one I, h and partition shared by all queries of a run, claiming the "
                  "single-query eps for the transcript (model scope); white-box only: its excess "
                  "loss lives in events of probability < 1e-10 (a correlation test catches it)",
                  shared_state=True),
    "v17": LWYRow("BUG V17: P1's portions cut from T in record-index order (no shuffle); white-box "
                  "only: positional replace-one neighbours change one portion either way (the "
                  "permutation-invariance test catches it)", unshuffled=True),
}
P2_VARIANTS = describe(P2_TABLE)


@register("lwy-p2", kind="learner", paper=PAPER, section="Theorem 20 (agnostic private prediction)",
          summary="A_Agnostic with the subsample-and-aggregate predictor of Lemma 19 as A",
          variants=P2_VARIANTS,
          # spec 4.4: V15 "privacy unaffected; utility regression"; V17 "hard to realize
          # black-box; white-box permutation test"; V14: the spec's tail heuristic needs events of
          # probability < 1e-10 here (measured, see SharedStateP2 below), so only exact/white-box tests see it
          expect={"v14": "white-box", "v15": "utility", "v17": "white-box"})
def lwy_p2(epsilon: float = 0.1, alpha: float = 0.5, cls: str = "thr", grid: int = 8,
           n: int = 1000, neighbours: str = "auto", variant: str = "correct") -> Aggregate:
    """P2; certified ``ln(e^eps + 4 a2 e k/(n-k))`` per query, label flips ``eps``."""
    epsilon = check_positive("epsilon", epsilon, upper=1.0 / 3.0 + 1e-12)
    alpha = check_positive("alpha", alpha, upper=0.999)
    n = _check_n(n)
    _check_neighbours(neighbours)
    neighbours = "replace-one" if neighbours == "auto" else neighbours
    H = grid_class(cls, grid)
    L = Aggregate(H, alpha, 1.0, "em", variant, epsilon=epsilon, table=P2_TABLE)
    L.name = "lwy-p2"
    L.base = Base("em", 1.0, 0.0)
    _claims_n2(L, n, neighbours)
    if neighbours == "label":
        n1, c1 = designs.d1_sizes(epsilon, min_k=L.r)
        L.pairs = [designs.d1_label(n1, c1)]
        L.queries = np.array([[2.0]])
    else:
        L.pairs = [designs.d2_membership(n)]
        L.queries = np.array([[2.0]])
    L.params = dict(epsilon=epsilon, alpha=alpha, cls=cls, grid=grid, n=n, neighbours=neighbours,
                    variant=variant, r=L.r)
    if L.row.shared_state or L.row.unshuffled:
        L = p2_variant(L, variant)
    return L

__all__ = ["PublicPart", "Calibrated", "calibrate", "lwy_p0", "SharedStateP2", "lwy_b2", "p2_variant", "lwy_p2", "P2_VARIANTS", "P2_TABLE", "V14_DOC", "V17_DOC"]
