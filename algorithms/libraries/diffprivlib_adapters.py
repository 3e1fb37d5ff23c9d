"""IBM diffprivlib 0.6 (Holohan, Braghin, Mac Aonghusa & Levacher, "Diffprivlib: the IBM
differential privacy library", arXiv 1907.02444, 2019): its mechanisms and bounded tools.

diffprivlib has no vectorised sampling API (``randomise`` takes one value), so every run is one
call. Claims are the ones its documentation gives for the parameters: the mechanisms are eps-DP for
inputs that differ by at most ``sensitivity`` (replace-one on the query value); the tools
(``mean``, ``sum``, ``count_nonzero``) are eps-DP with the number of records treated as public —
their outputs are clipped to ``[n lower, n upper]`` with the array's size n — so their relation is
replace-one (one record changed, n fixed). Records beyond the bounds are clipped by the library.
"""

from __future__ import annotations

import numpy as np

from audit.types import Claim

from ..registry import register
from .base import FAR, LibraryMechanism, repeat
from .loader import load, requires

DIST = "diffprivlib"
PAPER = "Holohan et al., diffprivlib (arXiv 1907.02444, 2019)"


def _mechs():
    return load(DIST, "diffprivlib.mechanisms")


def _tools():
    return load(DIST, "diffprivlib.tools")


@register("lib-diffprivlib-laplace", kind="mechanism", paper=PAPER, section="mechanisms.Laplace",
          summary="diffprivlib's Laplace mechanism on one value; eps-DP (sensitivity 1)",
          requires=requires(DIST))
def laplace(epsilon: float = 1.0) -> LibraryMechanism:
    """``diffprivlib.mechanisms.Laplace(epsilon, sensitivity=1).randomise(x)``: eps-DP for values
    1 apart (Dwork et al. 2006). Pairs: 0 -> 1."""
    def build():
        mech = _mechs().Laplace(epsilon=epsilon, sensitivity=1.0)
        return lambda x, n: repeat(lambda: mech.randomise(float(x[0])), n)

    return LibraryMechanism("lib-diffprivlib-laplace", DIST, Claim(epsilon), "one real value",
                            [([0.0], [1.0])], {"epsilon": epsilon}, build, input_distance="l1:1")


@register("lib-diffprivlib-laplace-bounded", kind="mechanism", paper=PAPER,
          section="mechanisms.LaplaceBoundedDomain (Holohan et al. 2018, bounded Laplace)",
          summary="diffprivlib's bounded-domain Laplace on [0, 10]; eps-DP", requires=requires(DIST))
def laplace_bounded(epsilon: float = 1.0, lower: float = 0.0, upper: float = 10.0) -> LibraryMechanism:
    """``LaplaceBoundedDomain(epsilon, sensitivity=1, lower, upper)``: output confined to
    [lower, upper] by resampling with an enlarged scale (Holohan, Antonatos, Braghin & Mac
    Aonghusa, "The bounded Laplace mechanism in differential privacy", JPC 2020); documented
    eps-DP. Pairs at the bounds: lower -> lower + 1, upper - 1 -> upper, and the middle."""
    def build():
        mech = _mechs().LaplaceBoundedDomain(epsilon=epsilon, sensitivity=1.0, lower=lower, upper=upper)
        return lambda x, n: repeat(lambda: mech.randomise(float(x[0])), n)

    mid = (lower + upper) / 2
    return LibraryMechanism("lib-diffprivlib-laplace-bounded", DIST, Claim(epsilon),
                            f"one value in [{lower:g}, {upper:g}]",
                            [([lower], [lower + 1]), ([upper - 1], [upper]), ([mid], [mid + 1])],
                            {"epsilon": epsilon, "lower": lower, "upper": upper}, build,
                            input_distance="l1:1")


@register("lib-diffprivlib-geometric", kind="mechanism", paper=PAPER,
          section="mechanisms.Geometric (Ghosh et al. 2009)",
          summary="diffprivlib's geometric mechanism on one integer; eps-DP", requires=requires(DIST))
def geometric(epsilon: float = 1.0) -> LibraryMechanism:
    """``diffprivlib.mechanisms.Geometric(epsilon, sensitivity=1)``: eps-DP on integers 1 apart."""
    def build():
        mech = _mechs().Geometric(epsilon=epsilon, sensitivity=1)
        return lambda x, n: repeat(lambda: mech.randomise(int(x[0])), n)

    return LibraryMechanism("lib-diffprivlib-geometric", DIST, Claim(epsilon), "one integer",
                            [([0.0], [1.0])], {"epsilon": epsilon}, build, integer=True,
                            input_distance="l1:1")


@register("lib-diffprivlib-exponential", kind="mechanism", paper=PAPER,
          section="mechanisms.Exponential (McSherry & Talwar 2007)",
          summary="diffprivlib's exponential mechanism over 5 candidates; eps-DP", requires=requires(DIST))
def exponential(epsilon: float = 1.0, k: int = 5) -> LibraryMechanism:
    """``Exponential(epsilon, sensitivity=1, utility=u).randomise()``: eps-DP for utility vectors
    whose scores move by at most 1. Input: the utility vector. Pairs: (0, 1, ..., 1) -> (1, 0, ...,
    0), on which candidate 0's loss approaches eps, and StatDP-style one-moved vectors."""
    u = np.ones(k)
    u[0] = 0.0
    u2 = np.zeros(k)
    u2[0] = 1.0

    def build():
        mechs = _mechs()

        def draw(x, n):
            mech = mechs.Exponential(epsilon=epsilon, sensitivity=1.0, utility=[float(v) for v in x])
            return repeat(mech.randomise, n)
        return draw

    return LibraryMechanism("lib-diffprivlib-exponential", DIST, Claim(epsilon),
                            f"utility vectors of {k} scores", [(u, u2), (np.ones(k), np.r_[2.0, np.ones(k - 1)])],
                            {"epsilon": epsilon, "k": k}, build, integer=True, input_distance="linf:1")


def _tool(name: str, fn: str, epsilon: float, lower: float, upper: float, pairs: list,
          bounded: bool = True) -> LibraryMechanism:
    kw = {"bounds": (lower, upper)} if bounded else {}

    def build():
        call = getattr(_tools(), fn)
        return lambda x, n: repeat(lambda: call(x, epsilon=epsilon, **kw), n)

    return LibraryMechanism(name, DIST, Claim(epsilon, 0.0, "replace-one"),
                            f"arrays of records in [{lower:g}, {upper:g}] (size public)", pairs,
                            {"epsilon": epsilon, **({"lower": lower, "upper": upper} if bounded else {})},
                            build, integer=not bounded, input_distance="hamming:1")


@register("lib-diffprivlib-mean", kind="mechanism", paper=PAPER, section="tools.mean",
          summary="diffprivlib's bounded mean; eps-DP, replace-one (size public)", requires=requires(DIST))
def mean(epsilon: float = 1.0, lower: float = 0.0, upper: float = 10.0) -> LibraryMechanism:
    """``diffprivlib.tools.mean(x, epsilon, bounds)``: eps-DP, replace-one (the array size is
    public). Pairs: a record moved from lower to upper (sizes 1 and 4), and one beyond the bound."""
    return _tool("lib-diffprivlib-mean", "mean", epsilon, lower, upper,
                 [([lower], [upper]), ([lower] * 4, [lower] * 3 + [upper]), ([lower, lower], [lower, FAR])])


@register("lib-diffprivlib-sum", kind="mechanism", paper=PAPER, section="tools.sum",
          summary="diffprivlib's bounded sum; eps-DP, replace-one (size public)", requires=requires(DIST))
def dsum(epsilon: float = 1.0, lower: float = 0.0, upper: float = 10.0) -> LibraryMechanism:
    """``diffprivlib.tools.sum(x, epsilon, bounds)``: eps-DP, replace-one (the array size is
    public: the output is clipped to [n lower, n upper]). Pairs at the bounds and beyond."""
    return _tool("lib-diffprivlib-sum", "sum", epsilon, lower, upper,
                 [([lower], [upper]), ([lower] * 4, [lower] * 3 + [upper]), ([lower, lower], [lower, FAR])])


@register("lib-diffprivlib-count", kind="mechanism", paper=PAPER, section="tools.count_nonzero",
          summary="diffprivlib's count of non-zero records; eps-DP, replace-one", requires=requires(DIST))
def count(epsilon: float = 1.0) -> LibraryMechanism:
    """``diffprivlib.tools.count_nonzero(x, epsilon)``: eps-DP (sensitivity 1). Pairs: one record
    changed from zero to non-zero (sizes 1 and 4), and to an extreme value."""
    return _tool("lib-diffprivlib-count", "count_nonzero", epsilon, 0.0, 1.0,
                 [([0.0], [1.0]), ([0.0] * 4, [0.0] * 3 + [1.0]), ([0.0, 0.0], [0.0, FAR])], bounded=False)
