"""Bun, Livni & Moran (FOCS 2020): every implemented algorithm, registered as ``blm-...``.

========== ======================================================== ===========================
name       what (spec ID)                                           claim
========== ======================================================== ===========================
blm-soa    extended SOA (BLM-1/2)                                   none: negative fixture
blm-g      globally-stable learner G (BLM-5/6)                      none: negative fixture
blm-hist   stable histogram, Lemma 15 (BLM-7), a Mechanism          (eps, delta)-DP
blm-gl     GenericLearner, Lemma 16 (BLM-8)                         eps-DP
blm-m      private learner M, Theorem 17 (BLM-9)                    (eps, delta)-DP
blm-t1     Theorem 1 wiring (BLM-10; paper or practical mode)       (eps, delta)-DP
blm-sub    subsampling wrapper, secrecy of the sample (BLM-12)      amplified eps
blm-c2     agnostic learner, Cor. 2 stand-in (BLM-11)               (eps1 + eps_A, delta)-DP
========== ======================================================== ===========================

Subroutines: `soa` (Littlestone dimension BLM-0, SOA), `stable` (tournament sampler,
G's simulation and exact law), `designs` (gadget batches and neighbour designs).

References
----------
M. Bun, R. Livni and S. Moran, "An equivalence between private classification and online
prediction", FOCS 2020 (arXiv 2003.00563).
"""

from . import agnostic, controls, hist, m, sub  # noqa: F401  (registration)
from .soa import SOA, littlestone_dimension, soa_for  # noqa: F401
from .stable import FAIL, GlobalStableLearner, GParams, paper_params  # noqa: F401

__all__ = ["SOA", "littlestone_dimension", "soa_for", "GlobalStableLearner", "GParams",
           "paper_params", "FAIL"]
