"""Vectorised samplers shared by the learners: multivariate-hypergeometric subsample counts,
random partitions, the exponential mechanism (inverse CDF), label flips, and exact enumeration of
subsample outcomes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import gammaln

from audit.errors import PrivauditError

from .checks import check_runs

MAX_EXACT_GROUPS = 16   # subset-Mobius oracle: 2^16 subsets
MAX_EXACT_VECTORS = 300_000


def sample_counts(count: np.ndarray, n_prime: int, size: int, rng: np.random.Generator,
                  scheme: str = "without") -> np.ndarray:
    """Group counts of ``size`` independent subsamples of ``n_prime`` records: (size, G) int64.

    ``scheme="without"``: a uniform ``n'``-subset of indices (the paper's ``I``);
    ``"with"``: ``n'`` indices drawn with replacement (negative control NC-2).
    """
    if scheme == "without":
        if n_prime == int(count.sum()):
            return np.broadcast_to(count, (size, count.size)).copy()
        return rng.multivariate_hypergeometric(count, n_prime, size=size).astype(np.int64)
    if scheme == "with":
        return rng.multinomial(n_prime, count / count.sum(), size=size).astype(np.int64)
    raise PrivauditError(f"unknown subsampling scheme {scheme!r}; valid: without, with")


# -- random disjoint partitions (DF-REAL / DF-PP2 blocks, Li-Wang-Ye P1/P2 portions) ---------------
# Measured costs (numpy 2.4, one core): shuffling one item with `Generator.permuted` and counting
# it, and one vectorised `Generator.hypergeometric` draw. `partition_counts` picks the cheaper one.
PARTITION_ITEM_NS, PARTITION_DRAW_NS = 25.0, 230.0


PARTITION_MAX_ITEMS = 1 << 16      # int64 entries shuffled at once (512 kB: stays in cache)


PARTITION_METHODS = ("auto", "items", "hypergeometric")


def partition_counts(colors: np.ndarray, sizes: Any, rng: np.random.Generator, runs: int | None = None,
                     method: str = "auto") -> np.ndarray:
    """Cell counts of the blocks of independent uniformly random partitions of a multiset.

    Each run splits its ``m`` items (``colors[g]`` of cell ``g``) into disjoint blocks of the
    given sizes, uniformly at random (as a uniform random permutation cut into consecutive
    slices would); items beyond ``sum(sizes)`` form an unreported leftover block. The result has
    exactly the law of the blocks' cell counts, the multiple hypergeometric law of a table with
    margins ``s`` (block sizes, leftover included) and ``c`` (colours),
    ``Pr[T] = prod_b s_b! prod_g c_g! / (m! prod_{b,g} T[b, g]!)``, and runs are independent.
    Two exact samplers, both vectorised over runs:

    * ``"items"``: each run's items are shuffled (`Generator.permuted`, Fisher-Yates per row) and
      counted per block by one `bincount`: cost ~ ``m`` per run;
    * ``"hypergeometric"``: sequential conditional draws, cell after cell and block after block,
      ``T[b, g] ~ Hypergeometric(cap_b, sum_{b' > b} cap_b', rem_g)`` (one array call per
      (cell, block); the last non-empty cell takes the remaining capacities): cost ~
      ``(#cells - 1)(#blocks - 1)`` draws per run, independent of ``m``.

    Parameters
    ----------
    colors : (G,) or (R, G) int
        Items per cell, shared by all runs or one row per run (all rows with the same total).
    sizes : sequence of int, length k
        Block sizes; ``sum(sizes) <= m``.
    rng : numpy Generator
    runs : int
        Number of runs (required for shared ``colors``; must match R otherwise).
    method : {"auto", "items", "hypergeometric"}
        ``"auto"`` picks the cheaper by the measured costs above.

    Returns
    -------
    (runs, k, G) int64.
    """
    colors = np.asarray(colors)
    if colors.ndim not in (1, 2) or colors.shape[-1] < 1 or not np.issubdtype(colors.dtype, np.integer):
        raise PrivauditError(f"partition: colors must be a (G,) or (runs, G) integer array, got "
                             f"shape {colors.shape} dtype {colors.dtype}")
    colors = colors.astype(np.int64)
    if np.any(colors < 0):
        raise PrivauditError("partition: colour counts must be >= 0")
    if colors.ndim == 2:
        if runs is not None and runs != colors.shape[0]:
            raise PrivauditError(f"partition: runs = {runs} but colors has {colors.shape[0]} rows")
        runs = colors.shape[0]
        tot = colors.sum(axis=1)
        if runs and np.any(tot != tot[0]):
            raise PrivauditError("partition: every run must hold the same number of items")
        m = int(tot[0]) if runs else 0
    else:
        if runs is None:
            raise PrivauditError("partition: runs is required with shared colour counts")
        m = int(colors.sum())
    runs = check_runs(runs)
    sizes = np.asarray(sizes, dtype=np.int64).reshape(-1)
    if sizes.size < 1 or np.any(sizes < 0) or int(sizes.sum()) > m:
        raise PrivauditError(f"partition: block sizes {sizes.tolist()} must be >= 0 and sum to at most "
                             f"the {m} items")
    if method not in PARTITION_METHODS:
        raise PrivauditError(f"partition: unknown method {method!r}; "
                             f"valid: {', '.join(PARTITION_METHODS)}")
    caps = sizes if int(sizes.sum()) == m else np.append(sizes, m - int(sizes.sum()))   # + leftover
    k, G = sizes.size, colors.shape[-1]
    if runs == 0:
        return np.zeros((0, k, G), np.int64)
    if method == "auto":
        method = partition_method(colors, sizes)
    if method == "items":
        return _partition_items(colors, caps, k, runs, rng)
    return _partition_hypergeometric(colors, caps, k, runs, rng)


def partition_method(colors: np.ndarray, sizes: Any) -> str:
    """The cheaper exact sampler of `partition_counts` for these colours and block sizes."""
    colors = np.asarray(colors)
    m = int(colors.sum(axis=-1).max()) if colors.size else 0
    used = int(np.count_nonzero(colors.any(axis=0) if colors.ndim == 2 else colors))
    blocks = len(sizes) + (int(np.sum(sizes)) < m)
    draws = max(used - 1, 0) * (blocks - 1)
    return "items" if PARTITION_ITEM_NS * m < PARTITION_DRAW_NS * draws else "hypergeometric"


def _partition_items(colors: np.ndarray, caps: np.ndarray, k: int, runs: int,
                     rng: np.random.Generator) -> np.ndarray:
    """`partition_counts` by shuffling each run's items (values: run offset + cell id)."""
    G, kk = colors.shape[-1], caps.size
    m = int(caps.sum())
    slot = np.repeat(np.arange(kk, dtype=np.int64) * G, caps)          # block offset of each position
    step = max(1, PARTITION_MAX_ITEMS // max(m, 1))
    out = np.empty((runs, k, G), np.int64) if runs > step else None
    for s in range(0, runs, step):
        r = min(step, runs - s)
        if colors.ndim == 1:
            items = np.broadcast_to(np.repeat(np.arange(G, dtype=np.int64), colors), (r, m))
        else:
            cells = np.tile(np.arange(G, dtype=np.int64), r)
            items = np.repeat(cells, colors[s:s + r].ravel()).reshape(r, m)
        # the run offset rides along with the values, so one bincount counts every run at once
        A = items + (np.arange(r, dtype=np.int64) * (kk * G))[:, None]
        rng.permuted(A, axis=1, out=A)
        A += slot
        T = np.bincount(A.ravel(), minlength=r * kk * G).reshape(r, kk, G)[:, :k]
        if out is None:                    # one chunk: no copy
            return T
        out[s:s + r] = T
    return out


def _partition_hypergeometric(colors: np.ndarray, caps: np.ndarray, k: int, runs: int,
                              rng: np.random.Generator) -> np.ndarray:
    """`partition_counts` by sequential conditional hypergeometric draws (layout (block, run))."""
    G, kk = colors.shape[-1], caps.size
    shared = colors.ndim == 1
    total = colors if shared else colors.sum(axis=0)
    used = np.flatnonzero(total)
    used = used[np.argsort(total[used], kind="stable")]     # the largest cell last: it costs nothing
    cap = np.repeat(caps[:, None], runs, axis=1)                        # (kk, runs) capacities left
    out = np.zeros((k, G, runs), np.int64)
    for i, g in enumerate(used):
        if i == used.size - 1:             # the remaining capacities are exactly this cell's items
            out[:, g] = cap[:k]
            break
        rem = np.full(runs, colors[g], np.int64) if shared else colors[:, g].copy()
        rest = cap.sum(axis=0)
        for b in range(kk):
            if b == kk - 1:
                x = rem
            else:
                rest -= cap[b]
                x = rng.hypergeometric(cap[b], rest, rem)
            if b < k:
                out[b, g] = x
            cap[b] -= x
            rem = rem - x
            if not rem.any():
                break
    return np.ascontiguousarray(out.transpose(2, 0, 1))


GEMM_SMALL = 1 << 19      # m*k*n of one product: BLAS keeps such products on one thread


def skinny_matmul(A: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``A @ W`` for a tall ``A`` (rows, G) and a small ``W`` (G, K), in row slices.

    OpenBLAS splits large products over threads; for these skinny products the hand-offs cost
    more than they save (on the shared 2-core machine, 2-100x slower per row than one thread
    whenever other processes hold the cores; runners already use every core anyway). Slices of
    at most `GEMM_SMALL` multiply-adds stay on OpenBLAS's single-threaded small-matrix path.
    """
    rows, G = A.shape
    step = GEMM_SMALL // max(G * W.shape[1], 1)
    if step < 32 or step >= rows:        # heavy rows: one call (threads pay off)
        return A @ W
    out = np.empty((rows, W.shape[1]), np.result_type(A, W))
    for s in range(0, rows, step):
        np.matmul(A[s:s + step], W, out=out[s:s + step])
    return out


def em_log_weights(utilities: np.ndarray, epsilon: float, sensitivity: float = 1.0,
                   divisor: float = 2.0) -> np.ndarray:
    """Log-weights ``eps u / (divisor Delta)`` of the exponential mechanism, max subtracted [MT07].

    ``divisor = 2`` is the published mechanism; a planted bug's row may change it (``1``: the
    forgotten 1/2, true loss up to ``2 eps``).
    """
    factor = epsilon / (divisor * sensitivity)
    logits = factor * np.asarray(utilities, dtype=np.float64)
    return logits - logits.max()


def em_sample(logits: np.ndarray, mask: np.ndarray | None, rng: np.random.Generator,
              rows: int | None = None) -> np.ndarray:
    """One exponential-mechanism draw per row, by inverse CDF in float64 with the row max subtracted.

    The one sampler of the exponential mechanism: one uniform per row (``rng.random(rows)``),
    compared with the running sum of the weights.

    Parameters
    ----------
    logits : (r, k) or (k,) float64
        Log-weights (shared by all rows when 1-D).
    mask : (r, k) bool or None
        Candidates available in each row (e.g. the representatives of ``H_T``).
    rows : int, optional
        Number of draws from 1-D `logits` without a mask (one cumulative sum for all rows, so
        memory stays O(k)); the draws equal those of the broadcast (rows, k) logits.

    Returns
    -------
    (r,) int64 column indices.
    """
    L = np.asarray(logits, dtype=np.float64)
    if rows is not None and L.ndim == 1 and mask is None:
        # count of {c <= u} = searchsorted(c, u, "right") for the non-decreasing running sum c
        c = np.cumsum(np.exp(L - L.max()))
        u = rng.random(rows) * c[-1]
        return np.minimum(np.searchsorted(c, u, side="right"), L.size - 1)
    if rows is not None and L.ndim == 1:
        L = np.broadcast_to(L, (rows, L.size))
    if mask is not None:
        L = np.where(mask, L if L.ndim == 2 else L[None, :], -np.inf)
    L = np.atleast_2d(L)
    L = L - L.max(axis=1, keepdims=True)     # each row keeps weight 1 on its best candidate
    c = np.cumsum(np.exp(L), axis=1)
    u = rng.random(c.shape[0]) * c[:, -1]
    return np.minimum((c <= u[:, None]).sum(axis=1), c.shape[1] - 1)


def em_probs(logits: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Exact exponential-mechanism probabilities (softmax over available candidates), rows sum to 1."""
    L = np.atleast_2d(np.asarray(logits, dtype=np.float64))
    if mask is not None:
        L = np.where(mask, L, -np.inf)
    L = L - L.max(axis=1, keepdims=True)
    w = np.exp(L)
    return w / w.sum(axis=1, keepdims=True)


def flip(labels: np.ndarray, alpha: float, rng: np.random.Generator, one_sided: bool = False) -> np.ndarray:
    """DF-FLIP: randomized response on the released label, a fresh coin per label.

    ``one_sided=True`` only flips 1 -> 0 (planted bug BV-COR-4).
    """
    coin = rng.random(np.shape(labels)) < alpha
    if one_sided:
        coin &= np.asarray(labels) == 1
    return (np.asarray(labels) ^ coin).astype(np.int8)


# -- exact enumeration of subsample outcomes ---------------------------------------------------
def subset_distribution(count: np.ndarray, n_prime: int, scheme: str = "without") -> tuple[np.ndarray, np.ndarray]:
    """Distribution of the *set of groups* hit by the subsample (spec 5.2, Mobius formula).

    ``Pr[hit = A] = sum_{B subset A} (-1)^{|A|-|B|} f(B)`` with ``f(B) = Pr[all draws in B]``:
    ``C(n_B, n')/C(n, n')`` without replacement, ``(n_B/n)^{n'}`` with replacement.

    Returns
    -------
    hit : (2^G, G) bool, prob : (2^G,) float64 (tiny negative round-off clipped to 0).
    """
    G = int(count.size)
    if G > MAX_EXACT_GROUPS:
        raise PrivauditError(f"exact oracle: the dataset has {G} distinct (point, label) groups; "
                             f"the subset formula handles at most {MAX_EXACT_GROUPS}")
    masks = np.arange(2**G)
    hit = ((masks[:, None] >> np.arange(G)[None, :]) & 1).astype(bool)
    nB = hit.astype(np.int64) @ count
    n = int(count.sum())
    if scheme == "without":
        with np.errstate(invalid="ignore"):
            logf = (gammaln(nB + 1.0) - gammaln(nB - n_prime + 1.0)
                    - gammaln(n + 1.0) + gammaln(n - n_prime + 1.0))
        f = np.where(nB >= n_prime, np.exp(np.where(nB >= n_prime, logf, 0.0)), 0.0)
    elif scheme == "with":
        f = (nB / n) ** n_prime
    else:
        raise PrivauditError(f"unknown subsampling scheme {scheme!r}")
    g = f.astype(np.float64).copy()
    for i in range(G):                      # fast Mobius transform over the subset lattice
        bit = 1 << i
        sel = (masks & bit) != 0
        g[sel] -= g[masks[sel] ^ bit]
    return hit, np.clip(g, 0.0, 1.0)


def count_distribution(count: np.ndarray, n_prime: int, scheme: str = "without") -> tuple[np.ndarray, np.ndarray]:
    """Every group-count vector of the subsample with its probability (for count-dependent variants).

    Raises
    ------
    PrivauditError
        When there are more than ``MAX_EXACT_VECTORS`` vectors.
    """
    count = np.asarray(count, dtype=np.int64)
    caps = count if scheme == "without" else np.full(count.size, n_prime)
    # number of vectors by dynamic programming before enumerating
    ways = np.zeros(n_prime + 1, dtype=float)
    ways[0] = 1
    for c in caps:
        new = np.zeros_like(ways)
        for k in range(min(int(c), n_prime) + 1):
            new[k:] += ways[: n_prime + 1 - k]
        ways = new
    if ways[n_prime] > MAX_EXACT_VECTORS:
        raise PrivauditError(f"exact oracle: {ways[n_prime]:.3g} subsample count vectors "
                             f"(limit {MAX_EXACT_VECTORS}); use a smaller n' or fewer distinct points")
    vecs = np.zeros((1, 0), dtype=np.int64)
    for gi, c in enumerate(caps):
        remaining = int(caps[gi + 1:].sum())
        s = vecs.sum(1)
        parts = []
        for k in range(min(int(c), n_prime) + 1):
            ok = (s + k <= n_prime) & (s + k + remaining >= n_prime)
            if ok.any():
                parts.append(np.column_stack([vecs[ok], np.full(ok.sum(), k)]))
        vecs = np.vstack(parts)
    n = int(count.sum())
    if scheme == "without":
        logp = (gammaln(count + 1.0) - gammaln(vecs + 1.0) - gammaln(count - vecs + 1.0)).sum(1) \
            - (gammaln(n + 1.0) - gammaln(n_prime + 1.0) - gammaln(n - n_prime + 1.0))
    else:
        logp = gammaln(n_prime + 1.0) - gammaln(vecs + 1.0).sum(1) + (vecs * np.log(count / n)).sum(1)
    return vecs, np.exp(logp)
