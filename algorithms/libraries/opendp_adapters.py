"""OpenDP 0.16 (the OpenDP Library, opendp.org; Gaboardi, Hay, Vadhan et al.): measurements built
with its combinators. The claim of each is OpenDP's own privacy map at distance 1 (``map(1)``),
and its neighbour relation the input metric's (absolute / l1 / l-infinity distance 1 on values,
symmetric distance 1 — add or remove one record — on datasets).

Vectorised where the library is: the Laplace and discrete Laplace measurements on a
``vector_domain`` add independent noise of the same scale to every coordinate, so one call on a
vector of ``runs`` copies of x gives ``runs`` independent runs of the scalar measurement (its
noise per coordinate is the scalar one's). Report noisy max and the bounded sum have no such form:
one call per run.
"""

from __future__ import annotations

import numpy as np

from audit.types import Claim

from ..registry import register
from .base import FAR, LibraryMechanism, repeat
from .loader import load, requires

DIST = "opendp"
PAPER = "The OpenDP Library 0.16 (opendp.org)"


def _dp():
    dp = load(DIST)
    dp.enable_features("contrib")
    return dp


@register("lib-opendp-laplace", kind="mechanism", paper=PAPER, section="measurements.make_laplace (float)",
          summary="OpenDP's Laplace measurement on one float; eps = map(1)", requires=requires(DIST))
def laplace(scale: float = 1.0) -> LibraryMechanism:
    """``atom_domain(float) >> then_laplace(scale)``: claim map(1) = 1/scale, absolute distance 1
    (replace-one on the value). Sampled through the vector form (one call for all runs)."""
    dp = _dp()
    scalar = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)) >> dp.m.then_laplace(scale=scale)

    def build():
        dp = _dp()
        vector = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)) >> \
            dp.m.then_laplace(scale=scale)
        return lambda x, n: vector([float(x[0])] * n)

    return LibraryMechanism("lib-opendp-laplace", DIST, Claim(float(scalar.map(1.0))), "one float",
                            [([0.0], [1.0])], {"scale": scale}, build, input_distance="l1:1")


@register("lib-opendp-geometric", kind="mechanism", paper=PAPER,
          section="measurements.make_laplace (integer: discrete Laplace, Canonne et al. 2020)",
          summary="OpenDP's discrete Laplace (geometric) on one integer; eps = map(1)", requires=requires(DIST))
def geometric(scale: float = 1.0) -> LibraryMechanism:
    """``atom_domain(int) >> then_laplace(scale)``: the discrete Laplace mechanism, claim map(1),
    absolute distance 1. Sampled through the vector form."""
    dp = _dp()
    scalar = (dp.atom_domain(T=int), dp.absolute_distance(T=int)) >> dp.m.then_laplace(scale=scale)

    def build():
        dp = _dp()
        vector = (dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)) >> dp.m.then_laplace(scale=scale)
        return lambda x, n: vector([int(x[0])] * n)

    return LibraryMechanism("lib-opendp-geometric", DIST, Claim(float(scalar.map(1))), "one integer",
                            [([0.0], [1.0])], {"scale": scale}, build, integer=True, input_distance="l1:1")


@register("lib-opendp-noisy-max", kind="mechanism", paper=PAPER,
          section="measurements.make_noisy_max (report noisy max, Gumbel noise)",
          summary="OpenDP's report noisy max over 5 scores; eps = map(1)", requires=requires(DIST))
def noisy_max(scale: float = 2.0, k: int = 5) -> LibraryMechanism:
    """``vector_domain(float), linf_distance >> then_noisy_max(max_divergence, scale)``: the index
    of the largest noisy score; claim map(1) (= 2/scale), scores moving by at most 1 each.
    Pairs: StatDP's patterns for k scores."""
    def measurement():
        dp = _dp()
        return (dp.vector_domain(dp.atom_domain(T=float, nan=False), size=k), dp.linf_distance(T=float)) >> \
            dp.m.then_noisy_max(dp.max_divergence(), scale=scale)

    def build():
        meas = measurement()
        return lambda x, n: repeat(lambda: meas([float(v) for v in x]), n)

    one = np.ones(k)
    pairs = [(one, np.r_[0.0, np.full(k - 1, 2.0)]), (np.r_[2.0, np.zeros(k - 1)], one),
             (one, np.r_[2.0, np.ones(k - 1)]), (one, np.r_[np.zeros(k // 2), np.full(k - k // 2, 2.0)])]
    return LibraryMechanism("lib-opendp-noisy-max", DIST, Claim(float(measurement().map(1.0))),
                            f"vectors of {k} scores", pairs, {"scale": scale, "k": k}, build, integer=True,
                            input_distance="linf:1")


@register("lib-opendp-sum", kind="mechanism", paper=PAPER,
          section="transformations.make_clamp >> make_sum >> measurements.make_laplace",
          summary="OpenDP's bounded sum of floats in [0, 10] plus Laplace; eps = map(1), add-remove",
          requires=requires(DIST))
def bounded_sum(scale: float = 10.0, lower: float = 0.0, upper: float = 10.0) -> LibraryMechanism:
    """``vector_domain(float), symmetric_distance >> then_clamp >> then_sum >> then_laplace``:
    claim map(1) (about upper/scale: OpenDP's float-sum accounting adds a little), symmetric
    distance 1 (add-remove one record). Pairs: empty vs one record at the bound, one record added
    at the bound, one record beyond the bound."""
    def measurement():
        dp = _dp()
        return (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()) >> \
            dp.t.then_clamp((lower, upper)) >> dp.t.then_sum() >> dp.m.then_laplace(scale=scale)

    def build():
        meas = measurement()
        return lambda x, n: repeat(lambda: meas([float(v) for v in x]), n)

    return LibraryMechanism("lib-opendp-sum", DIST, Claim(float(measurement().map(1)), 0.0, "add-remove"),
                            f"datasets of floats (clamped to [{lower:g}, {upper:g}])",
                            [([], [upper]), ([upper / 2], [upper / 2, upper]), ([lower], [lower, FAR])],
                            {"scale": scale, "lower": lower, "upper": upper}, build,
                            input_distance="add-remove:1")
