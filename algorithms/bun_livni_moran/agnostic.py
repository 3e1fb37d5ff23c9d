"""The agnostic private learner of Corollary 2 (BLM-11), as the spec's sound stand-in.

Corollary 2 of the paper turns the realizable learner of Theorem 1 into an agnostic one by the
realizable-to-agnostic transformation of [ABMS20, Thm 2.3] (a generalisation of [BNS15] to
improper learners, stated for eps = O(1)) followed by secrecy of the sample (BLM-12). The paper
gives these steps only by citation, so this module is **[reconstructed]** (spec 3.11):

1. relabelling: choose ``g`` by the exponential mechanism over the *fixed* finite class ``H``
   with score ``-err_S(g)`` (a count, sensitivity 1) and budget ``eps1``
   (``Pr[g] ~ exp(-eps1 err_S(g) / 2)``; the shared EM of `df_em` via `blm_hist.gl_pick`);
2. ``S_g = ((x_i, g(x_i)))_i``: realizable by ``g``;
3. return ``A(S_g)`` with ``A`` = M of Theorem 17 (`blm_m.PrivateLearnerM`, (eps_A, delta)-DP).

What is reconstructed / NOT paper-faithful: ABMS20's candidate set is the data-dependent set of
dichotomies ``Pi_H(S_x)`` with its own (larger) privacy constants; the stand-in uses the fixed
class ``H`` instead (accuracy pays ``log|H|`` instead of VC(H)), which makes the privacy proof
plain adaptive composition. The final secrecy-of-the-sample step (to reach small eps) is not
applied here; compose with `blm_sub`'s analysis if needed.

Claim: **(eps1 + eps_A, delta)-DP**, replace-one, model scope: given ``g``, ``S_g`` and
``S'_g`` differ in at most one example, so A contributes (eps_A, delta) on top of the EM's eps1.
With M's paper split the truth is (eps1 + eps_A/2, delta) (spec 3.9), which is `certified`.

Practical mode (documented parameters of `blm_c2`): ``epsilon`` is the total budget,
``em_share`` the fraction given to the relabelling EM (``eps1 = em_share * epsilon``,
``eps_A = epsilon - eps1``); A is `blm_m`'s practical M (G with budget ``budget_factor * n``,
``k`` batches, ``n'``, public ``eta``). Privacy holds for every such choice (spec 5).

Vectorisation: one EM draw per run over all runs (one numpy call), then the runs are grouped by
their ``g`` and M is run once per *distinct* ``g`` (at most ``|H|`` calls, each vectorised over
its runs). Every run is a complete independent run: its own ``g`` and its own run of M.

Planted bugs (``variant=``): ``b9`` (relabelling by ERM: ``g = argmin err_S``, non-private,
eps infinite on a crossing gap) and ``b10`` (EM temperature ``exp(-eps1 err)``, missing 1/2:
the relabelling stage realizes 2 eps1).

References
----------
M. Bun, R. Livni and S. Moran, "An equivalence between private classification and online
prediction", FOCS 2020, Corollary 2 (agnostic learning) and Sec. I-A ("secrecy of the sample").
N. Alon, A. Beimel, S. Moran and U. Stemmer, "Closure properties for private classification and
online prediction", COLT 2020 [ABMS20], Thm 2.3. A. Beimel, K. Nissim and U. Stemmer,
"Characterizing the sample complexity of private learners", ITCS 2013 / 2015 [BNS15].
"""

from __future__ import annotations

from typing import Any

import numpy as np

from audit.errors import PrivauditError
from audit.types import Claim, Dataset, as_queries

from ..common.checks import check_positive, check_runs
from ..registry import register
from . import designs
from .c2_secrecy import SecrecyLearner
from .hist import PAPER, gl_pick, gl_probabilities, release_probabilities
from .m import PrivateLearnerM, blm_m
from .stable import FAIL

C2_VARIANTS = {
    "correct": "EM over H (score -err_S, eps1) relabels S, then M (Theorem 17) on the relabelled sample",
    "b9": "BUG: relabelling by ERM (g = argmin err_S, the first minimiser) instead of the EM",
    "b10": "BUG: relabelling EM with temperature exp(-eps1 err) (missing 1/2): the stage realizes "
           "2 eps1; audit instance em_share = 0.75 (2 eps1 = 3 > the claim 2 on the EM stage alone; "
           "at the default share 0.5 2 eps1 equals the claim and no design found more)",
    "s1": "BUG (mode = 'secrecy'): the 'subsample' is the first m records (no randomness) while the "
          "amplified claim is kept (spec B17 for Corollary 2): true loss up to the stand-in's eps0 "
          "for a change among the first m records; audit instance mode = 'secrecy', epsilon = 0.25",
}
MODES = ("stand-in", "secrecy")


class AgnosticLearner:
    """Relabel-by-EM then a realizable private learner (the Cor. 2 stand-in, spec 3.11).

    Parameters
    ----------
    A : PrivateLearnerM
        The realizable (eps_A, delta)-DP learner; its class ``A.H`` is the relabelling class.
    eps1 : float
        Budget of the relabelling exponential mechanism.
    variant : str
        See `C2_VARIANTS`.
    """

    name = "blm-c2"

    def __init__(self, A: PrivateLearnerM, eps1: float, variant: str = "correct") -> None:
        if variant not in C2_VARIANTS:
            raise PrivauditError(f"blm-c2: unknown variant {variant!r}; valid: {', '.join(C2_VARIANTS)}")
        if A.variant != "correct":
            raise PrivauditError("blm-c2: the inner learner M must be the correct variant")
        self.A, self.H, self.variant = A, A.H, variant
        self.eps1 = check_positive("eps1", eps1)
        self.claim = Claim(self.eps1 + A.epsilon, A.delta, "replace-one", "model")
        self.certified = (Claim(self.eps1 + A.certified.epsilon, A.delta, "replace-one", "model")
                          if A.certified is not None else None)
        self.chunk_runs = A.chunk_runs
        self.pairs: list = []
        self.queries = A.queries

    def _check(self, data: Any) -> tuple[Dataset, np.ndarray]:
        data, idx = self.A._check(data)
        return data, idx

    def scores(self, data: Any) -> np.ndarray:
        """``err_S(g)`` (counts) for every ``g`` in H, in H's row order."""
        data, idx = self._check(data)
        return self.A._errors(self.H.matrix, (idx, data.y))

    def em_law(self, data: Any) -> np.ndarray:
        """Exact law of the relabelling choice ``g`` over H's rows."""
        return gl_probabilities(self.scores(data), self.eps1, self.variant)

    def relabel(self, data: Dataset, g: int) -> Dataset:
        """``S_g``: the same points, labelled by ``g``."""
        return Dataset(data.X, self.H.matrix[g][self.H.index(data.X)])

    def predict(self, data: Any, queries: Any, runs: int, rng: np.random.Generator) -> np.ndarray:
        data, _ = self._check(data)
        runs = check_runs(runs)
        qi = self.H.index(as_queries(queries, data.d))
        err = self.scores(data)
        g = gl_pick(err, np.ones((runs, self.H.size), dtype=bool), self.eps1, self.variant, rng)
        out = np.empty((runs, qi.size), dtype=np.int8)
        for h in np.unique(g):
            rows = np.flatnonzero(g == h)
            out[rows] = self.A._predict(self.relabel(data, int(h)), qi, rows.size, rng)
        return out

    def exact(self, data: Any, queries: Any) -> np.ndarray:
        """Exact ``Pr[label = 1]`` per query: the EM law mixed with M's exact oracle on each
        ``S_g`` (exists when G is deterministic on every relabelled batch, e.g. the designs)."""
        data, _ = self._check(data)
        law = self.em_law(data)
        out = np.zeros(as_queries(queries, data.d).shape[0])
        for h in np.flatnonzero(law > 0):
            out += law[h] * self.inner_exact(self.relabel(data, int(h)), int(h), queries)
        return out

    def inner_exact(self, S_g: Dataset, g: int, queries: Any) -> np.ndarray:
        """Exact ``Pr[M(S_g)(q) = 1]``. On a relabelled sample G typically outputs ``g`` or FAIL
        on each batch (independently): then the count of ``g`` is Poisson-binomial, and M outputs
        ``g`` iff Hist releases it above the pruning threshold (``L' = {g}``), else the all-zero
        ``h_default``. Other cases defer to M's own oracle (G deterministic per batch)."""
        A = self.A
        items, P, _ = A.laws(S_g)
        gb = self.H.matrix[g].tobytes()
        if not set(items) <= {gb, FAIL}:
            return A.exact(S_g, queries)
        p = P[:, items.index(gb)] if gb in items else np.zeros(A.k)
        pmf = np.ones(1)
        for pi in p:                       # Poisson-binomial law of the count of g
            pmf = np.convolve(pmf, [1.0 - pi, pi])
        r = release_probabilities(np.arange(A.k + 1), A.eps_H, A.delta, "correct", A.prune_count)
        qi = self.H.index(as_queries(queries, S_g.d))
        return float(pmf @ r) * self.H.matrix[g][qi].astype(np.float64)

    def default_pairs(self, gaps: tuple[int, ...] | None = None) -> list[tuple[Dataset, Dataset]]:
        """Label-flip designs on the relabelling stage (see `relabel_gap_pair`): the crossing gap
        ``+1 -> -1`` (a deterministic flip for an ERM relabelling) and a tail gap
        ``max(3, round(4/eps1))`` (rare outputs, where the EM's likelihood ratio approaches
        ``e^eps1``, and ``e^(2 eps1)`` for the missing-1/2 bug)."""
        if gaps is None:
            gaps = (1, max(3, round(4.0 / self.eps1)))
        pairs = []
        for gap in gaps:
            try:
                pairs.append(relabel_gap_pair(self, gap))
            except PrivauditError:
                continue
        return pairs

    def __repr__(self) -> str:
        return f"<blm-c2 variant={self.variant} eps1={self.eps1} A={self.A!r} {self.claim.describe()}>"


def relabel_gap_pair(L: AgnosticLearner, gap: int) -> tuple[Dataset, Dataset]:
    """Two datasets differing in one *label* at ``x0`` with ``err(a) - err(b) = gap`` in S and
    ``gap - 2`` in S' (``a`` = the point at ``x0``, ``b`` = all-zero; every other hypothesis
    has many more errors). The points are M's gadget layout (batches covering the domain), so
    after relabelling G is deterministic, M outputs ``g`` itself with probability ~1, and
    ``S_g = S'_g``: the pair isolates the relabelling EM (its exact loss is at most eps1)."""
    A, H = L.A, L.H
    if A.gp.n < H.N or not designs.gadget_budget_ok(A.d, A.gp):
        raise PrivauditError("blm-c2 designs need gadget-sized batches (n_aux >= |X|)")
    rows = {tuple(r): i for i, r in enumerate(H.matrix.tolist())}
    t = designs.tables(H.N)
    if tuple(t["a"].tolist()) not in rows or tuple(t["b"].tolist()) not in rows:
        raise PrivauditError("blm-c2 designs need the all-zero and the point-at-x0 hypotheses in H")
    lay = designs.Layout(H.domain, A.gp, A.k, A.n_prime)
    xs, _ = lay.dataset([t["b"]] * A.k, [1] * A.n_prime, [0] * A.n_prime)
    at0 = np.flatnonzero(xs == 0)
    if (at0.size - gap) % 2:          # parity of err(a) - err(b) = c0 - 2 ones: move one S' point to x0
        xs[-1] = 0
        at0 = np.flatnonzero(xs == 0)
    ones = (at0.size - gap) // 2
    if ones < 1 or ones >= at0.size:
        raise PrivauditError(f"blm-c2: gap {gap} does not fit {at0.size} examples at x0")
    ys = np.zeros(xs.size, np.int8)
    ys[at0[:ones]] = 1
    S = lay.to_data(xs, ys)
    return S, S.replace(int(at0[ones]), H.domain[0], 1)


@register("blm-c2", kind="learner", paper=PAPER,
          section="Corollary 2 (agnostic learner) via [ABMS20] Thm 2.3 [reconstructed stand-in]",
          summary="agnostic stand-in: EM over H relabels S (eps1), then M of Theorem 17 on the "
                  "relabelled sample; (eps1 + eps_A, delta)-DP",
          variants=C2_VARIANTS, instances={"b10": {"em_share": 0.75},
                                           "s1": {"mode": "secrecy", "epsilon": 0.25}})
def blm_c2(epsilon: float = 2.0, delta: float = 1e-3, em_share: float = 0.5, cls: str = "point",
           grid: int = 4, split: str = "parallel", k: int = 64, n_prime: int = 20, eta: float = 0.02,
           alpha_G: float = 0.5, budget_factor: int = 8, mode: str = "stand-in",
           epsilon0: float = 2.0, variant: str = "correct") -> Any:
    """BLM-11 practical mode: ``eps1 = em_share * epsilon`` for the relabelling EM, the rest
    (``eps_A``) for `blm_m`'s M with the given practical parameters.

    ``mode="stand-in"`` (default): the stand-in itself, (epsilon, delta)-DP with epsilon its total
    budget. ``mode="secrecy"``: Corollary 2's last step, secrecy of the sample (BLM-12,
    `c2_secrecy`): the stand-in at total budget ``epsilon0`` runs on a uniform random subsample
    at rate ``(e^epsilon - 1)/(e^epsilon0 - 1)``, so the claim is the target ``epsilon`` (any
    value in (0, epsilon0]) with delta scaled by the rate (amplification bound)."""
    if mode not in MODES:
        raise PrivauditError(f"blm-c2: unknown mode {mode!r}; valid: {', '.join(MODES)}")
    if mode == "secrecy":
        target = check_positive("epsilon", epsilon)
        inner = blm_c2(epsilon0, delta, em_share, cls, grid, split, k, n_prime, eta, alpha_G,
                       budget_factor, "stand-in", epsilon0,
                       variant if variant in ("b9", "b10") else "correct")
        W = SecrecyLearner(inner, target, first_m=variant == "s1")
        W.pairs = [W.design_pair(p) for p in inner.pairs]
        return W
    if variant == "s1":
        raise PrivauditError("blm-c2: variant s1 plants its bug in mode='secrecy'")
    epsilon = check_positive("epsilon", epsilon)
    share = check_positive("em_share", em_share, upper=1.0)
    if share >= 1.0:
        raise PrivauditError("em_share must be < 1 (M needs a positive budget)")
    A = blm_m(epsilon=epsilon * (1.0 - share), delta=delta, cls=cls, grid=grid, split=split, k=k,
              n_prime=n_prime, eta=eta, alpha_G=alpha_G, budget_factor=budget_factor)
    L = AgnosticLearner(A, epsilon * share, variant)
    L.pairs = L.default_pairs()
    L.queries = A.H.domain[:1]
    return L


__all__ = ["AgnosticLearner", "C2_VARIANTS", "blm_c2", "relabel_gap_pair"]
