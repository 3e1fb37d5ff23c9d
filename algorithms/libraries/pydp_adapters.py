"""Google's differential-privacy library through PyDP 1.1 (OpenMined's Python bindings; Wilson et
al., "Differentially private SQL with bounded user contribution", PoPETs 2020): its Laplace
BoundedSum, BoundedMean and Count.

Each algorithm object answers one dataset per ``quick_result`` call with fresh noise; there is no
vectorised API, so one call per run. Claims: eps-DP for the given epsilon, add-remove of one record
(each user contributes one record: ``l0_sensitivity = linf_sensitivity = 1``); BoundedSum and
BoundedMean clamp records to [lower, upper].
"""

from __future__ import annotations

from audit.types import Claim

from ..registry import register
from .base import FAR, LibraryMechanism, repeat
from .loader import load, requires

DIST = "python-dp"
PAPER = "Google differential-privacy library via PyDP 1.1 (OpenMined)"


def _laplacian():
    return load(DIST, "pydp.algorithms.laplacian")


def _make(name: str, cls_name: str, epsilon: float, pairs: list, domain: str, params: dict,
          integer: bool, **kw) -> LibraryMechanism:
    def build():
        algo = getattr(_laplacian(), cls_name)(epsilon=epsilon, **kw)

        def draw(x, n):
            data = [int(v) for v in x] if integer else [float(v) for v in x]
            return repeat(lambda: algo.quick_result(data), n)
        return draw

    return LibraryMechanism(name, DIST, Claim(epsilon, 0.0, "add-remove"), domain, pairs,
                            {"epsilon": epsilon, **params}, build, integer=integer,
                            input_distance="add-remove:1")


@register("lib-pydp-bounded-sum", kind="mechanism", paper=PAPER, section="algorithms.laplacian.BoundedSum",
          summary="PyDP BoundedSum of floats in [0, 10]; eps-DP, add-remove", requires=requires(DIST))
def bounded_sum(epsilon: float = 1.0, lower: float = 0.0, upper: float = 10.0) -> LibraryMechanism:
    """``BoundedSum(epsilon, lower_bound, upper_bound, dtype="float").quick_result(x)``: eps-DP,
    add-remove. Pairs: empty vs one record at the bound, a record added at the bound, one beyond."""
    return _make("lib-pydp-bounded-sum", "BoundedSum", epsilon,
                 [([], [upper]), ([upper / 2], [upper / 2, upper]), ([lower], [lower, FAR])],
                 f"datasets of floats (clamped to [{lower:g}, {upper:g}])",
                 {"lower": lower, "upper": upper}, False, lower_bound=lower, upper_bound=upper, dtype="float")


@register("lib-pydp-bounded-mean", kind="mechanism", paper=PAPER, section="algorithms.laplacian.BoundedMean",
          summary="PyDP BoundedMean of floats in [0, 10]; eps-DP, add-remove", requires=requires(DIST))
def bounded_mean(epsilon: float = 1.0, lower: float = 0.0, upper: float = 10.0) -> LibraryMechanism:
    """``BoundedMean(epsilon, lower_bound, upper_bound, dtype="float")``: eps-DP, add-remove.
    Pairs: empty vs one record at the bound, one record at the other bound added, one beyond."""
    return _make("lib-pydp-bounded-mean", "BoundedMean", epsilon,
                 [([], [upper]), ([upper], [upper, lower]), ([lower], [lower, FAR])],
                 f"datasets of floats (clamped to [{lower:g}, {upper:g}])",
                 {"lower": lower, "upper": upper}, False, lower_bound=lower, upper_bound=upper, dtype="float")


@register("lib-pydp-count", kind="mechanism", paper=PAPER, section="algorithms.laplacian.Count",
          summary="PyDP Count; eps-DP, add-remove", requires=requires(DIST))
def count(epsilon: float = 1.0) -> LibraryMechanism:
    """``Count(epsilon, dtype="int").quick_result(x)``: eps-DP, add-remove. Pairs: empty vs one
    record, three vs four records."""
    return _make("lib-pydp-count", "Count", epsilon, [([], [1.0]), ([1.0] * 3, [1.0] * 4)],
                 "datasets of integers", {}, True, dtype="int")
