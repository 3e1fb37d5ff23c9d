"""Outputs as features: mixed (value or "no answer") and many-code discrete outputs.

A black box may return, per coordinate, either a number or "no answer" — the sparse vector that
releases a noisy value on ⊤ and nothing on ⊥ is the classic case. privaudit reads ``NaN`` as "no
value". A user who encodes "no answer" as a number instead (−100, +100, 0 …) gives a float
column with an *atom*: one exact value carrying a share of the runs while the rest is continuous.
Both are mapped to the same features — an indicator per atom (and one for NaN) and the value where
there is one (0 elsewhere) — so every event privaudit builds on them, and hence the bound, is the
same whatever the encoding.

Discrete vector outputs (integer codes per coordinate) get one-hot codes per coordinate, the
coordinate itself (ordinal), and the count of each symbol over the coordinates: features that
generalise across the thousands of codes a vector of answers can take.

`Featurizer` is a frozen value: events built on it are shipped to workers and serialised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ATOM_SHARE = 0.01      # a repeated exact value with at least this share of a column's runs …
CONTINUOUS_SHARE = 0.01  # … in a column that also has at least this share of continuous values
MAX_ATOMS = 8
MAX_SYMBOLS = 16       # discrete columns with more distinct codes are treated as ordinal only
_BLOCK = 8192          # runs per block of per-column scores


@dataclass(frozen=True)
class Featurizer:
    """The feature map φ(output) of one pair's outputs.

    Per column j: an indicator for each atom in ``atoms[j]``, one for NaN when ``missing[j]``,
    and the value (0 on atoms and NaN) when ``numeric[j]``; then the count over columns of each
    value in ``symbols``; then, with ``pairwise``, the products of every two base features.
    """

    width: int
    atoms: tuple[tuple[float, ...], ...]
    missing: tuple[bool, ...]
    numeric: tuple[bool, ...]
    symbols: tuple[float, ...] = ()
    pairwise: bool = False
    zero_atoms: bool = True   # value feature 0 on atoms ("no answer"); False for discrete codes

    def base(self, outputs: np.ndarray, copy: bool = True) -> np.ndarray:
        """The base features, one row per run; ``copy=False`` may return `outputs` itself (a
        view of it) when they are the features already, for callers that only read them."""
        x = np.asarray(outputs, dtype=np.float64).reshape(outputs.shape[0], -1)
        if self._plain():
            # raw coordinates (NaN -> 0 as below): the same array, without the per-column rows and
            # the transpose — a continuous vector's scores are computed on every confirmation
            # run. A finite sum means no NaN (a NaN or an overflow makes it NaN or inf).
            if np.isfinite(x.sum()):
                return x.copy() if copy else x
            return np.where(np.isnan(x), 0.0, x)
        n_base = sum(len(a) + int(s) + int(v) for a, s, v in zip(self.atoms, self.missing, self.numeric))
        out = np.empty((x.shape[0], n_base + len(self.symbols)))
        # in blocks of runs: the block's features are written as rows of a (features, runs) array
        # (each column of the block contiguous), then transposed into place — the same values as
        # stacking columns, without striding through a row-major array once per feature, and
        # with the temporaries small enough to stay in cache
        for s0 in range(0, x.shape[0], _BLOCK):
            out[s0:s0 + _BLOCK] = self._rows(x[s0:s0 + _BLOCK], out.shape[1]).T
        return out

    def _rows(self, x: np.ndarray, m: int) -> np.ndarray:
        """The base features of the runs `x` as an (m, runs) array."""
        rows = np.empty((m, x.shape[0]))
        cols = np.ascontiguousarray(x.T)
        r = 0
        for j, (p, n_ind, val) in enumerate(self._blocks()):
            r = p + n_ind + int(val is not None)
            self._column_features(j, cols[j], rows[p:r])
        for s in self.symbols:
            rows[r] = np.count_nonzero(x == s, axis=1)
            r += 1
        return rows

    def _column_features(self, j: int, xj: np.ndarray, rows: np.ndarray) -> None:
        """Write column j's base features — an indicator per atom, one for NaN when
        ``missing[j]``, the value when ``numeric[j]`` (0 on NaN, and on atoms with
        `zero_atoms`) — into `rows`, one feature per row; `xj` is the column, contiguous."""
        nan = np.isnan(xj)
        off = nan.copy()
        r = 0
        for a in self.atoms[j]:
            hit = xj == a
            rows[r] = hit
            if self.zero_atoms:
                off |= hit
            r += 1
        if self.missing[j]:
            rows[r] = nan
            r += 1
        if self.numeric[j]:
            rows[r] = np.where(off, 0.0, xj)

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        f = self.base(outputs)
        if not self.pairwise or f.shape[1] < 2:
            return f
        m = f.shape[1]
        i, k = np.triu_indices(m, 1)
        # [f, f_i * f_k] written in place, product by product: the same array as concatenating
        # fancy-indexed copies, in half the time (scores of a continuous output are featurised on
        # every confirmation run)
        out = np.empty((f.shape[0], m + i.size))
        out[:, :m] = f
        for j, (a, b) in enumerate(zip(i.tolist(), k.tolist())):
            np.multiply(f[:, a], f[:, b], out=out[:, m + j])
        return out

    def scores(self, outputs: np.ndarray, weights: list[np.ndarray]) -> list[np.ndarray]:
        """``self(outputs) @ w`` for each w, without building the pairwise features.

        With ``pairwise``, w holds the m base weights, then one weight per product f_a f_b
        (a < b, in `np.triu_indices` order); the products' part of the score is the quadratic
        form ``f^T W f`` with W upper-triangular, computed as ``sum((f @ W) * f)`` per run: an
        (n, m) array instead of an (n, m + m(m-1)/2) one. Equal to the explicit dot product up to
        rounding (the order of the additions differs)."""
        ws = [np.asarray(w, dtype=np.float64) for w in weights]
        out: list = [None] * len(ws)
        self._column_scores(outputs, ws, out)
        rest = [n for n, o in enumerate(out) if o is None]
        if not rest:
            return out
        f = self.base(outputs, copy=False)
        m = f.shape[1]
        quadratic = self.pairwise and m >= 2
        if quadratic:
            i, k = np.triu_indices(m, 1)
        for n in rest:
            w = ws[n]
            if quadratic:
                # f.w + f^T W f = sum_j ((f @ W)_j + w_j) f_j: one product with f, one sum
                W = np.zeros((m, m))
                W[i, k] = w[m:]
                g = f @ W
                g += w[:m]
                out[n] = np.einsum("ij,ij->i", g, f)
            else:
                out[n] = f @ w[:m]
        return out

    def _blocks(self) -> list[tuple[int, int, int | None]]:
        """Per column: (first indicator's index, number of indicators, value's index or None)."""
        blocks, pos = [], 0
        for a, s, v in zip(self.atoms, self.missing, self.numeric):
            n_ind = len(a) + int(s)
            blocks.append((pos, n_ind, pos + n_ind if v else None))
            pos += n_ind + int(v)
        return blocks

    def _column_scores(self, outputs: np.ndarray, ws: list[np.ndarray], out: list) -> None:
        """Fill ``out[n]`` for each weight vector ``ws[n]`` whose nonzero weights all lie on one
        column's features (its "no value" indicators and value: the per-column half-lines of a
        mixed output, which are most of its scores), computed from that column alone.

        Bit for bit the dot product with the base features: with `zero_atoms`, at most one of a
        column's features is nonzero in a run, so the dot product is that feature times its weight
        (one rounding) plus exact zeros (finite features and weights), whatever the order of the
        additions. Building all the base features for a score that reads one column cost a mixed
        output of 20 columns about 1.4 us per run, on every confirmation run."""
        if self.pairwise or not self.zero_atoms or self._plain():
            return
        blocks = self._blocks()
        per_column: dict[int, list[int]] = {}
        for n, w in enumerate(ws):
            nz = np.flatnonzero(w)
            if nz.size == 0 or w.size != self.n_features():
                continue
            for j, (p, n_ind, val) in enumerate(blocks):
                end = p + n_ind + int(val is not None)
                if p <= nz[0] and nz[-1] < end:
                    per_column.setdefault(j, []).append(n)
                    break
        if not per_column:
            return
        x = np.asarray(outputs, dtype=np.float64).reshape(outputs.shape[0], -1)
        n_runs = x.shape[0]
        plan = []
        for j, members in per_column.items():
            p, n_ind, val = blocks[j]
            b = n_ind + int(val is not None)
            res = np.empty((len(members), n_runs))
            for r, n in enumerate(members):
                out[n] = res[r]
            plan.append((j, np.stack([ws[n][p:p + b] for n in members]), res))
        # in blocks of runs, so the temporaries stay small (fresh pages are dear in this VM: the
        # first call on 2e5 runs took 0.13-0.17 s in blocks, 0.36-0.46 s without; later calls
        # the same)
        used = sorted(per_column)
        position = {j: i for i, j in enumerate(used)}
        for s0 in range(0, n_runs, _BLOCK):
            # only the columns scored, each contiguous (a column of a row-major array is strided)
            xb = np.ascontiguousarray((x[s0:s0 + _BLOCK] if len(used) == x.shape[1]
                                       else x[s0:s0 + _BLOCK, used]).T)
            for j, weights, res in plan:
                xj = xb[position[j]]
                # the column's base features as rows (as `base` writes them), then every member's
                # score in one product: each sum has one nonzero term, so it is exact
                rows = np.empty((weights.shape[1], xj.size))
                self._column_features(j, xj, rows)
                res[:, s0:s0 + xj.size] = weights @ rows

    def _plain(self) -> bool:
        return (not self.symbols and all(not a for a in self.atoms) and not any(self.missing)
                and all(self.numeric))

    def n_features(self) -> int:
        m = sum(len(a) + int(s) + int(n) for a, s, n in zip(self.atoms, self.missing, self.numeric))
        m += len(self.symbols)
        return m + (m * (m - 1) // 2 if self.pairwise else 0)

    def with_pairwise(self, pairwise: bool = True) -> "Featurizer":
        return Featurizer(self.width, self.atoms, self.missing, self.numeric, self.symbols, pairwise,
                          self.zero_atoms)

    def to_dict(self) -> dict:
        return {"width": self.width, "atoms": [list(a) for a in self.atoms],
                "missing": list(self.missing), "numeric": list(self.numeric),
                "symbols": list(self.symbols), "pairwise": self.pairwise,
                "zero_atoms": self.zero_atoms}

    @staticmethod
    def from_dict(d: dict) -> "Featurizer":
        return Featurizer(int(d["width"]), tuple(tuple(float(v) for v in a) for a in d["atoms"]),
                          tuple(bool(v) for v in d["missing"]), tuple(bool(v) for v in d["numeric"]),
                          tuple(float(v) for v in d.get("symbols", ())), bool(d.get("pairwise")),
                          bool(d.get("zero_atoms", True)))


def _flat(outs: list[np.ndarray]) -> np.ndarray:
    return np.vstack([np.asarray(o, dtype=np.float64).reshape(o.shape[0], -1) for o in outs])


def mixed_layout(outs: list[np.ndarray]) -> Featurizer | None:
    """The featurizer of float outputs that are partly "no value", or None if they are plain
    continuous.

    A column is mixed when it holds NaN, or when a few exact values (atoms) carry at least
    `ATOM_SHARE` of its runs while at least `CONTINUOUS_SHARE` of them are non-repeated values.
    Decided on pilot samples of both inputs together.
    """
    x = _flat(outs)
    n, width = x.shape
    nan = np.isnan(x)
    any_mixed, heavy_values = bool(nan.any()), set()
    for j in range(width):
        xj = x[~nan[:, j], j]
        vals, counts = np.unique(xj, return_counts=True)
        heavy = counts >= max(ATOM_SHARE * n, 2)
        heavy_values.update(float(v) for v in vals[heavy])
        cont = (xj.size - int(counts[heavy].sum())) / n
        any_mixed |= bool(heavy.any()) and cont >= CONTINUOUS_SHARE
    if not any_mixed:
        return None
    # "no value" is one code whatever column it is in: the same atoms and the same NaN indicator
    # for every column, so NaN, -100 and +100 give the same features (and the same bound) even
    # when a column happens to hold only "no value" in the pilot
    shared = tuple(sorted(heavy_values))[:MAX_ATOMS]
    return Featurizer(width, tuple(shared for _ in range(width)), tuple([bool(nan.any())] * width),
                      tuple([True] * width))


def discrete_layout(outs: list[np.ndarray]) -> Featurizer:
    """Features of integer vector outputs: one-hot codes per column (columns with at most
    `MAX_SYMBOLS` distinct codes), the column as an ordinal value, and counts per symbol."""
    x = _flat(outs)
    width = x.shape[1]
    atoms, symbols = [], set()
    for j in range(width):
        vals = np.unique(x[:, j])
        if vals.size <= MAX_SYMBOLS:
            atoms.append(tuple(float(v) for v in vals))
            symbols.update(float(v) for v in vals)
        else:
            atoms.append(())
    syms = tuple(sorted(symbols)) if len(symbols) <= MAX_SYMBOLS else ()
    # with one-hot codes the value feature of a column is redundant but harmless; keep it so a
    # linear score can use order (ordinal answers) with one weight
    return Featurizer(width, tuple(atoms), tuple([False] * width), tuple([True] * width), syms,
                      zero_atoms=False)


def continuous_layout(width: int) -> Featurizer:
    """Plain continuous vectors: the raw coordinates."""
    return Featurizer(width, tuple(() for _ in range(width)), tuple([False] * width),
                      tuple([True] * width))


__all__ = ["Featurizer", "mixed_layout", "discrete_layout", "continuous_layout"]
