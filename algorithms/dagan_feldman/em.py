"""DF-EM (Lemma 4), DF-SUB (Lemma 5) and DF-B3 (the KLNRS11 learner) as auditable black boxes.

* ``df-em``: the exponential mechanism ``A^exp_{C, eps}`` over a fixed, data-independent candidate
  list ``C`` (``candidates`` evenly spaced rows of the class; 0 = the whole class), sampling
  ``h`` with probability proportional to ``exp(-eps err_S(h) / 2)`` and releasing ``h(x)``, a fresh
  draw per query. With ``eta > 0`` it is wrapped in DF-SUB: the EM runs on a fresh uniform
  subsample ``S_I`` of ``n' = floor(eta n)`` records.
  Claim: eps-private prediction (replace-one) [Lemma 4]; with subsampling ``2 eps eta`` for
  ``eps < 1`` [Lemma 5]. Certified: ``eps``, resp. the tight ``ln(1 + eta (e^eps - 1))``
  (Balle, Barthe & Gaboardi 2018, substitution + sampling without replacement).
* ``df-b3``: the EM over the whole class (Kasiviswanathan et al. 2011), one ``h`` per run and
  evaluated at every query, i.e. the whole model is released. Claim: eps-DP (replace-one, model).

Planted bugs (spec 5.6: BV-EM-1..3, a forgotten ``/2``, a scale by ``n``, argmax instead of
sampling) and the negative control NC-4 (spec 5.7, the sign flipped) are the rows of `EM_TABLE`,
each saying what it plants.

References
----------
Y. Dagan and V. Feldman, "PAC learning with stable and private predictions", COLT 2020,
Section 2.1, Lemma 4 and Lemma 5; S. Kasiviswanathan, H. Lee, K. Nissim, S. Raskhodnikova and
A. Smith, "What can we learn privately?", SIAM J. Comput. 2011; F. McSherry and K. Talwar, FOCS 2007.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from audit.errors import PrivauditError
from audit.types import Claim, Dataset

from ..common.checks import check_positive
from ..common.hypotheses import HypothesisClass, make_class
from ..common.sampling import count_distribution, em_probs, em_sample, sample_counts
from ..common.variants import Row, describe, row_of
from ..registry import register
from . import designs as df_designs
from .core import PAPER, DFLearner, Groups, check_design_n, summarize

@dataclass(frozen=True)
class EMRow(Row):
    """A DF-EM variant: the log-weights are ``-eps (n if times_n) err / divisor``."""

    divisor: float = 2.0         # the EM's 2 Delta (Delta = 1 for err_S)
    times_n: bool = False        # scale by n (err counted, not averaged, twice)
    argmax: bool = False         # ERM instead of sampling


EM_TABLE = {
    "correct": EMRow("the exponential mechanism as published: Pr[h] ~ exp(-eps err_S(h) / 2)"),
    "bv-em-1": EMRow("BUG: weights exp(-eps err_S(h)) (missing /2): true loss up to 2 eps on design D1",
                     divisor=1.0),
    "bv-em-2": EMRow("BUG: weights exp(-eps n err_S(h) / 2) (wrong scale): near-deterministic, loss >> eps",
                     times_n=True),
    "bv-em-3": EMRow("BUG: argmax of -err_S (ERM, first index) instead of sampling: deterministic, "
                     "unbounded loss", argmax=True),
    "nc-4": EMRow("negative control NC-4: sign flipped (prefers the WORST hypotheses); still eps-DP, "
                  "must not be flagged (utility tests catch it)", divisor=-2.0),
}
EM_VARIANTS = describe(EM_TABLE)


def em_scale(row: EMRow, eps: float, n: int) -> tuple[float, bool]:
    """(coefficient c of the log-weights ``-c * err``, argmax?) for an EM variant's row."""
    return (eps * n if row.times_n else eps) / row.divisor, row.argmax


def em_pick(logits: np.ndarray, mask: np.ndarray | None, argmax: bool, rng: np.random.Generator,
            rows: int) -> np.ndarray:
    """Sample (or, for the argmax bug, choose deterministically) one candidate per row."""
    if not argmax:
        return em_sample(logits, mask, rng, rows)
    L = np.broadcast_to(logits, (rows, logits.shape[-1]))
    if mask is not None:
        L = np.where(mask, L, -np.inf)
    return np.argmax(L, axis=1)


class ExponentialMechanismLearner(DFLearner):
    """DF-EM over a candidate list (with optional DF-SUB subsampling) or DF-B3 over the whole class.

    Parameters
    ----------
    H : HypothesisClass
    epsilon : float
        The EM's privacy parameter.
    candidates : array of row indices
        The candidate list ``C`` (data-independent).
    eta : float
        DF-SUB subsampling fraction (0: no subsampling).
    per_query : bool
        True: a fresh draw per query (private prediction); False: one model per run (DF-B3).
    variant : str
        See `EM_VARIANTS`.
    """

    def __init__(self, H: HypothesisClass, epsilon: float, candidates: np.ndarray, eta: float,
                 per_query: bool, variant: str, name: str) -> None:
        super().__init__(H, variant)
        self.name = name
        self.epsilon = epsilon
        self.cand = np.asarray(candidates, dtype=np.int64)
        self.eta = eta
        self.per_query = per_query
        self.row = row_of(EM_TABLE, variant, name)
        scope = "prediction" if per_query else "model"
        if eta > 0:
            tight = math.log1p(eta * math.expm1(epsilon))
            nominal = 2 * epsilon * eta if epsilon < 1 else tight   # Lemma 5 needs eps in (0, 1)
            self.claim = Claim(nominal, 0.0, "replace-one", scope)
            self.certified = Claim(tight, 0.0, "replace-one", scope)
        else:
            self.claim = Claim(epsilon, 0.0, "replace-one", scope)
            self.certified = None

    def n_prime(self, n: int) -> int:
        return int(math.floor(self.eta * n)) if self.eta > 0 else n

    def _check_data(self, G: Groups) -> None:
        if self.eta > 0 and self.n_prime(G.n) < 1:
            raise PrivauditError(f"{self.name}: n' = floor(eta n) = 0 for n = {G.n}, eta = {self.eta}; "
                                 f"need n >= {math.ceil(1 / self.eta)}")

    def _draw(self, G: Groups, r: int, rng: np.random.Generator) -> np.ndarray:
        c, argmax = em_scale(self.row, self.epsilon, G.n if self.eta == 0 else self.n_prime(G.n))
        if self.eta > 0:
            counts = sample_counts(G.count, self.n_prime(G.n), r, rng)
            score = counts.astype(np.float64) @ G.miss[:, self.cand]
        else:
            score = G.err[self.cand].astype(np.float64)
        return self.cand[em_pick(-c * score, None, argmax, rng, r)]

    def _fit_eval(self, G: Groups, qidx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        h = self._draw(G, qidx.size, rng)
        return self.H.matrix[h, qidx]

    def _fit_models(self, G: Groups, r: int, rng: np.random.Generator) -> np.ndarray:
        return self._draw(G, r, rng)

    def _probs_given_score(self, score: np.ndarray, n_eff: int) -> np.ndarray:
        c, argmax = em_scale(self.row, self.epsilon, n_eff)
        L = np.atleast_2d(-c * score)
        if argmax:
            P = np.zeros_like(L)
            P[np.arange(L.shape[0]), np.argmax(L, axis=1)] = 1.0
            return P
        return em_probs(L)

    def _exact_groups(self, G: Groups, data: Dataset, qi: np.ndarray) -> np.ndarray:
        Mq = self.H.matrix[np.ix_(self.cand, qi)].astype(np.float64)
        if self.eta == 0:
            return (self._probs_given_score(G.err[self.cand].astype(np.float64), G.n) @ Mq)[0]
        vecs, p = count_distribution(G.count, self.n_prime(G.n))
        P = self._probs_given_score(vecs.astype(np.float64) @ G.miss[:, self.cand], self.n_prime(G.n))
        return p @ (P @ Mq)

    def exact_model(self, data: Dataset) -> np.ndarray:
        """Exact distribution over the candidate rows (no subsampling): (len(candidates),)."""
        G = summarize(self.H, data)
        return self._probs_given_score(G.err[self.cand].astype(np.float64), G.n)[0]


def _tuned_d1(H: HypothesisClass, epsilon: float, n: int, c: float) -> tuple[Dataset, Dataset, np.ndarray]:
    """D1 with the number of query copies chosen so that the rare label has probability ~3%
    under the EM (the loss ``ln(e^eps/(1 + p(e^eps - 1)))`` is then close to eps)."""
    k = int(min(max(1, math.ceil(math.log(1 / 0.03) / max(c, 1e-9))), n // 4))
    return df_designs.d1_label_flip(H, n=n, k_query=k)


def _defaults(learner: ExponentialMechanismLearner, H: HypothesisClass, n: int) -> None:
    S1, S1b, q1 = _tuned_d1(H, learner.epsilon, n, learner.epsilon / 2)
    S7, S7b, q7 = df_designs.d7_tie_break(H, n=n, k_query=n // 4)
    learner.pairs = [(S1, S1b), (S7, S7b)]
    learner.queries = np.unique(np.vstack([q1, q7]), axis=0)


@register("df-em", kind="learner", paper=PAPER, section="Sec. 2.1, Lemma 4 (EM); Lemma 5 (DF-SUB)",
          summary="exponential mechanism over a data-independent candidate list, fresh draw per "
                  "query; optional subsampling (DF-SUB, eta > 0)",
          variants=EM_VARIANTS)
def df_em(epsilon: float = 1.0, cls: str = "thr", grid: int = 64, candidates: int = 17,
          eta: float = 0.0, n: int = 300, variant: str = "correct") -> ExponentialMechanismLearner:
    """DF-EM: ``Pr[h] ~ exp(-epsilon err_S(h)/2)`` over ``candidates`` evenly spaced rows of the
    class ``cls`` (0 = all rows); DF-SUB with ``eta > 0``; ``n`` sizes the built-in audit pairs."""
    epsilon = check_positive("epsilon", epsilon)
    eta = check_positive("eta", eta, upper=1.0, allow_zero=True)
    H = make_class(cls, grid)
    if isinstance(candidates, bool) or not isinstance(candidates, (int, np.integer)) or candidates < 0:
        raise PrivauditError(f"candidates must be an integer >= 0 (0 = whole class), got {candidates!r}")
    cand = (np.arange(H.size) if candidates == 0 or candidates >= H.size
            else np.unique(np.rint(np.linspace(0, H.size - 1, int(candidates))).astype(np.int64)))
    L = ExponentialMechanismLearner(H, epsilon, cand, eta, True, variant, "df-em")
    _defaults(L, H, check_design_n(n))
    return L


@register("df-b3", kind="learner", paper=PAPER,
          section="Sec. 1 baseline [KLNRS11]; the EM of Lemma 4 over the whole class",
          summary="generic private learner: exponential mechanism over all of H, one model per run",
          variants=EM_VARIANTS)
def df_b3(epsilon: float = 1.0, cls: str = "thr", grid: int = 64, n: int = 300,
          variant: str = "correct") -> ExponentialMechanismLearner:
    """DF-B3: the exponential mechanism over the whole class; the sampled model is eps-DP."""
    epsilon = check_positive("epsilon", epsilon)
    H = make_class(cls, grid)
    L = ExponentialMechanismLearner(H, epsilon, np.arange(H.size), 0.0, False, variant, "df-b3")
    _defaults(L, H, check_design_n(n))
    return L


__all__ = ["ExponentialMechanismLearner", "df_em", "df_b3", "EM_VARIANTS", "EM_TABLE", "EMRow", "em_scale", "em_pick"]
