"""Variant tables (algorithms/common/variants.py): the registry's variant lines are the tables'
rows, every row says what it is, and a row changes only what its fields say."""

from __future__ import annotations

import pytest

import algorithms
from algorithms.building_blocks import mechanisms
from algorithms.bun_livni_moran import hist, m, sub
from algorithms.chaudhuri_hsu import learners as ch
from algorithms.common.variants import Row, describe, row_of
from algorithms.dagan_feldman import baselines, em, pp2, real, sta
from algorithms.li_wang_ye import extra, learners as lwy
from audit.errors import PrivauditError

# (registered name, the table its `variants=` is derived from)
TABLES = [
    ("df-em", em.EM_TABLE), ("df-b3", em.EM_TABLE), ("df-sta", sta.STA_TABLE),
    ("df-cor1", sta.COR_TABLE), ("df-real", real.REAL_TABLE), ("df-pp2", pp2.PP2_TABLE),
    ("df-b2", baselines.B2_TABLE),
    ("ch-em", {**ch.EM_TABLE, "brk-9": ch.COVER_TABLE["brk-9"]}),
    ("ch-a1", {**ch.EM_TABLE, **ch.COVER_TABLE}), ("ch-a1r", {**ch.EM_TABLE, **ch.COVER_TABLE}),
    ("ch-a2", {**ch.EM_TABLE, **ch.A2_TABLE}),
    ("lwy-n2", lwy.N2_TABLE), ("lwy-b1", lwy.B_TABLE), ("lwy-b3", lwy.B3_TABLE),
    ("lwy-n1", lwy.N1_TABLE), ("lwy-n3", lwy.N3_TABLE), ("lwy-w1", lwy.W1_TABLE),
    ("lwy-p1", lwy.P1_TABLE), ("lwy-p2", extra.P2_TABLE),
    ("blm-hist", hist.HIST_TABLE), ("blm-gl", hist.GL_TABLE), ("blm-m", m.M_TABLE),
    ("blm-t1", m.T1_TABLE), ("blm-sub", sub.SUB_TABLE),
    ("dp-rr", mechanisms.RR_TABLE), ("dp-laplace", mechanisms.LAPLACE_TABLE),
    ("dp-gaussian", mechanisms.GAUSS_TABLE), ("dp-em", mechanisms.EM_TABLE),
]


@pytest.mark.parametrize("name, table", TABLES, ids=[n for n, _ in TABLES])
def test_registry_lines_are_the_table(name, table):
    assert algorithms.info(name)["variants"] == describe(table)
    assert list(algorithms.spec(name).variants) == list(table)
    for vid, row in table.items():
        assert isinstance(row, Row) and row.says.strip(), (name, vid)
        if vid != "correct":          # a row differs from the published one in some field
            assert row != type(row)(row.says), (name, vid)


def test_row_of_names_the_valid_ids():
    with pytest.raises(PrivauditError, match=r"df-em: unknown variant 'bv-nope'; valid: correct, bv-em-1"):
        row_of(em.EM_TABLE, "bv-nope", "df-em")
    assert row_of(em.EM_TABLE, "bv-em-1").divisor == 1.0


def test_constant_rows_change_only_their_constant():
    # the EM scale of every DF-EM row, from its constants alone (eps = 1.5, n = 10)
    got = {k: em.em_scale(r, 1.5, 10) for k, r in em.EM_TABLE.items()}
    assert got == {"correct": (0.75, False), "bv-em-1": (1.5, False), "bv-em-2": (7.5, False),
                   "bv-em-3": (0.75, True), "nc-4": (-0.75, False)}
    assert mechanisms.laplace(variant="bv-laplace-scale").scale == 0.5 * mechanisms.laplace().scale
    assert hist.hist_scale(0.5, "b5") == 2.0 and hist.hist_scale(0.5, "b1") == 0.0
