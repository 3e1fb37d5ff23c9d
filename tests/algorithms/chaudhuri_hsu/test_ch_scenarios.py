"""Chaudhuri & Hsu scenarios (spec 4.1-4.4): exact quantities, samplers, and the utility contrast."""

from __future__ import annotations

import math

import numpy as np
import pytest

import algorithms
from algorithms.chaudhuri_hsu.scenarios import LB5, LabelPacking, SphereBand, band_mass
from attacks.packings import lb5_K, lb5_eta


def test_lb5_constants_agree_with_the_packing_family_and_the_paper():
    sc = LB5(0.1, 50)
    assert sc.K == lb5_K(0.1, 50) == 598 and sc.eta == pytest.approx(lb5_eta(0.1, 50))
    assert sc.kappa == pytest.approx(5 + 3 * math.exp(5.0))          # 1/2 + 3/(4 eta)
    z, eta = LB5(1.0, 3, j=10).z, LB5(1.0, 3).eta
    t = np.array([z - eta, z - eta / 3 - 1e-9, z, z + eta / 6, z + 0.3])
    err = LB5(1.0, 3, j=10).error(t)
    assert err[2] == 0 and np.all(err[[0, 1, 4]] >= 0.25 - 1e-6) and err[3] < 0.25


def test_lb5_sampler_matches_example_1_density():
    """Half the mass uniform, half on G_z: P[x in G_z] = 1/2 + (2 eta/3)/2. 20,000 draws: the
    binomial s.d. is 0.0035, the tolerance 0.015 (> 4 s.d.; false alarm < 1e-4, seed fixed)."""
    sc = LB5(1.0, 3, j=40)
    S = sc.sample(20_000, np.random.default_rng(0))
    inside = np.abs(S.X[:, 0] - sc.z) <= sc.eta / 3
    assert inside.mean() == pytest.approx(0.5 + sc.eta / 3, abs=0.015)
    assert np.array_equal(S.y, (S.X[:, 0] >= sc.z).astype(np.int8))
    g = sc.on_grid(np.linspace(0, 1, 256)).sample(50, np.random.default_rng(1))
    assert np.all(np.isin(g.X[:, 0], np.linspace(0, 1, 256)))


def test_sphere_band_exact_mass_and_samplers():
    assert band_mass(3, 0.3) == pytest.approx(0.3)                    # n = 3: U(W) = gamma
    b, c = SphereBand(10, 0.5, "band"), SphereBand(10, 0.5, "caps")
    assert b.kappa == pytest.approx(1 / band_mass(10, 0.5)) and b.kappa <= b.kappa_paper
    assert c.kappa <= c.kappa_paper
    rng = np.random.default_rng(2)
    Xb, Xc = b.sample_x(2_000, rng), c.sample_x(2_000, rng)
    assert np.allclose(np.linalg.norm(Xb, axis=1), 1) and np.all(np.abs(Xb[:, 0]) <= 0.5 + 1e-12)
    assert np.all(np.abs(Xc[:, 0]) >= 0.5 - 1e-12)
    # the two caps are equally likely: 2,000 draws, s.d. 0.011, tolerance 0.05
    assert (Xc[:, 0] > 0).mean() == pytest.approx(0.5, abs=0.05)
    S = SphereBand(3, 0.3, target="perp").sample(100, rng)
    assert np.array_equal(S.y, (S.X[:, 1] >= 0).astype(np.int8))


def test_label_packing_is_a_packing():
    L = algorithms.get("ch-a2", alpha=1.0, grid=256)
    sc = LabelPacking.from_class(L.H.matrix, L.H.domain, 32, 1 / 16)
    D = np.count_nonzero(sc.P[:, None] != sc.P[None], axis=2)
    assert sc.P.shape[0] >= 3 and D[~np.eye(len(D), dtype=bool)].min() > sc.s * 32
    assert sc.success(0, sc.P[:1]).all()


def _excess(L, sc, m, runs=200):
    tau = np.append(L.H.domain[:, 0], 1.0)
    floor = sc.error(tau).min()
    rng = np.random.default_rng(m)
    rows = L.sample_rows(L.summarize(sc.sample(m, rng)), runs, rng)
    return float(sc.error(tau[rows]).mean() - floor)


def test_utility_contrast_on_lb5():
    """Example 1 (alpha = 1, M = 3): A1 with a fine public cover succeeds at m = 300 (= O~(M)
    with the constants here), a coarse cover (eps0 = 0.12 > eta) stays above error 1/4 (every
    threshold outside G_z has error >= 1/4), ERM is already accurate at m = 30. Seeded; the
    margins are > 5x the run-to-run spread seen in benchmarks/bench_ch_utility.py."""
    base = LB5(1.0, 3.0, j=43)
    fine = algorithms.get("ch-a1", alpha=1.0, grid=1024, eps0=0.1 * base.eta / 3, max_cover=5000)
    coarse = algorithms.get("ch-a1", alpha=1.0, grid=1024, eps0=0.12)
    erm = algorithms.get("ch-erm", alpha=1.0, grid=1024)
    sc = base.on_grid(fine.H.domain[:, 0])
    assert _excess(fine, sc, 300) < 0.05
    assert _excess(coarse, sc, 300) > 0.2
    assert _excess(erm, sc, 30) < 0.05
