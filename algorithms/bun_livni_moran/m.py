"""The private learner M of Theorem 17 (BLM-9) and its Theorem 1 wiring (BLM-10).

``M(S)`` with ``|S| = k m + n'`` (spec 3.9):

1. positional partition: batch ``i`` is ``S[i m : (i+1) m]``; ``h_i = G(S_i)`` with fresh coins
   (G = the globally-stable learner of Theorem 10, `stable`);
2. ``(L, a) = Hist(h_1..h_k; eps_H, delta)`` (`blm_hist`; FAIL is an ordinary item here);
3. prune: ``L' = {u in L : u != FAIL, a_u >= 3 eta / 4}`` (on the *noisy* estimates);
4. ``GenericLearner(L', S'; eps_G)`` on ``S' = S[k m : k m + n']``, or the fixed all-zero
   ``h_default`` when ``L'`` is empty.

Claim: (epsilon, delta)-DP, replace-one, model scope. ``split="paper"`` uses
``eps_H = eps_G = eps/2`` (the paper's composition); since the batches and ``S'`` are disjoint the
truth is (eps/2, delta) (spec 3.9), which is `certified`. ``split="parallel"`` (the default here,
``eps_H = eps_G = eps``) is still honestly (eps, delta)-DP and its audits are tight, so factor-2
bugs show end to end. Privacy holds for every G, k, m, n', eta (spec 5): the audits use small ones.

Vectorisation: G is not private and is expensive, so `predict` computes, once per call, the
*exact* output law of G on every distinct batch (`GlobalStableLearner.law`, memoised by batch
content; under B16's shared stream a dataset's batch laws are computed together, from the last
batch back, each reusing the laws of the stream it ends with, `stable.SharedSuffix`) and then
draws every run's ``h_1..h_k`` from those laws with fresh randomness; Hist noise
and the GenericLearner are one numpy call over all runs. Each run is a complete independent run
of M (its ``h_i`` have exactly G's law); nothing random is shared between runs.

Planted bugs (spec 6.6, ``variant=``): ``b1``-``b5``, ``b13`` (Hist, see `blm_hist`), ``b6``
(each block of m examples feeds ``r = overlap`` batches), ``b7`` (every batch is ``S[0:m]``),
``b8`` (the batch region is sorted before partitioning), ``b9``/``b10`` (GenericLearner: ERM /
missing 1/2), ``b11`` (falls back to ``h_1`` when ``L'`` is empty), ``b12`` (no Hist: ``L'`` =
raw support), ``b14`` (randomness seeded from the data), ``b15`` (``S'`` overlaps the last
batch), ``b16`` (shared stream: a batch whose own stream runs out keeps drawing from the
following batches), ``b18`` (pruning on the true counts). Benign: ``benign-ln2``,
``benign-no-plus1``.

Detectability: every variant's default pairs (`default_pairs`: crossing two-bucket, singleton,
new item among low counts, GL gap, plus the variant's own design) are what an audit with no pairs
uses. On blm-m they flag every planted bug (tests/algorithms/bun_livni_moran/test_blm_private.py,
tests/algorithms/bun_livni_moran/test_blm_default_pairs.py): b6 on `blm_designs.block_repeated_two_bucket` (counts move by
r), b9 on a GL gap -1 -> +1, b15 on `blm_designs.overlap_tail` (one example in the last batch's
T and in S': Hist e^(eps_H/2) times GL ~e^(eps_G), exact ln ratio 1.44), b16 on
`blm_designs.shared_stream` (the count of ``u`` moves from Bin(j+1, 1/2) to j+1), b8 on
`blm_designs.sorted_shift` (every run boundary of the sorted region moves: R - 1 new items, each
released w.p. ~delta/4). Two need an audit instance (registry ``instances``): b18 at
``eta = 0.52`` (at eta = 0.02, k = 64 the pruning threshold 0.96 is below one count, so pruning on
true or noisy counts keeps the same items) and b8 at ``grid = 16`` (4 points give at most 8 sorted
runs, so at most 7 batches change and the leak 3 delta / 4 stays below delta).

Theorem 1 (blm-t1; ``split="paper"`` by default: eps_H = eps_G = eps/2, certified eps/2;
``split="parallel"``: eps_H = eps_G = eps, the spec's audit wiring, claim (eps, delta) either way):
b1, b7, b9, b11, b12, b14, b18 and b16 are flagged on the default pairs; b6 at its instance
``overlap = 3`` (r eps/2 = 1.5 eps; r = 2 realizes exactly the claim); b5, b10, b15 at
``split = "parallel"`` (spec 6.6: "flagged at component and parallel-split M"; under the paper
split they realize at most eps = the claim and are flagged only ``--against certified``); b8 at
``grid = 16, eta_emp = 0.2`` on `blm_designs.sorted_chain` (15 chain batches drop h0 together;
exact ln ratio 2.6). Not detectable at any Theorem 1 instance: b2, b3, b4 only lower or skip tau,
but the wiring picks k with ``k eta / 2 >= tau + lambda(k)``, so the pruning threshold
``3 eta k / 4 >= 1.5 (tau + lambda) > tau`` for every eta_emp, eps, delta, split and mode; it
decides the release and the outputs equal the correct learner's draw for draw; b13 (noisy max)
after that pruning is post-processing of an eps_H-DP noisy count vector up to a new-item term
``0.5 exp(-(3 eta k / 4 - 1) eps_H / 2)`` (~2e-11), and eps_H <= eps.

References
----------
M. Bun, R. Livni and S. Moran, FOCS 2020: Theorem 17 (global stability implies privacy),
Theorem 1 (private learning of Littlestone classes), Lemma 15 (Hist), Lemma 16 (GenericLearner).
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from audit.errors import PrivauditError
from audit.types import Claim, Dataset, as_dataset, as_queries

from ..common.checks import check_positive, check_runs
from ..common.fitcache import data_seed
from ..common.hypotheses import HypothesisClass, make_class
from ..common.variants import Row, describe, row_of
from ..registry import register
from . import designs
from .hist import (
    GL_TABLE,
    HIST_TABLE,
    PAPER,
    gl_pick,
    gl_probabilities,
    hist_release,
    hist_tau,
    release_probabilities,
)
from .soa import soa_for
from .stable import FAIL, GlobalStableLearner, GParams, SharedSuffix

# -- the variants: one row each (algorithms/common/variants.py) ---------------------------------
def positional_starts(k: int, m: int, r: int) -> list[int]:
    """Disjoint positional batches: batch ``i`` is ``S[i m : (i + 1) m]``."""
    return [i * m for i in range(k)]


def overlapping_starts(k: int, m: int, r: int) -> list[int]:
    """B6: batch ``i`` reads block ``i // r``, so one example lies in ``r`` batches."""
    return [(i // r) * m for i in range(k)]


def first_slice_starts(k: int, m: int, r: int) -> list[int]:
    """B7: every batch is ``S[0:m]``."""
    return [0] * k


# a planted bug's own design (spec 6.6), appended to the default pairs (tests/algorithms/bun_livni_moran/test_blm_private.py)
def block_design(M: "PrivateLearnerM", L, tau_eff: float, b: float):
    """B6: counts move by r: blocks of a / b around the threshold."""
    return designs.block_repeated_two_bucket(L, M.overlap, tau_eff, b)


def sorted_design(M: "PrivateLearnerM", L, tau_eff: float, b: float):
    """B8: while tau (not a higher pruning threshold) decides a count-1 item's release, sorting
    moves every run boundary (R - 1 new items, each released w.p. ~delta/4); once pruning decides
    the release, a chain of boundary batches that all lose h0 at once."""
    if M.prune_count <= M.tau:
        return designs.sorted_shift(L)
    return designs.sorted_chain(L, tau_eff, b)


def gl_gap_design(M: "PrivateLearnerM", L, tau_eff: float, b: float):
    """B9: argmax GL: an error gap of -1 -> +1 flips the output."""
    return designs.gl_gap(L, -1)


def overlap_tail_design(M: "PrivateLearnerM", L, tau_eff: float, b: float):
    """B15: one example in the last batch's T and in S'."""
    return designs.overlap_tail(L, tau_eff, b, M.eps_G, M.d)


def shared_stream_design(M: "PrivateLearnerM", L, tau_eff: float, b: float):
    """B16: j + 1 spilling batches: u's count Bin(j+1, 1/2) -> j+1."""
    j = max(20, math.ceil(1.25 * tau_eff))
    return designs.shared_stream(L, min(j, M.k - 1))


@dataclass(frozen=True)
class MRow(Row):
    """A variant of M: the Hist and GenericLearner rows it runs, and the steps of M it changes."""

    hist: str = "correct"                # row of HIST_TABLE
    gl: str = "correct"                  # row of GL_TABLE
    starts: Callable[[int, int, int], list] = positional_starts   # the batches' first positions
    sort_batches: bool = False           # the batch region sorted by (x, y) before batching
    sprime_in_batches: bool = False      # S' = the last n' examples of the batch region
    shared_stream: bool = False          # G of batch i keeps drawing from batches i+1, ...
    data_seeded: bool = False            # one run seeded by sha256(S), replayed
    skip_hist: bool = False              # the candidates are the raw set of G outputs
    prune_true_counts: bool = False      # pruning compares the true counts
    fallback_first: bool = False         # h_1 released when L' is empty
    exact: bool = True                   # an exact oracle exists
    design: Callable | None = None       # the bug's own design (`default_pairs`)
    query_all: bool = False              # query every domain point (<= 62), not the first 8


M_TABLE = {
    "correct": MRow("Theorem 17 as specified: disjoint positional batches, Hist, pruning on noisy "
                    "estimates, GenericLearner on the fresh S'"),
    **{v: MRow(HIST_TABLE[v].says, hist=v, exact=HIST_TABLE[v].closed_form)
       for v in ("b1", "b2", "b3", "b4", "b5", "b13")},
    "b6": MRow("BUG B6: overlapping batches: batch i reads block floor(i/r) (r = overlap, default 2), "
               "so one example lies in r batches", starts=overlapping_starts, design=block_design),
    "b7": MRow("BUG B7: batch-slicing bug: every batch is S[0:m]", starts=first_slice_starts),
    "b8": MRow("BUG B8: data-dependent partition: the batch region is sorted by (x, y) before "
               "batching (blm-m audits it at grid = 16: with 4 points the sorted region has at most 8 "
               "runs, so a substitution changes at most 7 batches and the sorted_shift leak (3 delta "
               "/ 4) stays below delta)", sort_batches=True, design=sorted_design, query_all=True),
    "b9": MRow(GL_TABLE["b9"].says, gl="b9", design=gl_gap_design),
    "b10": MRow(GL_TABLE["b10"].says, gl="b10"),
    "b11": MRow("BUG B11: non-private fallback: returns h_1 (batch 0's G output) when L' is empty",
                fallback_first=True),
    "b12": MRow("BUG B12: Hist skipped: the candidates are the raw set of G outputs", skip_hist=True),
    "b14": MRow("BUG B14: randomness seeded from the data (sha256 of S): the output is a function of S",
                data_seeded=True, exact=False),
    "b15": MRow("BUG B15: S' is the last n' examples of the batch region (reused by the last batch)",
                sprime_in_batches=True, design=overlap_tail_design),
    "b18": MRow("BUG B18: pruning compares the TRUE counts (not the noisy estimates) with 3 eta k / 4 "
                "(blm-m audits it at eta = 0.52: at eta = 0.02, k = 64 the threshold 0.96 is below one "
                "count, so pruning never acts)", prune_true_counts=True),
    "b16": MRow("BUG B16: shared stream across batches: when G of batch i runs out of its own stream "
                "it keeps drawing from batch i+1, i+2, ... (budget N + the rest of the batch region), "
                "so one example in batch j can move every h_i with i <= j", shared_stream=True,
                design=shared_stream_design),
    "benign-ln2": MRow(HIST_TABLE["benign-ln2"].says, hist="benign-ln2"),
    "benign-no-plus1": MRow(HIST_TABLE["benign-no-plus1"].says, hist="benign-no-plus1"),
}
M_VARIANTS = describe(M_TABLE)
MAX_EXACT_ITEMS = 14
LAW_CACHE = 65_536   # batch laws kept per learner: ~0.7 KB each; 254 datasets of blm-t1's 258 batches
# Theorem 1's learner: the paper split makes r = 2 overlapping batches realize exactly the claim
# (r eps / 2 = eps, spec 6.6 B6: "paper-split M ... flagged for r >= 3"), so B6 is audited at r = 3.
_MASKED = ("; not detectable at any Theorem 1 instance: the wiring picks k with k eta / 2 >= tau + "
           "lambda(k), so the pruning threshold 3 eta k / 4 >= 1.5 (tau + lambda) > tau (96.75 vs "
           "28.6 counts by default; 47.25 vs 14.8 at split = 'parallel') for every eta_emp, eps, "
           "delta, split and mode; pruning decides the release and the outputs equal the correct "
           "learner's, draw for draw")
_PARALLEL = ("; blm-t1 audits it at split = 'parallel' (spec 6.6: flagged at parallel-split M; under "
             "the paper split it realizes at most eps = the claim, flagged there only --against certified)")
_T1_SAYS = {
    "b2": M_VARIANTS["b2"] + _MASKED, "b3": M_VARIANTS["b3"] + _MASKED,
    "b4": M_VARIANTS["b4"] + _MASKED,
    "b5": M_VARIANTS["b5"] + _PARALLEL, "b10": M_VARIANTS["b10"] + _PARALLEL,
    "b15": M_VARIANTS["b15"] + _PARALLEL,
    "b13": M_VARIANTS["b13"] + "; not detectable at any Theorem 1 instance: pruning at "
           "3 eta k / 4 >= 1.5 (tau + lambda) counts leaves the argmax of noisy counts whose "
           "full vector is eps_H-DP (eps_H <= eps), up to a new-item term "
           "0.5 exp(-(3 eta k / 4 - 1) eps_H / 2) ~ 1e-11",
    "b8": M_VARIANTS["b8"].split(" (blm-m")[0] + "; blm-t1 audits it at grid = 16, eta_emp = "
          "0.2 on the sorted_chain design (pruning at 3 eta k / 4 > tau removes the new-item "
          "route, so the leak must be one item's count moving by many: 15 chain batches drop "
          "h0 at once, exact ln ratio 2.6; at eta_emp = 0.5 the k = 258 batches, half of "
          "whose G runs FAIL, cannot hold h0 and a second item near the threshold, and at "
          "4 points the chain has only 3 batches)",
    "b18": M_VARIANTS["b18"].split(" (blm-m")[0],
    "b6": M_VARIANTS["b6"] + "; blm-t1 audits it at overlap = 3 (under the paper split "
          "r = 2 realizes exactly the claim, r eps / 2 = eps)"}
# Theorem 1's learner: the rows of M, saying how Theorem 1's wiring changes what they show
T1_TABLE = {k: replace(r, says=_T1_SAYS.get(k, r.says)) for k, r in M_TABLE.items()}
T1_VARIANTS = describe(T1_TABLE)


class PrivateLearnerM:
    """M of Theorem 17 with base learner G (Theorem 10) over a finite class.

    Parameters
    ----------
    H : HypothesisClass
    epsilon, delta : float
        The claim.
    split : {"parallel", "paper"}
        ``eps_H = eps_G = eps`` or ``eps/2``.
    k : int
        Number of batches.
    gp : GParams
        G's auxiliary size ``n``, budget ``N`` (batch size ``m = N + n``) and pick rule.
    n_prime : int
        Size of ``S'``.
    eta : float
        Public global-stability parameter (pruning keeps ``a_u >= 3 eta / 4``).
    tie : {0, 1}
        SOA's tie label.
    variant : str
        See `M_VARIANTS`.
    overlap : int
        B6 only: the number ``r`` of batches that read each block (batch ``i`` reads block
        ``i // r``); ignored by every other variant.
    """

    chunk_runs = 50_000

    def __init__(self, H: HypothesisClass, *, epsilon: float, delta: float, split: str, k: int,
                 gp: GParams, n_prime: int, eta: float, tie: int = 1, variant: str = "correct",
                 name: str = "blm-m", overlap: int = 2) -> None:
        self.row: MRow = row_of(T1_TABLE if name == "blm-t1" else M_TABLE, variant, name)
        if split not in ("parallel", "paper"):
            raise PrivauditError(f"{name}: split must be 'parallel' or 'paper', got {split!r}")
        for what, v in (("k", k), ("n_prime", n_prime), ("overlap", overlap)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise PrivauditError(f"{name}: {what} must be a positive integer, got {v!r}")
        self.H, self.name, self.variant, self.split = H, name, variant, split
        self.epsilon = check_positive("epsilon", epsilon)
        self.delta = check_positive("delta", delta, upper=0.5)
        self.eta = check_positive("eta", eta, upper=1.0)
        self.k, self.n_prime, self.gp = int(k), int(n_prime), gp
        self.overlap = int(overlap)
        # chunk hint: each chunk holds (runs, k) draws; keep it near 50,000 x 260 (the runner's
        # chunking fixes the counts, so this only changes which seeds a large-k audit uses)
        self.chunk_runs = min(50_000, max(1_000, 13_000_000 // self.k))
        self.soa = soa_for(H, tie)
        self.G = GlobalStableLearner(self.soa, gp)
        self._shared: dict[int, GlobalStableLearner] = {}
        self.d = self.G.d
        self.eps_H = self.eps_G = self.epsilon / (2.0 if split == "paper" else 1.0)
        self.tau = hist_tau(self.eps_H, self.delta, self._hist_variant)
        self.claim = Claim(self.epsilon, self.delta, "replace-one", "model")
        self.certified = (Claim(self.epsilon / 2.0, self.delta, "replace-one", "model")
                          if split == "paper" else None)
        self.pairs: list = []
        # B8's design changes batches all over the domain: query every point (<= 62, the
        # auditor's joint-event width) so that its new two-point outputs are told apart
        self.queries = H.domain[: min(H.N, 62 if self.row.query_all else 8)]
        # G's law per batch content (digest of the stream and T), least recently used dropped
        # first: a search revisits its short list after many other datasets, and with a shared
        # stream (B16) every batch of a dataset is a distinct key, whose law can take seconds
        self._law_cache: OrderedDict[bytes, dict] = OrderedDict()
        # B16: compute a dataset's batch laws together (False: each alone, the reference that
        # benchmarks/bench_blm_laws.py times them against)
        self.share_suffixes = True

    # -- layout -------------------------------------------------------------------------------
    @property
    def m(self) -> int:
        return self.gp.m

    @property
    def batches(self) -> tuple[int, int]:
        """Theorem 17's positional partition as the paper states it: k batches of m records,
        then S' (`audit.interfaces.declared_batches`: the search builds batch-structured
        datasets from it). Variants that partition otherwise (b6, b7, b8, b15) still declare the
        paper's layout -- that is their bug."""
        return (self.k, self.m)

    @property
    def n_total(self) -> int:
        return self.k * self.m + self.n_prime

    @property
    def prune_count(self) -> float:
        """The pruning threshold in count units: ``a_u >= 3 eta / 4`` <=> ``chat_u >= 3 eta k / 4``."""
        return 0.75 * self.eta * self.k

    @property
    def _hist_variant(self) -> str:
        return self.row.hist

    @property
    def _gl_variant(self) -> str:
        return self.row.gl

    def layout(self, idx: np.ndarray, y: np.ndarray) -> tuple[list, tuple[np.ndarray, np.ndarray]]:
        """The k batches and S' as (domain indices, labels), per the variant's partition."""
        k, m, n2 = self.k, self.m, self.n_prime
        bx, by = idx[: k * m], y[: k * m]
        if self.row.sort_batches:
            order = np.lexsort((by, bx))
            bx, by = bx[order], by[order]
        starts = self.row.starts(k, m, self.overlap)
        batches = [(bx[s:s + m], by[s:s + m]) for s in starts]
        s2 = (k * m - n2, k * m) if self.row.sprime_in_batches else (k * m, k * m + n2)
        return batches, (idx[s2[0]:s2[1]], y[s2[0]:s2[1]])

    def _shared_G(self, batches_ahead: int) -> GlobalStableLearner:
        """B16's G whose budget runs on through ``batches_ahead`` further batches."""
        G = self._shared.get(batches_ahead)
        if G is None:
            gp = self.gp
            G = self._shared[batches_ahead] = GlobalStableLearner(
                self.soa, GParams(gp.n, gp.N + batches_ahead * gp.m, gp.pick))
        return G

    def _check(self, data: Any) -> tuple[Dataset, np.ndarray]:
        data = as_dataset(data)
        if data.n != self.n_total:
            raise PrivauditError(f"{self.name}: needs exactly k*m + n' = {self.k}*{self.m} + {self.n_prime} "
                                 f"= {self.n_total} examples, got {data.n}")
        return data, self.H.index(data.X)

    def laws(self, data: Any) -> tuple[list[bytes], np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """G's exact law on every batch: (items, P (k, U), S'); items are truth-table bytes or FAIL."""
        data, idx = self._check(data)
        batches, sprime = self.layout(idx, data.y)
        N = self.gp.N
        streams = []
        for i, (xs, ys) in enumerate(batches):
            G = self.G
            if self.row.shared_stream and i + 1 < len(batches):
                # the bug: batch i's stream continues into batches i+1, i+2, ... (T_i stays last)
                rest = batches[i + 1:]
                xs = np.concatenate([xs[:N]] + [b[0] for b in rest] + [xs[N:]])
                ys = np.concatenate([ys[:N]] + [b[1] for b in rest] + [ys[N:]])
                G = self._shared_G(len(rest))
            key = hashlib.blake2b(xs.tobytes() + ys.tobytes(), digest_size=20).digest()
            streams.append((key, G, xs, ys))
        laws = [self._law_cache.get(key) for key, *_ in streams]
        if any(law is None for law in laws):
            if self.row.shared_stream and self.share_suffixes:
                # batch i's stream ends with batch i+1's from N on: from the last batch back, each
                # law reuses the next one's (`SharedSuffix`); every batch is recomputed, cached or
                # not, so what a law costs -- and whether it stays under MAX_LAW_WORK -- depends
                # on the dataset alone, not on what the cache held
                suffix = SharedSuffix()
                laws = [None] * len(streams)
                for i in reversed(range(len(streams))):
                    _, G, xs, ys = streams[i]
                    laws[i] = G.law(xs, ys, shared=suffix)
            else:
                done: dict[bytes, dict] = {}     # a dataset's batches often repeat
                for i, (key, G, xs, ys) in enumerate(streams):
                    if laws[i] is None:
                        if key not in done:
                            done[key] = G.law(xs, ys)
                        laws[i] = done[key]
        for (key, *_), law in zip(streams, laws):
            self._law_cache[key] = law
            self._law_cache.move_to_end(key)
        while len(self._law_cache) > LAW_CACHE:
            self._law_cache.popitem(last=False)
        items = sorted({h for law in laws for h in law})
        pos = {h: j for j, h in enumerate(items)}
        P = np.zeros((self.k, len(items)))
        for i, law in enumerate(laws):
            for h, p in law.items():
                P[i, pos[h]] += p
        return items, P, sprime

    def _tables(self, items: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        fail = np.array([h == FAIL for h in items])
        TT = np.array([np.zeros(self.H.N, np.int8) if h == FAIL else np.frombuffer(h, np.int8)
                       for h in items]).reshape(len(items), self.H.N)
        return TT, fail

    def _errors(self, TT: np.ndarray, sprime: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        sx, sy = sprime
        c0 = np.bincount(sx[sy == 0], minlength=self.H.N).astype(np.float64)
        c1 = np.bincount(sx[sy == 1], minlength=self.H.N).astype(np.float64)
        return TT.astype(np.float64) @ (c0 - c1) + c1.sum()

    # -- the Learner contract ----------------------------------------------------------------------
    def predict(self, data: Any, queries: Any, runs: int, rng: np.random.Generator) -> np.ndarray:
        data = as_dataset(data)
        runs = check_runs(runs)
        qi = self.H.index(as_queries(queries, data.d))
        if self.row.data_seeded:         # the bug: one data-seeded run, replayed `runs` times
            one = self._predict(data, qi, 1, np.random.default_rng(data_seed(data)))
            return np.repeat(one, runs, axis=0)
        return self._predict(data, qi, runs, rng)

    def _predict(self, data: Dataset, qi: np.ndarray, runs: int, rng: np.random.Generator) -> np.ndarray:
        items, P, sprime = self.laws(data)
        U = len(items)
        TT, fail = self._tables(items)
        err = self._errors(TT, sprime)
        # step 1: every run's h_1..h_k, drawn from G's exact laws (fresh coins per run and batch)
        det = P.max(axis=1) >= 1.0 - 1e-12
        counts = np.zeros((runs, U), dtype=np.int64)
        counts += np.bincount(np.argmax(P[det], axis=1), minlength=U)[None, :]
        first = np.full(runs, int(np.argmax(P[0])), dtype=np.int64)
        rand = np.flatnonzero(~det)
        if rand.size:
            cdf = np.cumsum(P[rand], axis=1)
            u = rng.random((runs, rand.size))
            # inverse-CDF draw per batch (= the number of cdf entries <= u), one call per batch
            h = np.empty((runs, rand.size), dtype=np.int64)
            for j in range(rand.size):
                h[:, j] = np.searchsorted(cdf[j], u[:, j], side="right")
            np.minimum(h, U - 1, out=h)
            flat = (np.arange(runs)[:, None] * U + h).ravel()
            counts += np.bincount(flat, minlength=runs * U).reshape(runs, U)
            if not det[0]:
                first = h[:, 0]
        # step 2: Hist; step 3: pruning on the noisy estimates (FAIL excluded after Hist)
        if self.row.skip_hist:
            keep = (counts > 0) & ~fail[None, :]
        else:
            released, chat = hist_release(counts, self.eps_H, self.delta, self._hist_variant, rng)
            est = counts if self.row.prune_true_counts else chat
            keep = released & (est >= self.prune_count) & ~fail[None, :]
        # step 4: GenericLearner on S' (h_default = all zeros when L' is empty)
        out = np.zeros((runs, qi.size), dtype=np.int8)
        some = keep.any(axis=1)
        if some.any():
            pick = gl_pick(err, keep[some], self.eps_G, self._gl_variant, rng)
            out[some] = TT[pick][:, qi]
        if self.row.fallback_first:
            none = ~some & ~fail[first]
            out[none] = TT[first[none]][:, qi]
        return out

    # -- exact oracle -------------------------------------------------------------------------------
    def output_law(self, data: Any) -> dict:
        """Exact law of M's output ``{truth-table bytes: prob}`` when G is deterministic on every
        batch (gadget designs) and at most `MAX_EXACT_ITEMS` distinct outputs occur."""
        if not self.row.exact:
            raise PrivauditError(f"{self.name} ({self.variant}) has no exact oracle")
        items, P, sprime = self.laws(data)
        if not np.all(P.max(axis=1) >= 1.0 - 1e-12):
            raise PrivauditError(f"{self.name}: exact oracle needs G deterministic on every batch")
        TT, fail = self._tables(items)
        err = self._errors(TT, sprime)
        counts = np.bincount(np.argmax(P, axis=1), minlength=len(items)).astype(np.float64)
        live = np.flatnonzero((counts > 0) & ~fail)
        if live.size > MAX_EXACT_ITEMS:
            raise PrivauditError(f"{self.name}: exact oracle needs at most {MAX_EXACT_ITEMS} outputs")
        c = counts[live]
        if self.row.skip_hist:
            r = np.ones(live.size)
        elif self.row.prune_true_counts:
            r = release_probabilities(c, self.eps_H, self.delta, "correct") * (c >= self.prune_count)
        else:
            r = release_probabilities(c, self.eps_H, self.delta, self._hist_variant, self.prune_count)
        default = np.zeros(self.H.N, np.int8).tobytes()
        first = int(np.argmax(P[0]))
        law: dict = {}
        for bits in itertools.product((False, True), repeat=live.size):
            b = np.array(bits, dtype=bool)
            p = float(np.prod(np.where(b, r, 1.0 - r)))
            if p == 0.0:
                continue
            if not b.any():
                h = TT[first].tobytes() if self.row.fallback_first and not fail[first] else default
                law[h] = law.get(h, 0.0) + p
                continue
            sel = live[b]
            for j, w in zip(sel, gl_probabilities(err[sel], self.eps_G, self._gl_variant)):
                if w > 0:
                    h = TT[j].tobytes()
                    law[h] = law.get(h, 0.0) + p * float(w)
        return law

    def exact(self, data: Any, queries: Any) -> np.ndarray:
        """Exact ``Pr[label = 1]`` at each query (see `output_law` for when it exists)."""
        data = as_dataset(data)
        qi = self.H.index(as_queries(queries, data.d))
        out = np.zeros(qi.size)
        for h, p in self.output_law(data).items():
            out += p * np.frombuffer(h, np.int8)[qi]
        return out

    def exact_law(self, data: Any, queries: Any) -> dict:
        """Exact joint law of the labels at the queries, ``{int8 label bytes: prob}`` (the
        output law `output_law` restricted to the queries): a crossing's three released
        outputs differ in their whole truth tables more than at any one query."""
        data = as_dataset(data)
        qi = self.H.index(as_queries(queries, data.d))
        law: dict = {}
        for h, p in self.output_law(data).items():
            key = np.frombuffer(h, np.int8)[qi].tobytes()
            law[key] = law.get(key, 0.0) + p
        return law

    # -- designs ---------------------------------------------------------------------------------
    def default_pairs(self) -> list:
        """Spec 6.4's end-to-end designs for these parameters (those that fit): crossing
        two-bucket, singleton, new item among low counts, GL gap inside M."""
        if self.gp.n < self.H.N or not designs.gadget_budget_ok(self.d, self.gp):
            return []
        L = designs.Layout(self.H.domain, self.gp, self.k, self.n_prime)
        tau_eff = max(hist_tau(self.eps_H, self.delta), self.prune_count)
        b = 2.0 / self.eps_H
        makers = [lambda: designs.crossing_two_bucket(L, tau_eff),
                  lambda: designs.singleton(L),
                  lambda: designs.new_item(L, tau_eff, 3.0 * b),
                  lambda: designs.gl_gap(L, max(1, round(3.0 / self.eps_G)))]
        # planted bugs whose leak only a design of their own shows (tests/algorithms/bun_livni_moran/test_blm_private.py)
        if self.row.design is not None:
            makers.append(lambda: self.row.design(self, L, tau_eff, b))
        pairs = []
        for make in makers:
            try:
                pairs.append(make())
            except PrivauditError:
                continue
        return pairs

    def __repr__(self) -> str:
        return (f"<{self.name} variant={self.variant} split={self.split} k={self.k} m={self.m} "
                f"n'={self.n_prime} {self.claim.describe()}>")


def practical_gparams(H: HypothesisClass, d: int, alpha_G: float, budget_factor: int,
                      pick: str = "first") -> GParams:
    """Practical G parameters (spec 5, R3/R4; NOT paper-faithful): ``n = max(|X|, ceil(d/alpha_G))``
    (so gadget batches fit) and budget ``N = budget_factor * n`` instead of ``8^(d+1) n``."""
    n = max(H.N, math.ceil(max(d, 1) / alpha_G))
    return GParams(n, int(budget_factor) * n, pick)


@register("blm-m", kind="learner", paper=PAPER, section="Theorem 17 (global stability -> privacy)",
          summary="M: G on k disjoint batches -> stable histogram -> prune -> GenericLearner on a "
                  "fresh S'; (eps, delta)-DP (parallel split; paper split certified eps/2)",
          variants=M_VARIANTS, instances={"b8": {"grid": 16}, "b18": {"eta": 0.52}})
def blm_m(epsilon: float = 1.0, delta: float = 1e-3, cls: str = "point", grid: int = 4,
          split: str = "parallel", k: int = 64, n_prime: int = 20, eta: float = 0.02,
          alpha_G: float = 0.5, budget_factor: int = 8, pick: str = "first", tie: int = 1,
          variant: str = "correct") -> PrivateLearnerM:
    """M (BLM-9) with G at practical budget ``N = budget_factor * n`` (privacy does not depend on
    it, spec 5); the default pairs are spec 6.4's gadget designs for these parameters."""
    H = make_class(cls, grid)
    soa = soa_for(H, tie)
    gp = practical_gparams(H, soa.ldim(), check_positive("alpha_G", alpha_G, upper=1.0), budget_factor, pick)
    M = PrivateLearnerM(H, epsilon=epsilon, delta=delta, split=split, k=k, gp=gp, n_prime=n_prime,
                        eta=eta, tie=tie, variant=variant)
    M.pairs = M.default_pairs()
    return M


# ---------------------------------------------------------------------------------------------
def _k_fixed_point(tau: float, eps_H: float, beta_H: float, rate: float, floor_k: float = 1.0) -> int:
    """Smallest integer k with ``k * rate >= tau + (2/eps_H) ln(k / beta_H)`` and ``k >= floor_k``."""
    k = max(1, math.ceil(floor_k))
    while k * rate < tau + (2.0 / eps_H) * math.log(k / beta_H):
        # jump to the current fixed-point estimate (monotone: never overshoots the smallest k)
        k = max(k + 1, math.ceil((tau + (2.0 / eps_H) * math.log(k / beta_H)) / rate))
    return k


def generic_learner_size(C: float, alpha: float, beta: float, eps_G: float) -> int:
    """Lemma 16 with explicit constants (spec 3.8): the S' size for loss <= 2 alpha w.p. 1 - beta."""
    return math.ceil(max(36 * math.log(4 * C / beta), 27 * math.log(4 / beta),
                         6 * math.log(2 * C / beta) / eps_G) / alpha)


def theorem1_parameters(d: int, epsilon: float, delta: float, alpha: float, beta: float, *,
                        mode: str = "practical", N_points: int = 1, eta_emp: float = 0.5,
                        budget_factor: int = 8, split: str = "paper") -> dict:
    """Theorem 1's wiring (spec 3.10) with explicit constants.

    ``split="paper"`` (Theorem 1 as published): ``eps_H = eps_G = eps/2``. ``split="parallel"``
    (spec 3.9's audit wiring): ``eps_H = eps_G = eps``; tau, lambda(k), k and n' follow the same
    formulas with that eps_H / eps_G.

    ``mode="paper"``: ``n_aux = ceil(2d/alpha)``, ``N = 8^(d+1) n_aux``, ``eta = 1/((d+1) 2^(d+1))``,
    ``eps_H = eps_G = eps/2``, ``k`` the smallest integer with ``k >= (tau + lambda(k)) / (eta/8)``
    and ``k >= 128 ln(3/beta) / eta``, ``n'`` from Lemma 16 with ``|C| = 2/eta`` (the paper's bound
    on the pruned list), ``alpha/2``, ``beta/3``. At d = 1, eps = 1, delta = 1e-6, alpha = beta =
    0.1 this gives n_total = 8.75e6 -- the 16^d factors make it impractical beyond d = 1.

    ``mode="practical"`` (documented as NOT paper-faithful; spec 5, R3): ``n_aux = max(|X|,
    ceil(2d/alpha))``, ``N = budget_factor * n_aux``, ``eta = eta_emp`` (a PUBLIC pilot value,
    never tuned on the private input), ``k`` with ``k eta / 2 >= tau + lambda(k)``; same ``n'``
    formula with ``|C| = 2/eta``. Privacy is unaffected (Theorem 17 holds for every parameter).
    """
    if mode not in ("paper", "practical"):
        raise PrivauditError(f"mode must be 'paper' or 'practical', got {mode!r}")
    if split not in ("paper", "parallel"):
        raise PrivauditError(f"split must be 'paper' or 'parallel', got {split!r}")
    eps_H = eps_G = epsilon / (2.0 if split == "paper" else 1.0)
    tau = 1.0 + (2.0 / eps_H) * math.log(1.0 / delta)
    beta_H = beta / 3.0
    if mode == "paper":
        n_aux = math.ceil(2 * d / alpha)
        N = 8 ** (d + 1) * n_aux
        eta = 1.0 / ((d + 1) * 2 ** (d + 1))
        k = _k_fixed_point(tau, eps_H, beta_H, eta / 8.0, 128 * math.log(3.0 / beta) / eta)
    else:
        n_aux = max(int(N_points), math.ceil(2 * max(d, 1) / alpha))
        N = int(budget_factor) * n_aux
        eta = float(eta_emp)
        k = _k_fixed_point(tau, eps_H, beta_H, eta / 2.0)
    n_prime = generic_learner_size(2.0 / eta, alpha / 2.0, beta / 3.0, eps_G)
    m = N + n_aux
    return {"mode": mode, "split": split, "d": d, "n_aux": n_aux, "N": N, "m": m, "eta": eta, "eps_H": eps_H,
            "eps_G": eps_G, "tau": tau, "k": k, "n_prime": n_prime, "n_total": k * m + n_prime}


@register("blm-t1", kind="learner", paper=PAPER, section="Theorem 1 (private learner for Littlestone classes)",
          summary="Theorem 1: M o G with the paper's parameter wiring (mode='paper', huge) or a "
                  "documented practical mode; (eps, delta)-DP, certified (eps/2, delta)",
          variants=T1_VARIANTS, instances={"b6": {"overlap": 3}, "b5": {"split": "parallel"},
                                           "b10": {"split": "parallel"}, "b15": {"split": "parallel"},
                                           "b8": {"grid": 16, "eta_emp": 0.2}},
          # Theorem 1's wiring makes the pruning threshold 3 eta k / 4 >= 1.5 (tau + lambda) > tau
          # at every instance: B2-B4 release exactly the correct learner's output and B13 stays
          # eps_H-DP up to ~1e-11 (tests/algorithms/bun_livni_moran/test_blm_default_pairs.py); they are flagged on blm-m
          expect={"b2": "pass", "b3": "pass", "b4": "pass", "b13": "pass"})
def blm_t1(epsilon: float = 1.0, delta: float = 1e-3, alpha: float = 0.2, beta: float = 0.1,
           cls: str = "point", grid: int = 4, mode: str = "practical", eta_emp: float = 0.5,
           budget_factor: int = 8, split: str = "paper", overlap: int = 2,
           variant: str = "correct") -> PrivateLearnerM:
    """BLM-10: Theorem 1's learner, parameters from `theorem1_parameters`.

    ``split="paper"`` (default) is Theorem 1 as published: ``eps_H = eps_G = eps/2``, claim
    (eps, delta), certified (eps/2, delta) (spec 3.9: batches and S' are disjoint).
    ``split="parallel"`` is spec 3.9's audit wiring ``eps_H = eps_G = eps``: still honestly
    (eps, delta)-DP, and its audits are tight at eps, so factor-2 bugs (B5, B10, B15) show
    against the nominal claim (their audit instance). ``overlap`` is planted bug B6's ``r``
    (ignored otherwise); its audit instance is ``r = 3``."""
    H = make_class(cls, grid)
    soa = soa_for(H)
    d = soa.ldim()
    if d < 1:
        raise PrivauditError(f"Theorem 1 needs Ldim(H) >= 1; class {cls}/{grid} has Ldim {d}")
    epsilon = check_positive("epsilon", epsilon, upper=1.0)
    delta = check_positive("delta", delta, upper=0.5)
    alpha = check_positive("alpha", alpha, upper=0.5)
    beta = check_positive("beta", beta, upper=0.5)
    P = theorem1_parameters(d, epsilon, delta, alpha, beta, mode=mode, N_points=H.N,
                            eta_emp=check_positive("eta_emp", eta_emp, upper=1.0),
                            budget_factor=budget_factor, split=split)
    M = PrivateLearnerM(H, epsilon=epsilon, delta=delta, split=split, k=P["k"],
                        gp=GParams(P["n_aux"], P["N"]), n_prime=P["n_prime"], eta=P["eta"],
                        variant=variant, name="blm-t1", overlap=overlap)
    M.parameters = P
    M.pairs = M.default_pairs() if P["n_total"] <= 2_000_000 else []
    return M


__all__ = ["PrivateLearnerM", "M_VARIANTS", "M_TABLE", "T1_TABLE", "MRow", "blm_m", "blm_t1", "theorem1_parameters",
           "generic_learner_size", "practical_gparams"]
