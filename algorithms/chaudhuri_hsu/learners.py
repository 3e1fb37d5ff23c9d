"""The learners of Chaudhuri & Hsu (COLT 2011) as auditable black boxes, with planted bugs.

Notation (spec section 0): the paper's ``alpha`` is the PRIVACY parameter (the claim's epsilon);
its ``epsilon`` is the target excess error (here ``epsilon_acc``) and its ``delta`` the learning
failure probability (``delta_fail``) -- never a DP delta. Labels are {0, 1} (the paper's -1 is 0).

Registered learners (all output one hypothesis, so every claim has scope "model"):

* ``ch-em``  -- the exponential mechanism over a finite, data-independent candidate list:
  ``Pr[g] ~ exp(-alpha c_g(S) / 2)``, ``c_g(S)`` the mistake count (McSherry & Talwar 2007; step 3
  of every figure). Claim: alpha-DP, replace-one.
* ``ch-a1``  -- Algorithm A_1 (Figure 1, Theorem 7/8): KAPPA (step 1, eq. (4)), COVER-U (step 2,
  Lemma 13), EM (step 3). Claim: alpha-privacy (Definition 3: replace one example), for any U.
* ``ch-a1r`` -- Algorithm A_1r (Figure 2, Theorem 9): as A_1 with eq. (5). Same claim.
* ``ch-a2``  -- Algorithm A_2 (Figure 3 / Appendix E, Theorem 26/27): COVER-X of the unlabeled
  sample at scale epsilon/4, then EM. Claim: alpha-LABEL privacy only (Definition 2).
* ``ch-erm`` -- non-private ERM (spec 3.4), a NEGATIVE CONTROL: it carries an alpha-DP claim that
  it cannot meet, and every audit is expected to flag it.

The exponential-mechanism weights and draws come from `algorithms.common.sampling` (`em_log_weights`,
utilities ``-c_g``, sensitivity 1; `em_sample`). All runs of a `predict` call share one candidate list and one
log-probability vector, so the runs' hypotheses are drawn at once by inverse-CDF sampling from the
precomputed probabilities (``O(runs log |G|)``; the same law as Gumbel-max, which costs
``O(runs |G|)``); planted bugs that are defined by noise on the scores (BRK-2, BRK-4, FP-4) add
that noise explicitly, blockwise over runs.

Exact oracles: ``output_distribution(data) -> (rows, probs)`` is the exact law of the released
hypothesis (rows of ``learner.H``), and ``exact(data, queries)`` the exact ``Pr[label = 1]`` at each
query (spec 7.3). Report-noisy-min variants (BRK-4, FP-4) have none (PrivauditError).

Planted bugs (spec 7.7, ``variant="brk-..."``) and negative controls (``fp-...``) are the rows of
`EM_TABLE`, `COVER_TABLE` and `A2_TABLE` (`CHRow`); each row says what it plants. Every planted bug
is flagged on the learner's own pairs (``learner.pairs``/``queries``, what ``privaudit audit NAME
--variant V`` uses): the designs of spec 7.3 (`replace_designs`, `label_designs`), BRK-14 on
`add_remove_designs`, BRK-15 on its own `underflow_pair` (a pile at the float32 underflow count),
and BRK-5 at its registry audit instance ``alpha = 0.1, epsilon_acc = 0.5`` (`INSTANCES`; the spec's
detection row: a bug only when epsilon_acc > alpha).

References
----------
K. Chaudhuri and D. Hsu, "Sample complexity bounds for differentially private learning",
COLT 2011, JMLR W&CP 19:155-186: Definitions 2-3, Lemma 13, Lemma 18, Theorems 7-9, 26-27,
Figures 1-3. F. McSherry and K. Talwar, "Mechanism design via differential privacy", FOCS 2007.
"""

from __future__ import annotations

import hashlib
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from scipy.special import logsumexp

from audit import validate
from audit.errors import PrivauditError
from audit.types import Claim, Dataset, as_dataset, as_queries

from ..common.checks import check_positive, check_runs
from ..common.hypotheses import HypothesisClass
from ..common.sampling import em_log_weights, em_sample
from ..common.variants import Row, describe, row_of
from ..registry import register
from . import covers as cv

PAPER = "Chaudhuri & Hsu, Sample complexity bounds for differentially private learning (COLT 2011)"
BLOCK = 1 << 21            # noise entries per block for the noise-defined variants (bounds memory)
MAX_QUERIES = 8

# Audit instances (registry): BRK-5 releases EM at epsilon_acc instead of alpha, so it is a bug only
# when epsilon_acc > alpha (spec 7.7: "flagged whenever eps_acc > alpha (e.g. alpha = 0.1, eps =
# 0.5)"); at the defaults (alpha 1, epsilon_acc 0.1) it is merely over-private. The correct learner
# at the same instance passes on the same pairs (tests/algorithms/chaudhuri_hsu/test_ch_audit.py).
INSTANCES = {"brk-5": {"alpha": 0.1, "epsilon_acc": 0.5}}


# ---------------------------------------------------------------------------------------------
# argument checking
# ---------------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------------
# the data as the learners see it
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Summary:
    """Per-grid-point label counts of a dataset: all any learner here needs of it (plus X for the
    data-seeded bug)."""

    c0: np.ndarray          # (N,) records labelled 0 at each grid point
    c1: np.ndarray          # (N,) records labelled 1
    n: int
    data: Dataset

    @property
    def n_pos(self) -> int:
        return int(self.c1.sum())

    @property
    def xw(self) -> np.ndarray:
        """The empirical distribution of X on the grid (COVER-X weights)."""
        return (self.c0 + self.c1) / self.n


def mistakes(H: HypothesisClass, rows: np.ndarray, s: Summary) -> tuple[np.ndarray, np.ndarray]:
    """False positives and false negatives of each row on the data: two (len(rows),) float64."""
    M = H.matrix[rows].astype(np.float64)
    fp = M @ s.c0
    fn = s.c1.sum() - M @ s.c1
    return fp, fn


# ---------------------------------------------------------------------------------------------
# the variants: one table of rows (algorithms/common/variants.py); the steps a bug swaps in
# ---------------------------------------------------------------------------------------------
def errors(fp: np.ndarray, fn: np.ndarray, s: Summary) -> np.ndarray:
    """The published utility ``-c_g(S)`` (mistake count, sensitivity 1)."""
    return -(fp + fn)


def normalised_errors(fp: np.ndarray, fn: np.ndarray, s: Summary) -> np.ndarray:
    """FP-1: ``-err_S(g) = -c_g / m`` (sensitivity 1/m, over-private at sensitivity 1)."""
    return -(fp + fn) / s.n


def balanced_errors(fp: np.ndarray, fn: np.ndarray, s: Summary) -> np.ndarray:
    """BRK-12: ``-(m/2)(FN/n_pos + FP/n_neg)``, whose sensitivity is not 1 when a class is rare."""
    return -(s.n / 2.0) * (fn / max(s.n_pos, 1) + fp / max(s.n - s.n_pos, 1))


def float32_unshifted_law(c: np.ndarray, alpha: float) -> np.ndarray:
    """BRK-15: ``exp(-alpha c/2)`` in float32 without the max shift: underflows to 0 for large
    counts (all-zero weights fall back to uniform). Log-probabilities."""
    with np.errstate(under="ignore"):
        w = np.exp((-0.5 * alpha * c).astype(np.float32))   # the bug: no shift, float32
    tot = w.sum(dtype=np.float32)
    p = np.full(c.size, 1.0 / c.size) if tot == 0 else w.astype(np.float64) / float(tot)
    with np.errstate(divide="ignore"):
        return np.log(p)


def argmin_law(c: np.ndarray, alpha: float) -> np.ndarray:
    """BRK-10: the non-private argmin (first index). Log-probabilities."""
    L = np.full(c.size, -np.inf)
    L[int(np.argmin(c))] = 0.0
    return L - logsumexp(L)


def gumbel_argmax(c: np.ndarray, alpha: float, numerator: float, shape: tuple,
                  rng: np.random.Generator) -> np.ndarray:
    """BRK-2: ``argmax(-c + Gumbel / alpha)`` (Gumbel scale 1/alpha, the 2 forgotten)."""
    return np.argmax(-c + rng.gumbel(size=shape) / alpha, axis=1)


def laplace_argmin(c: np.ndarray, alpha: float, numerator: float, shape: tuple,
                   rng: np.random.Generator) -> np.ndarray:
    """Report-noisy-min with ``Laplace(numerator / alpha)`` on the counts (BRK-4: 1, FP-4: 2)."""
    return np.argmin(c + rng.laplace(0.0, numerator / alpha, size=shape), axis=1)


def offset_covers(L: "A1Learner", s: Summary) -> list[np.ndarray]:
    """FP-5: the public cover re-drawn per run from 8 public greedy-scan offsets."""
    step = max(1, L.H.size // 8)
    return [L.public_cover(s.n, k * step) for k in range(8)]


def private_x_cover(L: "A1Learner", s: Summary) -> list[np.ndarray]:
    """BRK-6 (A1): COVER-X of the PRIVATE unlabeled X at scale eps0."""
    return [cv.cover_x(L.H, s.xw, L.eps0(s.n))]


def bounding_box_cover(L: "A1Learner", s: Summary) -> list[np.ndarray]:
    """BRK-7: the reference U fitted on the data (uniform on the grid inside X's bounding box)."""
    D = L.H.domain
    Xd = s.data.X
    inside = np.all((D >= Xd.min(axis=0) - 1e-12) & (D <= Xd.max(axis=0) + 1e-12), axis=1)
    w = inside / inside.sum()
    return [np.sort(cv.greedy_packing(L.H.matrix, w, L.eps0(s.n)))]


def data_scale_cover(L: "A1Learner", s: Summary) -> list[np.ndarray]:
    """BRK-8: the cover scale raised to ``1/(2 #distinct x)`` (a function of the data)."""
    distinct = np.count_nonzero(s.c0 + s.c1)
    r = max(L.eps0(s.n), 1.0 / (2.0 * distinct))
    return [cv.cover_u(L.H, L.reference, r, L.max_cover)[0]]


@dataclass(frozen=True)
class CHRow(Row):
    """A Chaudhuri-Hsu variant: the selection rule's constants and steps, and the candidate list's.

    The published rule is the softmax ``exp(eps u / divisor)`` with ``u = score(...)``, ``eps =
    alpha`` (times m, or epsilon_acc instead, for two bugs); ``law`` replaces the softmax's log-
    probabilities, ``noisy`` replaces sampling by a noisy arg-min/max (``closed_form`` False: no
    exact law), ``seeded`` draws once from a generator seeded by the data.
    """

    score: Callable = errors
    divisor: float = 2.0                 # weights exp(eps u / divisor)
    eps_times_m: bool = False            # eps = alpha m (sensitivity 1/m applied to counts)
    eps_is_accuracy: bool = False        # eps = epsilon_acc instead of alpha
    law: Callable | None = None          # log-probabilities replacing the softmax
    noisy: Callable | None = None        # noisy arg-min/max replacing the sampling
    noise_numerator: float = 2.0         # its noise scale numerator / alpha
    closed_form: bool = True             # an exact output law exists
    seeded: bool = False                 # one draw of a generator seeded by sha256(S), every run
    cover: Callable | None = None        # A1's candidate lists (None: the public COVER-U)
    with_erm: bool = False               # the ERM hypothesis added to the candidates
    positive_only_cover: bool = False    # A2's COVER-X weighs the positive points only
    relation: str = ""                   # the claimed neighbour relation ("": the learner's own)
    paper_kappa: bool = False            # eps0 from KAPPA(m) even if an explicit eps0 is given
    underflow_design: bool = False       # the learner carries `underflow_pair`


EM_TABLE = {
    "correct": CHRow("as published: Pr[g] ~ exp(-alpha c_g(S) / 2) over a data-independent list"),
    "brk-1": CHRow("BUG BRK-1: weights exp(-alpha c_g) (the 1/2 forgotten): true loss up to 2 alpha",
                   divisor=1.0),
    "brk-2": CHRow("BUG BRK-2: argmax(-c_g + Gumbel/alpha) (noise scale 1/alpha instead of 2/alpha): "
                   "same law as BRK-1, true loss up to 2 alpha", divisor=1.0, noisy=gumbel_argmax),
    "brk-3": CHRow("BUG BRK-3: weights exp(-alpha m c_g / 2) ('sensitivity 1/m' applied to counts): "
                   "true loss up to m alpha", eps_times_m=True),
    "brk-4": CHRow("BUG BRK-4: report-noisy-min with Laplace(1/alpha) on the counts: true loss ~2 alpha "
                   "(no exact oracle)", noisy=laplace_argmin, noise_numerator=1.0, closed_form=False),
    "brk-5": CHRow("BUG BRK-5: the accuracy parameter epsilon_acc used as the privacy parameter: true "
                   "loss epsilon_acc; a no-op unless epsilon_acc > alpha, so audited at the spec's "
                   "instance alpha = 0.1, epsilon_acc = 0.5", eps_is_accuracy=True),
    "brk-10": CHRow("BUG BRK-10: non-private argmin of c_g over the list (first index): deterministic, "
                    "infinite loss", law=argmin_law),
    "brk-11": CHRow("BUG BRK-11: one model drawn from a generator seeded by sha256(S) and reused in every "
                    "run (data-seeded randomness): deterministic given S, infinite loss", seeded=True),
    "brk-12": CHRow("BUG BRK-12: class-balanced score (m/2)(FN/n_pos + FP/n_neg) with sensitivity still "
                    "taken as 1: loss > alpha when a class is rare", score=balanced_errors),
    "brk-15": CHRow("BUG BRK-15: unshifted float32 exp(-alpha c/2): weights underflow to 0 for large "
                    "counts; flagged on the underflow pile design (a label flip moves the candidates "
                    "across the float32 underflow count: support mismatch with mass ~1/2)",
                    law=float32_unshifted_law, underflow_design=True),
    "fp-1": CHRow("negative control FP-1: weights exp(-alpha err_S(g)/2) with the normalised error "
                  "(over-private, alpha/m-DP): must NOT be flagged", score=normalised_errors),
    "fp-4": CHRow("negative control FP-4: report-noisy-min with Laplace(2/alpha) (alpha-DP): must NOT "
                  "be flagged", noisy=laplace_argmin, noise_numerator=2.0, closed_form=False),
}
COVER_TABLE = {
    "brk-6": CHRow("BUG BRK-6: the cover is built from the PRIVATE unlabeled X (COVER-X at scale eps0) "
                   "while claiming alpha-privacy: infinite loss under x-moves", cover=private_x_cover),
    "brk-7": CHRow("BUG BRK-7: the reference U fitted on private data (uniform on the grid points inside "
                   "the bounding box of X): infinite loss under x-moves", cover=bounding_box_cover),
    "brk-8": CHRow("BUG BRK-8: cover scale from the data (eps0 raised to 1/(2 #distinct x)): infinite "
                   "loss under x-moves that create a duplicate", cover=data_scale_cover),
    "brk-9": CHRow("BUG BRK-9: the ERM hypothesis of H added to the candidate list (label-dependent "
                   "candidates): loss > alpha under label flips", with_erm=True),
    "brk-14": CHRow("BUG BRK-14: the paper-faithful A1 (cover scale from KAPPA(m)) claiming add-remove "
                    "DP: the cover depends on m, infinite loss under add/remove",
                    relation="add-remove", paper_kappa=True),
    "fp-5": CHRow("negative control FP-5: the cover re-drawn in every run from public randomness (greedy "
                  "scan from a uniformly random public offset, 8 offsets): must NOT be flagged",
                  cover=offset_covers),
}
A2_TABLE = {
    "brk-6": CHRow("BUG BRK-6: A2 registered as alpha-DP (replace-one) although its cover uses X: "
                   "infinite loss under x-moves", relation="replace-one"),
    "brk-13": CHRow("BUG BRK-13: label-dependent cover (rho counts disagreements on the POSITIVE points "
                    "only): infinite loss under label flips", positive_only_cover=True),
}
EM_VARIANTS = describe(EM_TABLE)
COVER_VARIANTS = describe(COVER_TABLE)
A2_VARIANTS = describe(A2_TABLE)


# ---------------------------------------------------------------------------------------------
# the learners
# ---------------------------------------------------------------------------------------------
class CHLearner(ABC):
    """Base of the Chaudhuri-Hsu learners: EM (or a planted bug) over a candidate list.

    Subclasses implement ``candidates(summary) -> list of row arrays`` (one list per public
    cover; the run's cover is uniform over them -- more than one only for FP-5).

    Attributes
    ----------
    name, claim, certified, H, alpha, variant, pairs, queries, chunk_runs
    """

    name = "ch"
    certified: Claim | None = None
    chunk_runs = 1 << 16

    def __init__(self, H: HypothesisClass, alpha: float, variant: str, epsilon_acc: float,
                 table: dict) -> None:
        self.row: CHRow = row_of(table, variant, self.name)
        self.H = H
        self.alpha = alpha
        self.variant = variant
        self.epsilon_acc = epsilon_acc
        self.pairs: list = []
        self.queries: np.ndarray | None = None

    # -- data ---------------------------------------------------------------------------------
    def summarize(self, data: Any) -> Summary:
        data = as_dataset(data)
        if data.n < 1:
            raise PrivauditError(f"{self.name}: the dataset is empty")
        if data.d != self.H.d:
            raise PrivauditError(f"{self.name}: records have {data.d} features but the class "
                                 f"{self.H.name} lives in dimension {self.H.d}")
        c0, c1 = self.H.label_counts(data)
        return Summary(c0.astype(np.float64), c1.astype(np.float64), data.n, data)

    @abstractmethod
    def candidates(self, s: Summary) -> list[np.ndarray]:
        """The candidate list(s) on the data summarised by `s` (one per public cover)."""

    def cover(self, data: Any) -> np.ndarray:
        """The candidate list G used on `data` (sorted union over public covers): white-box access
        for the invariant tests (spec 7.8)."""
        return np.unique(np.concatenate(self.candidates(self.summarize(data))))

    # -- the selection rule: EM or a planted bug -----------------------------------------------
    def log_probs(self, rows: np.ndarray, s: Summary) -> np.ndarray:
        """Exact log-probabilities of the rows of one candidate list (softmax-type variants)."""
        r = self.row
        fp, fn = mistakes(self.H, rows, s)
        if r.law is not None:
            return r.law(fp + fn, self.alpha)
        eps = self.epsilon_acc if r.eps_is_accuracy else self.alpha
        if r.eps_times_m:
            eps = eps * s.n
        L = em_log_weights(r.score(fp, fn, s), eps, 1.0, r.divisor)
        return L - logsumexp(L)

    def output_distribution(self, data: Any) -> tuple[np.ndarray, np.ndarray]:
        """The exact law of the released hypothesis on `data`.

        Returns
        -------
        (rows, probs): the sorted distinct rows of ``self.H`` in the candidate list(s) (rows the
        law never picks are kept with probability 0) and their probabilities, float64, sum 1.

        Raises
        ------
        PrivauditError
            For report-noisy-min variants (no closed form).
        """
        s = self.summarize(data)
        if not self.row.closed_form:
            raise PrivauditError(f"{self.name} ({self.variant}): report-noisy-min has no closed-form "
                                 f"output law; use Monte Carlo")
        covers = self.candidates(s)
        rows_all, probs_all = [], []
        for G in covers:
            logp = self.log_probs(G, s)
            if self.row.seeded:
                logp = np.where(np.arange(G.size) == self._seeded_index(G, s, logp), 0.0, -np.inf)
            rows_all.append(G)
            probs_all.append(np.exp(logp) / len(covers))
        rows = np.concatenate(rows_all)
        probs = np.concatenate(probs_all)
        uniq, inv = np.unique(rows, return_inverse=True)
        return uniq, np.bincount(inv, weights=probs, minlength=uniq.size)

    def exact(self, data: Any, queries: Any) -> np.ndarray:
        """Exact ``Pr[h(x_q) = 1]`` at each query (float64), from `output_distribution`."""
        rows, p = self.output_distribution(data)
        qi = self.H.index(as_queries(queries, self.H.d))
        return p @ self.H.matrix[np.ix_(rows, qi)].astype(np.float64)

    def _seeded_index(self, G: np.ndarray, s: Summary, logp: np.ndarray) -> int:
        """BRK-11: the one draw of a generator seeded by a hash of the dataset."""
        h = hashlib.sha256(s.data.X.tobytes() + s.data.y.tobytes()).digest()
        r = np.random.default_rng(int.from_bytes(h[:8], "little"))
        cdf = np.cumsum(np.exp(logp))
        return int(min(np.searchsorted(cdf, r.random() * cdf[-1], side="right"), G.size - 1))

    def sample_rows(self, s: Summary, runs: int, rng: np.random.Generator) -> np.ndarray:
        """The released hypothesis (a row of H) of each of `runs` independent runs: (runs,) int64."""
        covers = self.candidates(s)
        which = rng.integers(len(covers), size=runs) if len(covers) > 1 else np.zeros(runs, np.int64)
        out = np.empty(runs, dtype=np.int64)
        for k, G in enumerate(covers):
            sel = np.flatnonzero(which == k)
            if sel.size:
                out[sel] = G[self._draw(G, s, sel.size, rng)]
        return out

    def _draw(self, G: np.ndarray, s: Summary, runs: int, rng: np.random.Generator) -> np.ndarray:
        r = self.row
        if r.noisy is not None:
            fp, fn = mistakes(self.H, G, s)
            c = fp + fn
            idx = np.empty(runs, dtype=np.int64)
            step = max(1, BLOCK // G.size)
            for a in range(0, runs, step):
                k = min(step, runs - a)
                idx[a:a + k] = r.noisy(c, self.alpha, r.noise_numerator, (k, G.size), rng)
            return idx
        logp = self.log_probs(G, s)
        if r.seeded:
            return np.full(runs, self._seeded_index(G, s, logp), dtype=np.int64)
        return em_sample(logp, None, rng, runs)

    # -- the Learner contract -------------------------------------------------------------------
    def predict(self, data: Any, queries: Any, runs: int, rng: np.random.Generator) -> np.ndarray:
        """Fit `runs` times independently on `data`; labels of each released hypothesis at every
        query: int8 (runs, len(queries)). Records and queries must lie on the class's grid."""
        runs = check_runs(runs)
        s = self.summarize(data)
        qi = self.H.index(as_queries(queries, self.H.d))
        rows = self.sample_rows(s, runs, rng)
        return self.H.matrix[rows[:, None], qi[None, :]]

    def __repr__(self) -> str:
        return f"<{self.name} variant={self.variant} {self.claim.describe()}>"


class EMLearner(CHLearner):
    """CH-EM: the exponential mechanism over ``candidates`` evenly spaced rows of H (public).

    Claim: alpha-DP, replace-one, model scope (McSherry & Talwar 2007; the "generic learner" of
    Kasiviswanathan et al. for a finite class; step 3 of Figures 1-3 of Chaudhuri & Hsu).
    """

    name = "ch-em"

    def __init__(self, H: HypothesisClass, alpha: float, candidates: int, variant: str,
                 epsilon_acc: float) -> None:
        super().__init__(H, alpha, variant, epsilon_acc, {**EM_TABLE, "brk-9": COVER_TABLE["brk-9"]})
        k = H.size if candidates == 0 else min(candidates, H.size)
        self.G = np.unique(np.rint(np.linspace(0, H.size - 1, k)).astype(np.int64))
        self.claim = Claim(alpha, 0.0, "replace-one", "model")

    def candidates(self, s: Summary) -> list[np.ndarray]:
        return [_with_erm(self.H, self.G, s)] if self.row.with_erm else [self.G]


def _with_erm(H: HypothesisClass, G: np.ndarray, s: Summary) -> np.ndarray:
    """BRK-9: the candidate list plus the (first-index) ERM hypothesis of the whole class."""
    fp, fn = mistakes(H, np.arange(H.size), s)
    return np.union1d(G, [int(np.argmin(fp + fn))])


class A1Learner(CHLearner):
    """A_1 (Figure 1) and A_1r (Figure 2): KAPPA, COVER-U, EM.

    Step 1 uses only the public size m (eq. (4), or eq. (5) when ``realizable``), unless an explicit
    public ``eps0`` (or ``kappa``) is given; step 2 is a greedy eps0-packing of (H, rho_U) (Lemma 13);
    step 3 the exponential mechanism. Claim (Theorem 7): alpha-privacy (Definition 3, replace one
    example, same m), model scope, for any U and any cover.
    """

    def __init__(self, H: HypothesisClass, cls: str, alpha: float, epsilon_acc: float,
                 delta_fail: float, eps0: float, kappa: float, C: float, d_u: float, reference: str,
                 max_cover: int, realizable: bool, variant: str) -> None:
        self.name = "ch-a1r" if realizable else "ch-a1"
        super().__init__(H, alpha, variant, epsilon_acc, {**EM_TABLE, **COVER_TABLE})
        self.cls, self.delta_fail, self.C, self.d_u = cls, delta_fail, C, d_u
        self.reference, self.max_cover, self.realizable = reference, max_cover, realizable
        self.eps0_override = 0.0 if self.row.paper_kappa else eps0
        self.kappa = kappa
        self._covers: dict = {}
        rel = self.row.relation or "replace-one"
        self.claim = Claim(alpha, 0.0, rel, "model")

    def eps0(self, m: int) -> float:
        """Cover scale for sample size m: the override, or epsilon/(4 kappa), or KAPPA (step 1)."""
        if self.eps0_override > 0:
            return self.eps0_override
        if self.kappa > 0:
            return self.epsilon_acc / (4.0 * max(self.kappa, 1.0))
        if math.isinf(self.d_u):
            return cv.eps0_covering(self.H, self.reference, m, self.alpha, self.epsilon_acc,
                                    self.delta_fail, self.C, self.realizable, self.max_cover)
        return max(cv.kappa_hat(m, self.alpha, self.epsilon_acc, self.delta_fail, self.d_u, self.C,
                                self.realizable)[1], 1e-12)

    def public_cover(self, m: int, offset: int = 0) -> np.ndarray:
        """COVER-U for sample size m (cached: a deterministic function of public inputs)."""
        key = (m if self.eps0_override <= 0 and self.kappa <= 0 else -1, offset)
        if key not in self._covers:
            self._covers[key] = cv.cover_u(self.H, self.reference, self.eps0(m), self.max_cover, offset)[0]
        return self._covers[key]

    def candidates(self, s: Summary) -> list[np.ndarray]:
        if self.row.cover is not None:
            return self.row.cover(self, s)
        G = self.public_cover(s.n)
        return [_with_erm(self.H, G, s)] if self.row.with_erm else [G]


class A2Learner(CHLearner):
    """A_2 (Figure 3 / Appendix E): COVER-X of the unlabeled sample at scale epsilon/4, then EM.

    Claim (Theorem 26): alpha-LABEL privacy (Definition 2: one label changes, X fixed and aligned),
    model scope. NOT alpha-private under Definition 3: the cover depends on X.
    """

    name = "ch-a2"

    def __init__(self, H: HypothesisClass, alpha: float, epsilon_acc: float, scale: float,
                 variant: str) -> None:
        super().__init__(H, alpha, variant, epsilon_acc, {**EM_TABLE, **A2_TABLE})
        self.scale = scale if scale > 0 else epsilon_acc / 4.0
        self.claim = Claim(alpha, 0.0, self.row.relation or "label", "model")

    def candidates(self, s: Summary) -> list[np.ndarray]:
        w = s.c1 / s.n if self.row.positive_only_cover else s.xw
        if not np.any(w > 0):                   # BRK-13 with no positive: one class
            return [np.zeros(1, dtype=np.int64)]
        return [cv.cover_x(self.H, w, self.scale)]


class ERMLearner(CHLearner):
    """Non-private ERM (spec 3.4): the first row of H with the fewest mistakes.

    NEGATIVE CONTROL: it carries the claim alpha-DP (replace-one, model) which it cannot meet
    (deterministic output that moves with one label); every audit is expected to flag it.
    """

    name = "ch-erm"

    def __init__(self, H: HypothesisClass, alpha: float) -> None:
        super().__init__(H, alpha, "brk-10", 0.1, {"brk-10": EM_TABLE["brk-10"]})
        self.all_rows = np.arange(H.size)
        self.claim = Claim(alpha, 0.0, "replace-one", "model")

    def candidates(self, s: Summary) -> list[np.ndarray]:
        return [self.all_rows]

    def __repr__(self) -> str:
        return f"<{self.name} (non-private negative control) {self.claim.describe()}>"


# ---------------------------------------------------------------------------------------------
# adversarial designs (spec 7.3-7.5): default pairs and queries
# ---------------------------------------------------------------------------------------------
def identifying_queries(H: HypothesisClass, rows: np.ndarray, must: list[int],
                        k: int = MAX_QUERIES) -> np.ndarray:
    """Up to ``k`` domain indices (``must`` first) whose labels separate the given rows as well as
    possible: greedily the point that most increases the number of distinct label codes (ties: the
    most balanced split). Uses only public rows, never data."""
    M = H.matrix[np.unique(rows)].astype(np.int64)
    chosen: list[int] = []
    for j in must:
        if j not in chosen and len(chosen) < k:
            chosen.append(int(j))
    code = np.zeros(M.shape[0], dtype=np.int64)
    for j in chosen:
        code = code * 2 + M[:, j]
    while len(chosen) < k:
        best, key = None, None
        for j in range(H.N):
            if j in chosen:
                continue
            c = code * 2 + M[:, j]
            _, counts = np.unique(c, return_counts=True)
            score = (counts.size, -int((counts ** 2).sum()))
            if key is None or score > key:
                best, key = j, score
        if best is None or key[0] <= np.unique(code).size:
            break
        chosen.append(best)
        code = code * 2 + M[:, best]
    return np.asarray(chosen, dtype=np.int64)


def focal_point(H: HypothesisClass, G: np.ndarray) -> tuple[int, int]:
    """The label-flip record (x0, y0) of spec 7.3: the point and label with which the fewest
    candidates (but at least one) disagree, so that flipping y0 gives the event {h(x0) != y0} the
    largest likelihood ratio (thresholds: x0 just below the last candidate, y0 = 1)."""
    ones = (H.matrix[G] == 1).sum(axis=0)
    zeros = G.size - ones
    best = (G.size + 1, 0, 1)
    for j in range(H.N):
        for y0, against in ((1, zeros[j]), (0, ones[j])):
            if 1 <= against < G.size and against < best[0]:
                best = (int(against), j, y0)
    return best[1], best[2]


def _ds(H: HypothesisClass, idx: list[int], y: list[int]) -> Dataset:
    return Dataset(H.domain[np.asarray(idx, dtype=np.int64)], np.asarray(y))


def minority_pair(H: HypothesisClass, G: np.ndarray) -> tuple[Dataset, Dataset]:
    """m = 10: 9 negatives at 2 points and ONE positive, labelled by the middle candidate; the
    minority positive is flipped, so the class sizes go from (9, 1) to (10, 0) (BRK-12's worst case,
    spec 7.7: the class-balanced score then moves by up to m/2 per candidate)."""
    g = H.matrix[G[G.size // 2]]
    pos, neg = np.flatnonzero(g == 1), np.flatnonzero(g == 0)
    if pos.size < 1 or neg.size < 2:
        pos, neg = np.arange(H.N // 2, H.N), np.arange(H.N // 2)
    p = int(pos[(3 * pos.size) // 4])
    n = [int(neg[neg.size // 4]), int(neg[(3 * neg.size) // 4])]
    S = _ds(H, [n[0]] * 5 + [n[1]] * 4 + [p], [0] * 9 + [1])
    return S, S.relabel(9, 0)


def replace_designs(H: HypothesisClass, G: np.ndarray) -> tuple[list, np.ndarray]:
    """Default pairs for a replace-one claim and the queries that identify the candidates.

    P1 label flip at x0 with m = 1 (spec 7.3 worst case); P2 flip of the only positive (m = 10);
    P3 x-move of the only record between two query points (m = 1; reveals covers built from X,
    BRK-6/7); P4 x-move onto the other record, creating a duplicate (m = 2; BRK-8).
    """
    x0, y0 = focal_point(H, G)
    q = identifying_queries(H, G, [x0])
    a, b = int(q[1]) if q.size > 1 else 0, int(q[-1])
    if a == b:
        b = H.N - 1 if a != H.N - 1 else 0
    P1 = _ds(H, [x0], [y0])
    P3 = _ds(H, [a], [1])
    P4 = _ds(H, [a, b], [1, 1])
    pairs = [(P1, P1.relabel(0, 1 - y0)), minority_pair(H, G), (P3, P3.replace(0, H.domain[b], 1)),
             (P4, P4.replace(0, H.domain[b], 1))]
    return pairs, H.domain[q]


def label_designs(H: HypothesisClass, scale: float) -> tuple[list, np.ndarray]:
    """Default pairs for a label-privacy claim (A2): P1 six copies of (x0, 1), one flipped (the
    two-class cover of spec 7.3 with q ~ 0.05); P2 the flip of the only positive. Queries identify the
    union of the COVER-X lists of the pairs' (public, auditor-chosen) X."""
    x0 = H.N // 2 if H.name != "thr" else (3 * H.N) // 4
    P1 = _ds(H, [x0] * 6, [1] * 6)
    S2, S2b = minority_pair(H, np.arange(H.size))
    rows = np.concatenate([cv.cover_x(H, cv.x_weights(H, S.X), scale) for S in (P1, S2)])
    q = identifying_queries(H, rows, [x0])
    return [(P1, P1.relabel(0, 0)), (S2, S2b)], H.domain[q]


def add_remove_designs(learner: A1Learner, lo: int = 1, hi: int = 2000) -> tuple[list, np.ndarray]:
    """BRK-14: the smallest m >= lo whose KAPPA cover differs from that of m + 1 (agnostic eq. (4)
    at the defaults: m ~ 600; realizable eq. (5): m ~ 60, which a search from 200 missed); S has m
    records at x0 with balanced labels (near-uniform EM), S' one more record."""
    H = learner.H
    for m in range(lo, hi):
        G0, G1 = learner.public_cover(m), learner.public_cover(m + 1)
        if G0.size >= 2 and G1.size >= 2 and not np.array_equal(G0, G1):
            break
    else:
        raise PrivauditError(f"{learner.name}: no m in [{lo}, {hi}) where the KAPPA cover changes")
    x0, _ = focal_point(H, G0)
    S = _ds(H, [x0] * m, [i % 2 for i in range(m)])
    diff = np.setxor1d(G0, G1)
    q = identifying_queries(H, np.union1d(G0, G1), [x0] + [int(j) for j in _separators(H, diff)])
    return [(S, S.add(H.domain[x0], m % 2))], H.domain[q]


def underflow_count(alpha: float, dtype: Any = np.float32) -> int:
    """The smallest mistake count ``c`` at which the unshifted weight ``exp(-alpha c / 2)``,
    evaluated in ``dtype``, is exactly 0 (float32: 208 at alpha = 1; float64: 1490)."""
    tiny = np.finfo(dtype).smallest_subnormal
    c = max(1, int(math.floor(-2.0 * math.log(float(tiny)) / alpha)) - 2)
    with np.errstate(under="ignore"):
        while np.exp(dtype(-0.5 * alpha * c)) != 0:
            c += 1
    return c


def underflow_pair(H: HypothesisClass, rows: np.ndarray, queries: np.ndarray, alpha: float,
                   dtype: Any = np.float32) -> tuple[Dataset, Dataset]:
    """BRK-15 (spec 3.0 "never compute exp(-alpha c/2) unshifted"): the underflow pile.

    All records sit at one query point x0 (the one splitting ``rows`` most evenly): ``c* - 1``
    labelled 0 and ``c*`` labelled 1, with ``c* = underflow_count(alpha, dtype)``. Every candidate
    predicting 1 at x0 makes ``c* - 1`` mistakes, every one predicting 0 makes ``c*``; flipping one
    1 to 0 swaps the two counts. An unshifted ``dtype`` exponential gives the second group weight
    exactly 0 under S and the first group weight exactly 0 under S': the event ``h(x0) = 0`` is
    impossible under S and has probability ~1/2 under S' (a support mismatch sampling sees at
    once). A correct EM gives the two groups the ratio ``e^{alpha/2}`` on both sides (loss <=
    alpha). n = 2 c* - 1 (415 at alpha = 1); a label flip, so valid for every claim here.
    """
    c = underflow_count(alpha, dtype)
    qi = H.index(np.asarray(queries, dtype=np.float64).reshape(-1, H.d))
    ones = (H.matrix[np.unique(rows)][:, qi] == 1).sum(axis=0)
    split = np.minimum(ones, np.unique(rows).size - ones)
    x0 = int(qi[int(np.argmax(split))])
    S = _ds(H, [x0] * (2 * c - 1), [0] * (c - 1) + [1] * c)
    return S, S.relabel(2 * c - 2, 0)


def _variant_pairs(L: CHLearner, rows: np.ndarray) -> None:
    """Designs that only a planted bug needs: appended to the variant's default pairs."""
    if L.row.underflow_design:
        L.pairs = list(L.pairs) + [underflow_pair(L.H, rows, L.queries, L.alpha)]


def _separators(H: HypothesisClass, rows: np.ndarray) -> list[int]:
    """For thresholds-like classes: the grid points just below and at each row's switch."""
    out: list[int] = []
    for r in rows[:3]:
        ones = np.flatnonzero(H.matrix[r] == 1)
        if ones.size and ones[0] > 0:
            out += [int(ones[0]) - 1, int(ones[0])]
    return out


# ---------------------------------------------------------------------------------------------
# registration
# ---------------------------------------------------------------------------------------------
def _d_u(cls: str, d_u: float) -> float:
    return cv.D_U[cls] if d_u == 0 else check_positive("d_u", d_u)


@register("ch-em", kind="learner", paper=PAPER,
          section="Step 3 of Figures 1-3; Lemma 18 (McSherry & Talwar 2007)",
          summary="exponential mechanism over a fixed data-independent candidate list, one "
                  "hypothesis per run; alpha-DP (replace-one)",
          variants=describe({**EM_TABLE, "brk-9": COVER_TABLE["brk-9"]}), instances=INSTANCES)
def ch_em(alpha: float = 1.0, cls: str = "thr", grid: int = 64, candidates: int = 9,
          epsilon_acc: float = 0.1, variant: str = "correct") -> EMLearner:
    """CH-EM over ``candidates`` evenly spaced rows of class ``cls`` (0 = the whole class)."""
    alpha = check_positive("alpha", alpha)
    H = cv.ch_class(cls, grid)
    L = EMLearner(H, alpha, validate.integer("candidates", candidates, lo=0, hi=10**6), variant,
                  check_positive("epsilon_acc", epsilon_acc, upper=1.0, upper_open=True))
    L.pairs, L.queries = replace_designs(H, L.G)
    _variant_pairs(L, L.G)
    return L


def _a1(realizable: bool, alpha: float, cls: str, grid: int, eps0: float, kappa: float,
        epsilon_acc: float, delta_fail: float, C: float, d_u: float, reference: str,
        max_cover: int, variant: str) -> A1Learner:
    alpha = check_positive("alpha", alpha)
    H = cv.ch_class(cls, grid)
    L = A1Learner(H, cls, alpha, check_positive("epsilon_acc", epsilon_acc, upper=1.0, upper_open=True),
                  check_positive("delta_fail", delta_fail, upper=1.0, upper_open=True),
                  check_positive("eps0", eps0, allow_zero=True), check_positive("kappa", kappa, allow_zero=True),
                  check_positive("C", C), _d_u(cls, d_u), reference,
                  validate.integer("max_cover", max_cover, lo=1, hi=10**5),
                  realizable, variant)
    if L.claim.neighbours == "add-remove":      # BRK-14's claim: add/remove moves are in scope
        L.pairs, L.queries = add_remove_designs(L)
    else:
        L.pairs, L.queries = replace_designs(H, L.public_cover(1))
        _variant_pairs(L, L.public_cover(1))
    return L


_A1_DOC = """Parameters: alpha (privacy), cls (thr|int|sep2), grid (domain grid size), eps0 (explicit
    public cover scale; 0 = KAPPA from the sample size, the paper-faithful step 1), kappa (known
    smoothness bound: eps0 = epsilon_acc/(4 kappa)), epsilon_acc / delta_fail (the paper's epsilon
    and delta), C (the unspecified universal constant), d_u (doubling dimension; 0 = class default),
    reference (public U: uniform|left|right), max_cover (public cap on |G|), variant."""


@register("ch-a1", kind="learner", paper=PAPER, section="Figure 1 / Theorems 7-8",
          summary="A1: KAPPA (eq. 4) -> greedy eps0-cover of (H, rho_U) for a public reference U "
                  "(Lemma 13) -> exponential mechanism; alpha-DP (replace-one)",
          variants=describe({**EM_TABLE, **COVER_TABLE}), instances=INSTANCES)
def ch_a1(alpha: float = 1.0, cls: str = "thr", grid: int = 64, eps0: float = 0.12,
          kappa: float = 0.0, epsilon_acc: float = 0.1, delta_fail: float = 0.05, C: float = 1.0,
          d_u: float = 0.0, reference: str = "uniform", max_cover: int = 5000,
          variant: str = "correct") -> A1Learner:
    """A_1 (Figure 1), the alpha-private agnostic learner with reference distribution U."""
    return _a1(False, alpha, cls, grid, eps0, kappa, epsilon_acc, delta_fail, C, d_u, reference,
               max_cover, variant)


@register("ch-a1r", kind="learner", paper=PAPER, section="Figure 2 / Theorem 9 (Section 5.2)",
          summary="A1r: realizable variant of A1 (eq. 5 in KAPPA); alpha-DP (replace-one)",
          variants=describe({**EM_TABLE, **COVER_TABLE}), instances=INSTANCES)
def ch_a1r(alpha: float = 1.0, cls: str = "thr", grid: int = 64, eps0: float = 0.12,
           kappa: float = 0.0, epsilon_acc: float = 0.1, delta_fail: float = 0.05, C: float = 1.0,
           d_u: float = 0.0, reference: str = "uniform", max_cover: int = 5000,
           variant: str = "correct") -> A1Learner:
    """A_1r (Figure 2), the realizable variant; with reference = D it is Section 5.2's A1r[U:=D]."""
    return _a1(True, alpha, cls, grid, eps0, kappa, epsilon_acc, delta_fail, C, d_u, reference,
               max_cover, variant)


ch_a1.__doc__ += "\n\n    " + _A1_DOC
ch_a1r.__doc__ += "\n\n    " + _A1_DOC


@register("ch-a2", kind="learner", paper=PAPER, section="Figure 3 / Appendix E, Theorems 26-27",
          summary="A2: greedy (epsilon/4)-cover of (H, rho_X) from the unlabeled sample -> "
                  "exponential mechanism; alpha-LABEL-DP only",
          variants=describe({**EM_TABLE, **A2_TABLE}), instances=INSTANCES)
def ch_a2(alpha: float = 1.0, cls: str = "thr", grid: int = 64, epsilon_acc: float = 0.1,
          scale: float = 0.0, variant: str = "correct") -> A2Learner:
    """A_2: label-private learner; ``scale`` overrides the cover scale epsilon_acc/4 (0 = paper)."""
    alpha = check_positive("alpha", alpha)
    H = cv.ch_class(cls, grid)
    L = A2Learner(H, alpha, check_positive("epsilon_acc", epsilon_acc, upper=1.0, upper_open=True),
                  check_positive("scale", scale, allow_zero=True), variant)
    pairs, q = label_designs(H, L.scale)
    if L.claim.neighbours == "replace-one":      # BRK-6 claims alpha-DP: x-moves are in scope
        rp, _ = replace_designs(H, np.arange(H.size))
        pairs = pairs + [rp[2]]
        a = H.index(rp[2][0].X)[0]
        b = H.index(rp[2][1].X)[0]
        q = H.domain[identifying_queries(H, np.concatenate(
            [cv.cover_x(H, cv.x_weights(H, S.X), L.scale) for S in (rp[2][0], rp[2][1])]),
            [int(a), int(b)] + list(H.index(q)))]
    L.pairs, L.queries = pairs, q
    _variant_pairs(L, np.arange(H.size))
    return L


@register("ch-erm", kind="learner", paper=PAPER, section="Section 3.4 of the spec (the paper's "
          "non-private baseline, O~(1/epsilon) examples)",
          summary="NEGATIVE CONTROL: non-private ERM over the whole class carrying an alpha-DP claim "
                  "it cannot meet; audits must flag it",
          tags=("positive-control",))
def ch_erm(alpha: float = 1.0, cls: str = "thr", grid: int = 64) -> ERMLearner:
    """Non-private ERM (first index among minimisers) -- expected to be flagged by every audit."""
    H = cv.ch_class(cls, grid)
    L = ERMLearner(H, check_positive("alpha", alpha))
    G, _ = cv.cover_u(H, "uniform", 0.12)
    L.pairs, L.queries = replace_designs(H, G)
    return L


__all__ = ["CHLearner", "EMLearner", "A1Learner", "A2Learner", "ERMLearner", "Summary",
           "EM_VARIANTS", "COVER_VARIANTS", "A2_VARIANTS", "EM_TABLE", "COVER_TABLE", "A2_TABLE", "CHRow", "INSTANCES", "identifying_queries",
           "focal_point", "replace_designs", "label_designs", "add_remove_designs", "underflow_count",
           "underflow_pair", "ch_em", "ch_a1", "ch_a1r",
           "ch_a2", "ch_erm", "PAPER"]
