"""Packing audits: a privacy lower bound from a learner's success probabilities alone.

The lower-bound proofs of Chaudhuri & Hsu (COLT 2011; Theorem 5, Lemma 11, Theorem 12) hold an
audit that needs no event search (spec ``chaudhuri_hsu.md`` section 7.5). Take datasets
``S_1..S_K`` and pairwise DISJOINT success regions ``R_1..R_K`` of released models, and let
``p_j = P[A(S_j) in R_j]``. For every i, disjointness and group privacy (`audit.group`: datasets
``d_ij`` moves apart) give

    1 - p_i >= sum_{j != i} P[A(S_i) in R_j] >= sum_{j != i} e^{-d_ij eps} (p_j - delta_{d_ij})_+

so with ``delta = 0`` and all distances at most ``k_max``:

    eps >= (1 / k_max) ln( sum_{j != i} p_j / (1 - p_i) ).

Statistics: one one-sided Clopper-Pearson LOWER bound ``p_j^lo`` per dataset, each at level
``(1 - confidence) / K`` (Bonferroni over the family); the upper bound on ``1 - p_i`` is
``1 - p_i^lo``, the same bounds, so every ``i`` may be tried at no extra cost and the largest
bound is reported. With the per-pair distances ``d_ij`` the bound is the root in eps of
``sum_j e^{-d_ij eps} (p_j^lo - delta_{d_ij}(eps))_+ = 1 - p_i^lo`` (bisection; the closed form
above when all distances are equal and delta = 0), never weaker than the ``k_max`` formula.

Regions live on the released MODEL: region j is "the predictions at the family's query points Q
are within Hamming distance ``radius`` of ``centres[j]``" — disjoint whenever every two centres
differ in more than ``2 radius`` points, which is checked. (A user's own membership function may
replace the balls; its disjointness is then the user's declaration, recorded in the result.)
Learners that release only single predictions (scope "prediction") cannot be audited this way:
many queries of one model are exactly what such a claim does not cover.

Seeds: dataset j's runs draw from ``SeedSequence(seed, spawn_key=(4, j, chunk))``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from . import stats
from .errors import PrivauditError
from .group import distance, group_delta
from .interfaces import certified_of, is_learner, name_of, params_of
from .provenance import git_commit, versions
from .reducers import EventCounter
from .result import AuditResult
from .runners.base import Job, Runner
from .runners.local import LocalRunner
from .types import Claim, as_dataset, as_queries

PACKING = 4                       # spawn-key phase of packing jobs (0-3 are the pair audit's)
DEFAULT_PACKING_RUNS = 10_000
MAX_FAMILY = 20_000


@dataclass(frozen=True)
class Region:
    """The event "the released model's predictions at the family's queries lie within Hamming
    distance `radius` of `centre`" (or the user's `member(index, predictions)` when given)."""

    index: int
    centre: tuple
    radius: int = 0
    member: Any = None

    def contains(self, outputs: np.ndarray) -> np.ndarray:
        if self.member is not None:
            hit = np.asarray(self.member(self.index, outputs), dtype=bool)
            if hit.shape != (outputs.shape[0],):
                raise PrivauditError(f"the family's membership test returned shape {hit.shape} for "
                                     f"{outputs.shape[0]} runs; expected one bool per run")
            return hit
        c = np.asarray(self.centre, dtype=np.int8)
        if self.radius == 0:
            return np.all(outputs == c, axis=1)
        return np.count_nonzero(outputs != c, axis=1) <= self.radius

    def to_dict(self) -> dict:
        return {"type": "region", "index": self.index, "radius": self.radius,
                "user_member": self.member is not None}

    def describe(self) -> str:
        if self.member is not None:
            return f"success region R_{self.index} (user's membership test)"
        return f"predictions within Hamming {self.radius} of the centre of R_{self.index}"


@dataclass(frozen=True, eq=False)
class PackingFamily:
    """Datasets ``S_j`` and disjoint success regions ``R_j`` of released models.

    Parameters
    ----------
    datasets : sequence of Dataset (or {"X", "y"} dicts)
        ``S_1..S_K``, K >= 2.
    queries : array (q, d)
        The points Q where a released model is evaluated.
    centres : array (K, q) of {0, 1}
        Region j is the Hamming ball of radius `radius` around ``centres[j]`` on Q.
    radius : int
        Ball radius in points of Q (0: the exact prediction pattern).
    name, description : str
        Shown in results; say where the family comes from (paper, lemma).
    relation : str
        The relation the family was designed for (informative: distances are always computed
        under the audited claim's relation).
    member : callable (j, predictions (runs, q)) -> bool (runs,), optional
        A user's own region test instead of the balls; the regions' disjointness is then declared
        by the user, not checked.
    params : dict
        How the family was built (recorded in the result).
    pivot : int, optional
        A dataset i named before any run: the bound is computed through i only, with half the
        error budget on ``1 - p_i`` and half shared by the other K - 1 lower bounds (instead of
        every i at ``(1 - confidence)/K`` each). Stronger when the datasets are alike (e.g. a
        non-private learner succeeding everywhere): spec 7.5's LB5 example, 6.68 -> 7.15.
    """

    datasets: Sequence[Any]
    queries: Any
    centres: Any = None
    radius: int = 0
    name: str = "family"
    description: str = ""
    relation: str = "replace-one"
    member: Callable | None = None
    params: dict = field(default_factory=dict)
    pivot: int | None = None

    def __post_init__(self) -> None:
        if self.pivot is not None and (isinstance(self.pivot, bool) or
                                       not isinstance(self.pivot, (int, np.integer))):
            raise PrivauditError(f"{self.name}: pivot must be a dataset index, got {self.pivot!r}")
        ds = tuple(as_dataset(S, f"{self.name} dataset {j}") for j, S in enumerate(self.datasets))
        if not 2 <= len(ds) <= MAX_FAMILY:
            raise PrivauditError(f"a packing family needs between 2 and {MAX_FAMILY} datasets, got {len(ds)}")
        dims = {S.d for S in ds}
        if len(dims) != 1:
            raise PrivauditError(f"{self.name}: the datasets have different numbers of features {sorted(dims)}")
        Q = as_queries(self.queries, ds[0].d)
        if self.pivot is not None and not 0 <= int(self.pivot) < len(ds):
            raise PrivauditError(f"{self.name}: pivot must be in [0, {len(ds) - 1}], got {self.pivot}")
        object.__setattr__(self, "datasets", ds)
        object.__setattr__(self, "queries", Q)
        if isinstance(self.radius, bool) or not isinstance(self.radius, (int, np.integer)) or self.radius < 0:
            raise PrivauditError(f"{self.name}: radius must be an integer >= 0, got {self.radius!r}")
        object.__setattr__(self, "radius", int(self.radius))
        if self.member is not None:
            if not callable(self.member):
                raise PrivauditError(f"{self.name}: member must be callable (j, predictions) -> bool array")
            return
        if self.centres is None:
            raise PrivauditError(f"{self.name}: give centres (one prediction pattern per dataset) or member")
        C = np.asarray(self.centres)
        if C.shape != (len(ds), Q.shape[0]):
            raise PrivauditError(f"{self.name}: centres must have shape (datasets, queries) = "
                                 f"({len(ds)}, {Q.shape[0]}); got {C.shape}")
        if not np.all((C == 0) | (C == 1)):
            raise PrivauditError(f"{self.name}: centres must hold labels in {{0, 1}}")
        C = C.astype(np.int8)
        sep = min_separation(C)
        if sep <= 2 * self.radius:
            raise PrivauditError(f"{self.name}: the regions are not disjoint: two centres differ in "
                                 f"only {sep} of {Q.shape[0]} queries, need more than 2 * radius = "
                                 f"{2 * self.radius}")
        C.setflags(write=False)
        object.__setattr__(self, "centres", C)

    @property
    def size(self) -> int:
        return len(self.datasets)

    def region(self, j: int) -> Region:
        if self.member is not None:
            return Region(j, (), self.radius, self.member)
        return Region(j, tuple(int(v) for v in self.centres[j]), self.radius)

    def distances(self, relation: str) -> np.ndarray:
        """(K, K) int64: moves of `relation` between every two datasets (`audit.group.distance`)."""
        ds = self.datasets
        K = len(ds)
        sizes = {S.n for S in ds}
        if relation in ("replace-one", "label") and len(sizes) == 1:
            X = np.stack([S.X for S in ds])           # (K, n, d)
            y = np.stack([S.y for S in ds])           # (K, n)
            D = np.zeros((K, K), dtype=np.int64)
            step = max(1, 2_000_000 // max(1, K * X.shape[1] * X.shape[2]))
            for a in range(0, K, step):
                xd = np.any(X[a:a + step, None] != X[None], axis=3)     # (b, K, n)
                if relation == "label" and np.any(xd):
                    i, j = np.argwhere(np.any(xd, axis=2))[0]
                    raise PrivauditError(f"{self.name}: datasets {a + i} and {j} differ in features; "
                                         f"a label claim allows label moves only")
                D[a:a + step] = np.count_nonzero(xd | (y[a:a + step, None] != y[None]), axis=2)
            return D
        D = np.zeros((K, K), dtype=np.int64)
        for i in range(K):
            for j in range(i + 1, K):
                try:
                    D[i, j] = D[j, i] = distance(ds[i], ds[j], relation)
                except PrivauditError as exc:
                    raise PrivauditError(f"{self.name}: datasets {i} and {j}: {exc}") from None
        return D

    def describe(self) -> dict:
        return {"name": self.name, "description": self.description, "datasets": self.size,
                "queries": int(self.queries.shape[0]), "radius": self.radius,
                "designed_for": self.relation, "regions": "user membership test (disjointness "
                "declared, not checked)" if self.member is not None else "Hamming balls on the "
                "queries (disjointness checked)", "params": dict(self.params),
                "pivot_declared": self.pivot}


def min_separation(C: np.ndarray) -> int:
    """The least Hamming distance between two rows of C (chunked: K may be thousands)."""
    K = C.shape[0]
    best = C.shape[1]
    step = max(1, 4_000_000 // max(1, K * C.shape[1]))
    for a in range(0, K, step):
        d = np.count_nonzero(C[a:a + step, None, :] != C[None, :, :], axis=2)
        for r in range(d.shape[0]):
            d[r, a + r] = C.shape[1] + 1
        best = min(best, int(d.min()))
    return best


# ---------------------------------------------------------------------------------------------
# the bound
# ---------------------------------------------------------------------------------------------
def _g(eps: float, p: np.ndarray, d: np.ndarray, delta: float) -> float:
    """``sum_j e^{-d_j eps} (p_j - delta_{d_j}(eps))_+`` over the other datasets j."""
    if delta == 0.0:
        return float(np.sum(np.exp(-d * eps) * p))
    dk = np.array([group_delta(eps, delta, int(k)) for k in d])
    return float(np.sum(np.exp(-d * eps) * np.clip(p - dk, 0.0, None)))


def epsilon_bound(p_lo: np.ndarray, D: np.ndarray, i: int, delta: float = 0.0) -> float:
    """The largest eps that the family refutes through dataset i: the root of
    ``_g(eps) = 1 - p_lo[i]`` (0 when even eps = 0 is consistent)."""
    others = np.arange(p_lo.size) != i
    p, d = p_lo[others], D[i, others].astype(np.float64)
    U = 1.0 - float(p_lo[i])
    keep = p > 0
    p, d = p[keep], d[keep]
    if p.size == 0 or _g(0.0, p, d, delta) <= U:
        return 0.0
    if delta == 0.0 and np.all(d == d[0]):
        return float(math.log(float(p.sum()) / U) / d[0])
    lo, hi = 0.0, 1.0
    while _g(hi, p, d, delta) > U:
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            return math.inf
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _g(mid, p, d, delta) > U else (lo, mid)
    return lo


def delta_bound(p_lo: np.ndarray, D: np.ndarray, i: int, epsilon: float) -> float:
    """The least delta consistent with the counts at `epsilon`, through dataset i."""
    others = np.arange(p_lo.size) != i
    p, d = p_lo[others], D[i, others]
    U = 1.0 - float(p_lo[i])

    def g(delta: float) -> float:
        return _g(epsilon, p, d.astype(np.float64), delta)

    if g(0.0) <= U:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if g(mid) > U else (lo, mid)
    return lo


def kmax_formula(p_lo: np.ndarray, k_max: int, i: int) -> float:
    """Spec 7.5 verbatim: ``(1/k_max) ln( sum_{j != i} p_j / (1 - p_i) )`` (may be negative)."""
    s = float(p_lo.sum() - p_lo[i])
    U = 1.0 - float(p_lo[i])
    return -math.inf if s <= 0 else math.log(s / U) / k_max


@dataclass
class PackingBound:
    """The counts and bounds of one packing audit."""

    successes: np.ndarray          # (K,) runs of A(S_j) landing in R_j
    runs: np.ndarray               # (K,)
    p_lo: np.ndarray               # (K,) one-sided CP lower bounds at alpha / K
    distances: np.ndarray          # (K, K)
    alpha_per_bound: float
    epsilon_lower: float
    pivot: int                     # the i of the best bound
    kmax_epsilon: float            # the k_max formula at the pivot
    delta_lower: float
    violation: bool
    max_certifiable_epsilon: float


def packing_bound(successes: Any, runs: Any, D: np.ndarray, claim: Claim,
                  confidence: float, pivot: int | None = None) -> PackingBound:
    """The bound of spec 7.5 from success counts (pure statistics; no black box).

    Without `pivot`: K lower bounds at ``(1 - confidence)/K`` and the best i. With a pivot named
    in advance: ``p_pivot^lo`` at ``(1 - confidence)/2``, the others at ``(1 - confidence)/(2(K-1))``,
    and the bound through the pivot only."""
    k = np.asarray(successes, dtype=np.int64)
    n = np.asarray(runs, dtype=np.int64)
    K = k.size
    a = 1.0 - confidence
    if pivot is None:
        levels = np.full(K, a / K)
    else:
        levels = np.full(K, a / (2 * (K - 1)))
        levels[pivot] = a / 2
    p_lo, full = np.empty(K), np.empty(K)
    for lev in np.unique(levels):             # at most two levels
        sel = levels == lev
        p_lo[sel] = stats.cp_lower(k[sel], n[sel], float(lev))
        full[sel] = stats.cp_lower(n[sel], n[sel], float(lev))
    if pivot is None:
        eps = np.array([epsilon_bound(p_lo, D, i, claim.delta) for i in range(K)])
        i = int(np.argmax(eps))
        ceiling = max(epsilon_bound(full, D, j, claim.delta) for j in range(min(K, 64)))
        delta_lo = max(delta_bound(p_lo, D, j, claim.epsilon) for j in np.argsort(-eps)[:8])
        best = float(eps[i])
    else:
        i = int(pivot)
        best = epsilon_bound(p_lo, D, i, claim.delta)
        ceiling = epsilon_bound(full, D, i, claim.delta)
        delta_lo = delta_bound(p_lo, D, i, claim.epsilon)
    k_max = int(D.max())
    return PackingBound(k, n, p_lo, D, float(levels.min()), best, i,
                        kmax_formula(p_lo, max(k_max, 1), i), float(delta_lo),
                        bool(best > claim.epsilon), float(ceiling))


# ---------------------------------------------------------------------------------------------
# the audit
# ---------------------------------------------------------------------------------------------
def check_packable(learner: Any, claim: Claim) -> None:
    """A one-line refusal unless `learner` can be audited by a packing (model scope)."""
    if not is_learner(learner):
        raise PrivauditError(f"{name_of(learner)!r} is not a Learner: packing audits test regions of "
                             f"released models (audit a mechanism with pairs)")
    if claim.scope != "model":
        raise PrivauditError(f"{name_of(learner)} claims {claim.scope} scope (only single predictions "
                             f"are private), so it cannot be audited by a packing, which evaluates the "
                             f"released model at many points: audit it with pairs")


def audit_packing(learner: Any, family: PackingFamily, *, claim: Claim, confidence: float = 0.95,
                  runs: int = DEFAULT_PACKING_RUNS, seed: int = 0, runner: Runner | None = None,
                  journal: Any = None, progress: Any = None, against: str = "claim",
                  params: dict | None = None) -> AuditResult:
    """Audit `learner` on `family` (spec 7.5): `runs` runs per dataset, success counts only.

    Returns an `AuditResult` whose ``epsilon_lower`` is the packing bound, ``tests`` the family
    size (Bonferroni), ``witness`` None and ``search["packing"]`` the counts, distances and the
    dataset i behind the bound.
    """
    check_packable(learner, claim)
    if not isinstance(family, PackingFamily):
        raise PrivauditError(f"family must be an audit.packing.PackingFamily, got {type(family).__name__}")
    if isinstance(runs, bool) or not isinstance(runs, (int, np.integer)) or runs < 1:
        raise PrivauditError(f"runs must be a positive integer, got {runs!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise PrivauditError(f"confidence must be in (0, 1), got {confidence!r}")
    runner = runner if runner is not None else LocalRunner()
    t0 = time.perf_counter()
    D = family.distances(claim.neighbours)
    jobs = [Job(learner, S, int(runs), EventCounter((family.region(j),)), (PACKING, j), family.queries)
            for j, S in enumerate(family.datasets)]
    reds = runner.run(jobs, seed, journal=journal, progress=progress)
    succ = np.array([int(r.counts[0]) for r in reds], dtype=np.int64)
    n = np.array([int(r.runs) for r in reds], dtype=np.int64)
    b = packing_bound(succ, n, D, claim, confidence, family.pivot)
    t1 = time.perf_counter()
    i = b.pivot
    info = {
        "strategy": "packing audit (Chaudhuri & Hsu 2011, proofs of Theorem 5 / Lemma 11 / "
                    "Theorem 12; spec 7.5)",
        "packing": {
            **family.describe(),
            "relation": claim.neighbours,
            "k_max": int(D.max()), "k_min": int(D[~np.eye(D.shape[0], dtype=bool)].min()),
            "pivot": i, "pivot_distance_max": int(D[i].max()),
            "epsilon_kmax_formula": b.kmax_epsilon,
            "successes": b.successes.tolist(), "runs": b.runs.tolist(),
            "p_lo": b.p_lo.tolist(),
            "one_minus_p_pivot_hi": 1.0 - float(b.p_lo[i]),
            "sum_other_p_lo": float(b.p_lo.sum() - b.p_lo[i]),
            "formula": "eps >= (1/k) ln( sum_{j != i} p_j^lo / (1 - p_i^lo) ), per-pair distances "
                       "k = d_ij (spec 7.5)",
        },
        "history": [],
    }
    per = "" if D.max() <= 1 else (
        f"; the datasets are up to {int(D.max())} {claim.neighbours} moves apart, and the bound is "
        f"already per individual (group privacy is inside the formula)")
    notes = [f"packing audit on family {family.name!r} ({family.size} datasets, {runs} runs each): "
             f"success counts only, no event search{per}"]
    if family.member is not None:
        notes.append("the success regions come from the user's membership test: their "
                     "disjointness is declared, not checked")
    return AuditResult(
        algorithm=name_of(learner), kind="learner", claim=claim, epsilon_lower=b.epsilon_lower,
        delta_lower=b.delta_lower, violation=b.violation, confidence=float(confidence),
        correction="bonferroni over the family" + ("" if family.pivot is None else
                                                   f" (pivot {family.pivot} named in advance: "
                                                   f"half the error budget on 1 - p_pivot)"),
        tests=family.size,
        alpha_per_bound=b.alpha_per_bound, max_certifiable_epsilon=b.max_certifiable_epsilon,
        witness=None, confirmed=[], explore_runs=0, confirm_runs=int(runs), seed=int(seed),
        params=dict(params or params_of(learner)), certified=certified_of(learner),
        against=against, search=info, runner=runner.describe(),
        timings={"confirm_s": round(t1 - t0, 4), "total_s": round(t1 - t0, 4)},
        versions={**versions(), "git_commit": git_commit(learner)}, notes=notes)


__all__ = ["PackingFamily", "Region", "PackingBound", "packing_bound", "epsilon_bound",
           "delta_bound", "kmax_formula", "audit_packing", "check_packable", "min_separation",
           "DEFAULT_PACKING_RUNS", "PACKING"]
