"""SOA (BLM-1/2) and the globally-stable learner G (BLM-6) as black boxes: POSITIVE CONTROLS.

Neither is private (spec 6.1: eps = infinity). They are registered as *negative fixtures*: each
carries a nominal claim (1-DP, replace-one, model scope) that it does NOT meet, so that an audit
must report a violation (``expect = "violation"`` in a CI suite). Their real guarantees are not
DP claims and are checked by the unit tests instead:

* ``blm-soa``: the extended SOA of Def. 8, run on the whole sample; deterministic. Guarantee:
  at most ``Ldim(H)`` mistakes on realizable sequences (Littlestone 1988).
* ``blm-g``: G of Theorem 10; randomized (k, tournament labels, pick) but only *globally stable*
  (Def. 4): some ``f`` has ``Pr[G(S) = f] >= 1/((d+1) 2^(d+1))``. Runs are drawn from G's exact
  output law (computed once per call by `GlobalStableLearner.law`), one independent draw per run.

References
----------
M. Bun, R. Livni and S. Moran, FOCS 2020: Sec. III-B and Def. 8 (SOA), Sec. IV-C2 and Theorem 10 (G).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from audit.errors import PrivauditError
from audit.types import Claim, Dataset, as_dataset, as_queries

from ..common.checks import check_positive, check_runs
from ..common.hypotheses import make_class
from ..registry import register
from . import designs
from .hist import PAPER
from .soa import soa_for
from .stable import FAIL, GlobalStableLearner, GParams, paper_params

NOMINAL = Claim(1.0, 0.0, "replace-one", "model")
FIXTURE_NOTE = ("negative fixture: NOT private (eps = infinity); the nominal claim 1-DP exists so "
                "that an audit must flag it")


class SOALearner:
    """``SOA(S)`` (extended SOA, Def. 8) evaluated at the queries; identical in every run."""

    name = "blm-soa"
    claim = NOMINAL

    def __init__(self, H, tie: int = 1) -> None:
        self.H = H
        self.soa = soa_for(H, tie)
        self.queries = H.domain[: min(H.N, 8)]
        xs = np.arange(H.N)
        ys = np.zeros(H.N, np.int8)
        ys[H.N // 2:] = 1                        # a threshold labelling of the whole domain
        S = Dataset(H.domain[xs], ys)
        self.pairs = [(S, S.relabel(H.N // 2, 0))]

    def truth_table(self, data: Any) -> np.ndarray:
        data = as_dataset(data)
        return self.soa.run(self.H.index(data.X), data.y)

    def predict(self, data: Any, queries: Any, runs: int, rng: np.random.Generator) -> np.ndarray:
        data = as_dataset(data)
        qi = self.H.index(as_queries(queries, data.d))
        return np.repeat(self.truth_table(data)[qi][None, :], check_runs(runs), axis=0)

    def exact(self, data: Any, queries: Any) -> np.ndarray:
        data = as_dataset(data)
        qi = self.H.index(as_queries(queries, data.d))
        return self.truth_table(data)[qi].astype(np.float64)


@register("blm-soa", kind="learner", paper=PAPER, section="Sec. III-B, Definition 8 (extended SOA)",
          summary="Standard Optimal Algorithm (Littlestone), extended to non-realizable samples; "
                  + FIXTURE_NOTE,
          tags=("positive-control",))
def blm_soa(cls: str = "thr", grid: int = 8, tie: int = 1) -> SOALearner:
    return SOALearner(make_class(cls, grid), tie)


class GLearner:
    """G of Theorem 10 on one batch of ``m = N + n`` examples; output FAIL is reported as the
    all-zero predictor at the queries (the auditor sees labels only)."""

    name = "blm-g"
    claim = NOMINAL
    chunk_runs = 100_000

    def __init__(self, H, gp: GParams, tie: int = 1) -> None:
        self.H = H
        self.G = GlobalStableLearner(soa_for(H, tie), gp)
        self.gp = gp
        self.queries = H.domain[: min(H.N, 8)]
        self.pairs = []
        if gp.n >= H.N and designs.gadget_budget_ok(self.G.d, gp):
            t = designs.tables(H.N)
            L = designs.Layout(H.domain, gp, 1, 1)
            xs, ys = designs.gadget_batch(t["a"], L.gA, L.gB, gp)
            S = Dataset(H.domain[xs], ys)
            self.pairs = [(S, S.relabel(L.t_position(0, 0), 0))]

    def law(self, data: Any) -> dict:
        """G's exact output law ``{truth-table bytes or FAIL: prob}`` on the first m examples."""
        data = as_dataset(data)
        if data.n != self.gp.m:
            raise PrivauditError(f"{self.name}: needs exactly m = N + n = {self.gp.m} examples, got {data.n}")
        return self.G.law(self.H.index(data.X), data.y)

    def predict(self, data: Any, queries: Any, runs: int, rng: np.random.Generator) -> np.ndarray:
        data = as_dataset(data)
        qi = self.H.index(as_queries(queries, data.d))
        law = self.law(data)
        keys = list(law)
        p = np.array([law[h] for h in keys])
        TT = np.array([np.zeros(self.H.N, np.int8) if h == FAIL else np.frombuffer(h, np.int8) for h in keys])
        u = rng.random(check_runs(runs))
        j = np.minimum(np.searchsorted(np.cumsum(p), u, side="right"), len(keys) - 1)
        return TT[j][:, qi]

    def exact(self, data: Any, queries: Any) -> np.ndarray:
        data = as_dataset(data)
        qi = self.H.index(as_queries(queries, data.d))
        out = np.zeros(qi.size)
        for h, p in self.law(data).items():
            if h != FAIL:
                out += p * np.frombuffer(h, np.int8)[qi]
        return out


@register("blm-g", kind="learner", paper=PAPER, section="Sec. IV-C, Theorem 10 (globally-stable learner)",
          summary="globally-stable learner G (Monte-Carlo tournaments + SOA); its guarantee is global "
                  "stability, not DP; " + FIXTURE_NOTE,
          tags=("positive-control",))
def blm_g(cls: str = "point", grid: int = 6, alpha_G: float = 0.1, budget_factor: int = 0,
          pick: str = "first", tie: int = 1) -> GLearner:
    """G with Theorem 10's parameters (``budget_factor=0``: ``N = 8^(d+1) n``) or ``N = factor * n``."""
    H = make_class(cls, grid)
    d = soa_for(H, tie).ldim()
    gp = paper_params(max(d, 1), check_positive("alpha_G", alpha_G, upper=1.0))
    if budget_factor:
        gp = GParams(gp.n, int(budget_factor) * gp.n)
    return GLearner(H, GParams(gp.n, gp.N, pick), tie)


__all__ = ["SOALearner", "GLearner", "blm_soa", "blm_g"]
