"""The auditor: explore, select, confirm (DESIGN.md sections 3–4).

1. *Pilot* (a few thousand runs per input): what kind of output the black box gives, and for
   continuous outputs the grids and statistics to histogram.
2. *Explore* (`explore_runs` per input): counts per output code / histogram bin, from which the
   candidate events of every pair, query and direction are scored by the bound a confirmation is
   expected to certify.
   *Replicate* (audits whose chosen events are thresholds or learners' labels, unless a
   sequential exploration stopped early on a choice it validated on fresh runs;
   `audit.replicate`): the chosen events and the next best of the same pair are counted again on
   ``explore_runs`` fresh runs per input, and a chosen event whose leak does not show again is
   replaced by the best of them.
3. *Confirm* (`confirm_runs` per input, fresh seeds): only the selected candidates are counted
   again; the error budget ``1 - confidence`` is split (Bonferroni) over both one-sided bounds of
   every confirmed test. Selection is never paid for with confirmation samples.

Seeds: phase ``k`` (0 explore, 1 confirm, 2 pilot, 3 search, 8 replicate) of pair ``p``, input
side ``s`` draws from ``SeedSequence(seed, spawn_key=(k, p, s, chunk))``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from . import stats
from .budget import DEFAULT_CONFIRM_RUNS, DEFAULT_EXPLORE_RUNS
from .errors import PrivauditError
from .events import (
    Candidate,
    discrete_candidates,
    label_candidates,
    objective,
    threshold_candidates,
)
from .extensions import find_search
from .group import check_group, check_within, copies, group_claim, per_individual
from . import crossfit, learned, replicate
from .interfaces import (
    certified_of,
    declared_input_distance,
    claim_of,
    exact_values_of,
    is_learner,
    is_mechanism,
    is_reproducible,
    name_of,
    own_data,
    own_pairs,
    own_queries,
    params_of,
)
from .determinism import nondeterminism
from .neighbours import (
    NOT_CHECKED_NOTE,
    check_input_neighbours,
    check_neighbours,
    parse_input_distance,
)
from .mixed import mixed_layout
from .provenance import code_digest, git_commit, versions
from .reducers import CodeCounter, EventCounter, HistogramCounter, lattice_exponent
from .result import AuditResult, BoundTest, Witness
from .sequential import STOP_REASONS, confirm_sequential
from .staged import EXPLORE_STAGE, EXPLORE_VALIDATE, choose, explore_staged
from .sequential import max_certifiable_epsilon as sequential_ceiling
from .runners.base import Job, Runner, call_blackbox, chunk_rng
from .runners.local import LocalRunner
from .types import Claim, Dataset, as_dataset, as_queries

PILOT_RUNS = 2_000
MAX_JOINT_QUERIES = 62
EXPLORE, CONFIRM, PILOT, SEARCH = 0, 1, 2, 3


@dataclass(frozen=True, eq=False)
class Pair:
    """Two neighbouring inputs (datasets for a learner) and, for a learner, the query points."""

    a: Any
    b: Any
    queries: np.ndarray | None = None
    label: str = ""
    found_by: str = "given pairs"


@dataclass
class OutputModel:
    """How one pair's outputs are reduced: decided on pilot samples."""

    kind: str                       # "labels" | "discrete" | "continuous" | "mixed"
    encoding: str = "value"
    width: int = 1
    projections: tuple = ()
    edges: tuple = ()
    labels: tuple = ()
    features: tuple = ()
    featurizer: Any = None          # mixed outputs: how "no value" and values become features
    scorers: tuple = ()             # learned scores (audit.learned), fitted on learning samples
    score_edges: tuple = ()
    learning: Any = None            # discrete vectors: the learning sample's code counts

    def explore_reducer(self):
        if self.kind == "labels":
            return CodeCounter(None, "bits")
        if self.kind == "discrete":
            return CodeCounter(None, self.encoding)
        if self.scorers:
            return learned.ScoreHistogramCounter(self.projections, self.edges, self.scorers,
                                                 self.score_edges, self.features)
        return HistogramCounter(self.projections, self.edges, self.features)


# ---------------------------------------------------------------------------------------------
# argument checking
# ---------------------------------------------------------------------------------------------
def _check_budget(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise PrivauditError(f"{name} must be a positive integer, got {v!r}")
    return int(v)


def _check_common(confidence: float, explore_runs: Any, confirm_runs: Any, seed: Any,
                  tests: Any) -> tuple[int, int, int, int]:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or \
            not 0.0 < float(confidence) < 1.0:
        raise PrivauditError(f"confidence must be in (0, 1), got {confidence!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise PrivauditError(f"seed must be a non-negative integer, got {seed!r}")
    return (_check_budget("explore_runs", explore_runs), _check_budget("confirm_runs", confirm_runs),
            int(seed), _check_budget("tests", tests))


def _resolve_claim(obj: Any, claim: Any) -> Claim:
    if claim is None:
        claim = claim_of(obj)
        if claim is None:
            raise PrivauditError(f"{_name(obj)} has no `claim`; pass claim=Claim(epsilon, delta, ...)")
    if isinstance(claim, dict):
        claim = Claim.from_dict(claim)
    if not isinstance(claim, Claim):
        raise PrivauditError(f"claim must be an audit.Claim, got {type(claim).__name__}")
    return claim


def _name(obj: Any) -> str:
    return name_of(obj)


def _jsonable_input(x: Any) -> Any:
    if isinstance(x, Dataset):
        return x.to_dict()
    arr = np.asarray(x)
    return arr.tolist() if arr.dtype.kind in "biuf" else repr(x)


# ---------------------------------------------------------------------------------------------
# pilot
# ---------------------------------------------------------------------------------------------
def _edges(values: np.ndarray) -> tuple[float, ...]:
    """A grid fine in the bulk and reaching far into both tails (thresholds in the tails are
    where pure-DP losses show)."""
    lo, hi = float(values.min()), float(values.max())
    probs = np.concatenate([np.linspace(0.0, 1.0, 201)])
    inner = np.quantile(values, probs)
    span = float(np.quantile(values, 0.99) - np.quantile(values, 0.01)) or (abs(hi) + 1.0) * 1e-3
    step = span / 50.0
    tails = step * (2.0 ** np.arange(0, 14))
    e = np.unique(np.concatenate([lo - tails, inner, hi + tails]))
    return tuple(float(v) for v in e)


def pilot(blackbox: Any, pair: Pair, key: tuple[int, ...], seed: int, runs: int) -> OutputModel:
    """Run both inputs of `pair` a few thousand times to learn the output type and its range.

    `key` identifies the pair (its pilot draws from spawn keys ``(PILOT,) + key + (side,)``)."""
    index = key[-1]
    outs = [call_blackbox(blackbox, inp, pair.queries, runs, chunk_rng(seed, (PILOT,) + tuple(key) + (s,), 0))
            for s, inp in enumerate((pair.a, pair.b))]
    if is_learner(blackbox):
        width = outs[0].shape[1]
        if width > MAX_JOINT_QUERIES:
            raise PrivauditError(f"at most {MAX_JOINT_QUERIES} query points per pair, got {width}")
        return OutputModel("labels", "bits", width)
    shapes = {o.shape[1:] for o in outs}
    if len(shapes) != 1:
        raise PrivauditError(f"{_name(blackbox)} returns outputs of different shapes on the two "
                             f"inputs of pair {index}: {sorted(shapes)}")
    width = int(np.prod(outs[0].shape[1:])) if outs[0].ndim == 2 else 1
    if all(o.dtype.kind in "biu" for o in outs):
        return OutputModel("discrete", "value" if outs[0].ndim == 1 else "rows", width)
    layout = mixed_layout(outs)
    if layout is not None:  # a value or "no value" (NaN, or an atom such as -100) per coordinate
        return OutputModel("mixed", "value", width, featurizer=layout)
    flat = [o.reshape(o.shape[0], -1).astype(np.float64) for o in outs]
    projections = [tuple(float(v) for v in row) for row in np.eye(width)]
    labels = [("output" if width == 1 else f"output[{j}]") for j in range(width)]
    if width > 1:
        projections.append(tuple([1.0] * width))
        labels.append("sum of outputs")
        # Fisher's linear discriminant, learned on pilot samples only
        ma, mb = flat[0].mean(0), flat[1].mean(0)
        cov = 0.5 * (np.cov(flat[0].T) + np.cov(flat[1].T)) + 1e-9 * np.eye(width)
        w = np.linalg.solve(cov, ma - mb)
        if np.all(np.isfinite(w)) and np.linalg.norm(w) > 0:
            projections.append(tuple(float(v) for v in w / np.linalg.norm(w)))
            labels.append("discriminant statistic")
    pooled = np.vstack(flat)
    edges = [_edges(pooled @ np.asarray(p)) for p in projections]
    features = ["linear"] * len(projections)
    if exact_values_of(blackbox):
        # the exact-value grid of every output coordinate (support mismatch of float outputs)
        for j in range(width):
            k = lattice_exponent(pooled[:, j])
            edges.append(tuple(float(v) + 0.5 for v in range(int(k.min()) - 8, int(k.max()) + 9)))
            projections.append(tuple(float(v) for v in np.eye(width)[j]))
            features.append("lattice")
            labels.append(("output" if width == 1 else f"output[{j}]") + " exact-value grid 2^-k, k")
    return OutputModel("continuous", "value", width, tuple(projections), tuple(edges),
                       tuple(labels), tuple(features) if exact_values_of(blackbox) else ())


# ---------------------------------------------------------------------------------------------
# explore and confirm
# ---------------------------------------------------------------------------------------------
def explore(blackbox: Any, pairs: Sequence[Pair], *, claim: Claim, explore_runs: int,
            confirm_runs: int, confidence: float, tests: int, seed: int, runner: Runner,
            journal: Any = None, progress: Any = None, key_prefix: tuple[int, ...] = (EXPLORE,),
            models: list[OutputModel] | None = None) -> list[Candidate]:
    """Score every candidate event of every pair on fresh exploration samples.

    Job keys are ``key_prefix + (pair index, side)``: a search that explores in rounds passes a
    distinct prefix per round (e.g. ``(SEARCH, round)``) so that no two rounds share samples.

    Returns all candidates (each pair, query, event and direction), unsorted.
    """
    models = _explore_models(blackbox, pairs, key_prefix, seed, explore_runs, models, runner,
                             journal)
    jobs = [Job(blackbox, inp, explore_runs, m.explore_reducer(), tuple(key_prefix) + (i, s), p.queries)
            for i, (p, m) in enumerate(zip(pairs, models)) for s, inp in enumerate((p.a, p.b))]
    reds = runner.run(jobs, seed, journal=journal, progress=progress)
    alpha = stats.per_bound_alpha(confidence, tests)
    cands: list[Candidate] = []
    for i, m in enumerate(models):
        cands += _pair_candidates(m, reds[2 * i], reds[2 * i + 1], i, claim, confirm_runs, alpha)
    return cands


def _explore_models(blackbox: Any, pairs: Sequence[Pair], key_prefix: tuple[int, ...], seed: int,
                    explore_runs: int, models: list[OutputModel] | None, runner: Runner | None = None,
                    journal: Any = None) -> list[OutputModel]:
    """Each pair's output model (pilot), with learned scores attached to a mechanism's (their
    learning samples of discrete vectors run on `runner`, journaled)."""
    if models is None:
        models = [pilot(blackbox, p, tuple(key_prefix) + (i,), seed, min(PILOT_RUNS, explore_runs))
                  for i, p in enumerate(pairs)]
    for i, (p, m) in enumerate(zip(pairs, models)):
        if not m.scorers and not is_learner(blackbox):
            learned.attach(blackbox, p, m, tuple(key_prefix) + (i,), seed, explore_runs, runner,
                           journal)
    return models


def _pair_candidates(m: OutputModel, ra: Any, rb: Any, i: int, claim: Claim, confirm_runs: int,
                     alpha: float) -> list[Candidate]:
    """Every candidate event of pair `i` scored on its exploration reductions `ra`, `rb`."""
    kw = dict(pair_index=i, n_confirm=confirm_runs, alpha=alpha, claim=claim)
    if m.kind == "labels":
        return label_candidates(ra, rb, m.width, **kw)
    if m.kind == "discrete":
        cands = (discrete_candidates(ra, rb, encoding=m.encoding, **kw)
                 + learned.code_score_candidates(ra, rb, m.scorers, **kw))
        if m.learning is not None:  # ranked by counts that did not choose them (audit.crossfit)
            cands = crossfit.rescore(cands, m.learning, n_confirm=confirm_runs, alpha=alpha,
                                     claim=claim)
        return cands
    out: list[Candidate] = []
    if m.projections:
        out += threshold_candidates(ra, rb, m.projections, m.edges, m.labels,
                                    features=m.features, **kw)
    return out + learned.histogram_score_candidates(ra, rb, len(m.projections), m.scorers,
                                                    m.score_edges, **kw)


def explore_in_stages(blackbox: Any, pairs: Sequence[Pair], *, claim: Claim, explore_runs: int,
                      confirm_runs: int, confidence: float, tests: int, seed: int, runner: Runner,
                      journal: Any = None, progress: Any = None) -> tuple[list[Candidate], dict]:
    """Sequential audits' exploration: doubling stages with successive elimination of pairs
    (`audit.staged`). Pilot and learned scores as in `explore`; stage ``s`` of pair ``i`` draws
    from spawn keys ``(EXPLORE_STAGE, s, i, side)``."""
    models = _explore_models(blackbox, pairs, (EXPLORE,), seed, explore_runs, None, runner, journal)
    alpha = stats.per_bound_alpha(confidence, tests)

    def run_stage(stage: int, alive: list[int], runs: int) -> dict:
        jobs = [Job(blackbox, inp, runs, models[i].explore_reducer(), (EXPLORE_STAGE, stage, i, s),
                    pairs[i].queries)
                for i in alive for s, inp in enumerate((pairs[i].a, pairs[i].b))]
        reds = runner.run(jobs, seed, journal=journal, progress=progress)
        return {i: (reds[2 * k], reds[2 * k + 1]) for k, i in enumerate(alive)}

    def validate(stage: int, i: int, event: Any, runs: int) -> tuple[int, int]:
        jobs = [Job(blackbox, inp, runs, EventCounter((event,)), (EXPLORE_VALIDATE, stage, i, s),
                    pairs[i].queries) for s, inp in enumerate((pairs[i].a, pairs[i].b))]
        ra, rb = runner.run(jobs, seed, journal=journal, progress=progress)
        return int(ra.counts[0]), int(rb.counts[0])

    return explore_staged(len(pairs), explore_runs, run_stage,
                          lambda i, ra, rb: _pair_candidates(models[i], ra, rb, i, claim,
                                                             confirm_runs, alpha),
                          claim=claim, n_confirm=confirm_runs, alpha=alpha, validate=validate)


def _event_jobs(blackbox: Any, pairs: Sequence[Pair], cands: Sequence[Candidate], runs: int,
                phase: int) -> tuple[list[int], dict[int, list[int]], list[Job]]:
    """Jobs counting the events of `cands` on `runs` fresh runs of both inputs of every pair they
    concern (spawn keys ``(phase, pair, side)``): the pairs in order, each pair's indices into
    `cands`, and the jobs (two per pair, input a then b)."""
    by_pair: dict[int, list[int]] = {}
    for k, c in enumerate(cands):
        by_pair.setdefault(c.pair_index, []).append(k)
    order = sorted(by_pair)
    jobs = []
    for i in order:
        events = tuple(cands[k].event for k in by_pair[i])
        p = pairs[i]
        jobs += [Job(blackbox, inp, runs, EventCounter(events), (phase, i, s), p.queries)
                 for s, inp in enumerate((p.a, p.b))]
    return order, by_pair, jobs


def replicate_choice(blackbox: Any, pairs: Sequence[Pair], cands: Sequence[Candidate],
                     chosen: Sequence[Candidate], *, claim: Claim, explore_runs: int,
                     confirm_runs: int, confidence: float, tests: int, seed: int, runner: Runner,
                     journal: Any = None, progress: Any = None) -> tuple[list[Candidate], dict | None]:
    """Count the chosen threshold or label events and the next best on fresh runs and replace
    a chosen one whose leak does not show again (`audit.replicate`). Returns the choice to
    confirm and a record of the replication (None when nothing chosen is replicable)."""
    short = replicate.shortlist(cands, chosen)
    if not short:
        return list(chosen), None
    order, by_pair, jobs = _event_jobs(blackbox, pairs, short, explore_runs, replicate.REPLICATE)
    reds = runner.run(jobs, seed, journal=journal, progress=progress)
    counts: list[tuple[int, int]] = [(0, 0)] * len(short)
    for j, i in enumerate(order):
        for e, k in enumerate(by_pair[i]):
            counts[k] = (int(reds[2 * j].counts[e]), int(reds[2 * j + 1].counts[e]))
    alpha = stats.per_bound_alpha(confidence, tests)
    again = replicate.with_replication(short, counts, explore_runs, n_confirm=confirm_runs,
                                       alpha=alpha, claim=claim)
    final, replaced = replicate.reconcile(chosen, again)
    info = {"runs_per_side": explore_runs, "events": len(short), "pairs": len(order),
            "replaced": replaced,
            "shortlist": [c.to_history() for c in again]}
    return final, info


def confirm(blackbox: Any, pairs: Sequence[Pair], chosen: Sequence[Candidate], *, claim: Claim,
            confirm_runs: int, confidence: float, seed: int, runner: Runner, journal: Any = None,
            progress: Any = None) -> list[BoundTest]:
    """Count the chosen events on fresh samples and bound each with Bonferroni over all."""
    order, by_pair, jobs = _event_jobs(blackbox, pairs, chosen, confirm_runs, CONFIRM)
    reds = runner.run(jobs, seed, journal=journal, progress=progress)
    alpha = stats.per_bound_alpha(confidence, len(chosen))
    tests: list[BoundTest] = [None] * len(chosen)  # type: ignore[list-item]
    for j, i in enumerate(order):
        ra, rb = reds[2 * j], reds[2 * j + 1]
        for e, k in enumerate(by_pair[i]):
            c = chosen[k]
            ka, kb = int(ra.counts[e]), int(rb.counts[e])
            (kp, np_), (kq, nq) = ((ka, ra.runs), (kb, rb.runs)) if c.direction == "a>b" else \
                ((kb, rb.runs), (ka, ra.runs))
            p_lo = float(stats.cp_lower(kp, np_, alpha))
            q_hi = float(stats.cp_upper(kq, nq, alpha))
            tests[k] = BoundTest(
                pair_index=i, direction=c.direction, event=c.event.to_dict(),
                event_text=c.event.describe(), k_p=kp, n_p=np_, k_q=kq, n_q=nq, p_lo=p_lo,
                q_hi=q_hi, epsilon_lower=float(stats.epsilon_lower(p_lo, q_hi, claim.delta)),
                delta_lower=float(stats.delta_lower(p_lo, q_hi, claim.epsilon)),
                expected_epsilon=c.expected_epsilon,
                query_indices=None if c.query_indices is None else list(c.query_indices))
    return tests


def _provenance(blackbox: Any) -> dict:
    """Package versions, and the git commit of the audited code when it lives in a checkout."""
    commit = git_commit(blackbox)
    out = {**versions(), "git_commit": commit}
    if commit is None:   # installed code (pip install .): identify it by its sources' hash
        out["code_sha256"] = code_digest(blackbox)
    return out


def run_audit(blackbox: Any, pairs: Sequence[Pair], *, claim: Claim, confidence: float,
              explore_runs: int, confirm_runs: int, seed: int, runner: Runner | None,
              tests: int = 1, journal: Any = None, progress: Any = None,
              search: dict | None = None, certified: Claim | None = None,
              against: str = "claim", params: dict | None = None,
              differing: list | None = None, sequential: bool = False) -> AuditResult:
    """Explore, select and confirm on given pairs; the engine behind `audit`/`audit_learner`."""
    if not pairs:
        raise PrivauditError("nothing to audit: no pairs of inputs")
    runner = runner if runner is not None else LocalRunner()
    # same seed, same outputs? (a small chunk run twice, on a stream of its own; audit.determinism)
    nondet = nondeterminism(blackbox, pairs[0].a, pairs[0].queries, seed) \
        if is_reproducible(blackbox) else None
    t0 = time.perf_counter()
    explored = None
    if sequential:   # doubling stages, eliminating pairs that cannot compete (audit.staged)
        cands, explored = explore_in_stages(
            blackbox, pairs, claim=claim, explore_runs=explore_runs, confirm_runs=confirm_runs,
            confidence=confidence, tests=tests, seed=seed, runner=runner, journal=journal,
            progress=progress)
    else:
        cands = explore(blackbox, pairs, claim=claim, explore_runs=explore_runs,
                        confirm_runs=confirm_runs, confidence=confidence, tests=tests, seed=seed,
                        runner=runner, journal=journal, progress=progress)
    chosen = choose(cands, tests, explored)
    replication = None
    # an event chosen for a chance excess (a threshold in a tail, a rare label) shows no leak
    # again; a sequential audit whose exploration stopped early has validated its choice on
    # fresh runs already
    if not sequential or explored.get("stopped") == "budget":
        chosen, replication = replicate_choice(
            blackbox, pairs, cands, chosen, claim=claim, explore_runs=explore_runs,
            confirm_runs=confirm_runs, confidence=confidence, tests=tests, seed=seed,
            runner=runner, journal=journal, progress=progress)
    t1 = time.perf_counter()
    seq_info = None
    if sequential:  # anytime-valid bounds, stopping as soon as the evidence is enough
        confirmed, seq_info = confirm_sequential(
            blackbox, pairs, chosen, claim=claim, confirm_runs=confirm_runs,
            confidence=confidence, seed=seed, runner=runner, phase=CONFIRM, journal=journal,
            progress=progress)
        seq_info["explore"] = explored
    else:
        confirmed = confirm(blackbox, pairs, chosen, claim=claim, confirm_runs=confirm_runs,
                            confidence=confidence, seed=seed, runner=runner, journal=journal,
                            progress=progress)
    t2 = time.perf_counter()
    m = len(confirmed)
    key = (lambda t: (t.delta_lower, t.epsilon_lower)) if objective(claim) == "delta" else \
        (lambda t: (t.epsilon_lower, t.delta_lower))
    best = max(confirmed, key=key)
    eps_lo = max(t.epsilon_lower for t in confirmed)
    delta_lo = max(t.delta_lower for t in confirmed)
    violation = any(t.p_lo > math.exp(claim.epsilon) * t.q_hi + claim.delta for t in confirmed)
    p = pairs[best.pair_index]
    qidx = best.query_indices
    witness = Witness(
        pair_index=best.pair_index,
        a=_jsonable_input(p.a), b=_jsonable_input(p.b), direction=best.direction,
        event=best.event, event_text=best.event_text,
        queries=None if p.queries is None or qidx is None else np.asarray(p.queries)[qidx].tolist(),
        differing=(differing or {}).get(best.pair_index) if isinstance(differing, dict) else None,
        p_hat=best.k_p / best.n_p, q_hat=best.k_q / best.n_q, found_by=p.found_by)
    ranked = sorted(cands, key=lambda c: c.score, reverse=True)
    search = dict(search or {})
    search.setdefault("history", [])
    search["candidates_scored"] = len(cands)
    search["pairs"] = len(pairs)
    search["top_explored"] = [c.to_history() for c in ranked[:10]]
    if replication is not None:
        search["replication"] = replication
    notes = []
    if not is_reproducible(blackbox):
        notes.append("runs not reproducible: the black box draws from its own entropy and ignores "
                     "the seed, so a rerun gives other counts (the bound is valid all the same)")
    if nondet is not None:
        notes.append(nondet)
    for r in (replication or {}).get("replaced", []):
        notes.append(f"replicated: exploration's choice `{r['chosen']}` ({r['direction']}, pair "
                     f"{r['pair_index']}) showed no comparable leak on {explore_runs:,} fresh runs "
                     f"per input (expected bound {r['replicated_expected']:.4g} on them) and was "
                     f"replaced by `{r['by']}` ({r['by_direction']}, expected "
                     f"{r['by_replicated_expected']:.4g} on them)")
    ceiling = stats.max_certifiable_epsilon(confirm_runs, confidence, m, claim.delta)
    if seq_info is not None:
        ceiling = sequential_ceiling(confirm_runs, confidence, m, claim.delta)
        notes.append(f"sequential: stopped after {seq_info['runs_per_side']:,} of {confirm_runs:,} "
                     f"runs per side: {STOP_REASONS[seq_info['stopped']]}; bounds from "
                     f"{seq_info['validity']}; exploration in stages: {explored['runs_per_side']:,} "
                     f"of {explore_runs:,} runs per side ({explored['stopped']})")
    if not (np.isfinite(ceiling) and ceiling > claim.epsilon):
        notes.append(_powerless_note(ceiling, claim, confirm_runs, confidence, m, seq_info))
    if best.k_q == 0 and best.k_p > 0:
        notes.append("support mismatch: the event never happened on the q side in "
                     f"{best.n_q} runs; epsilon_lower is capped only by the budget")
    return AuditResult(
        algorithm=_name(blackbox), kind="learner" if is_learner(blackbox) else "mechanism",
        claim=claim, epsilon_lower=eps_lo, delta_lower=delta_lo, violation=bool(violation),
        confidence=float(confidence), correction="bonferroni", tests=m,
        alpha_per_bound=stats.per_bound_alpha(confidence, m),
        max_certifiable_epsilon=ceiling, sequential=seq_info,
        witness=witness, confirmed=confirmed, explore_runs=explore_runs, confirm_runs=confirm_runs,
        seed=seed, params=dict(params or params_of(blackbox)),
        certified=certified if certified is not None else certified_of(blackbox),
        against=against, search=search,
        runner={**runner.describe(), **({} if is_reproducible(blackbox) and nondet is None
                                        else {"reproducible": False})},
        timings={"explore_s": round(t1 - t0, 4), "confirm_s": round(t2 - t1, 4),
                 "total_s": round(t2 - t0, 4)},
        versions=_provenance(blackbox), notes=notes)


# ---------------------------------------------------------------------------------------------
# public entry points (Fixed signatures, DESIGN.md section 3)
# ---------------------------------------------------------------------------------------------
def audit(mechanism: Any, pairs: Any = None, *, claim: Any = None, confidence: float = 0.95,
          explore_runs: int = DEFAULT_EXPLORE_RUNS, confirm_runs: int = DEFAULT_CONFIRM_RUNS,
          seed: int = 0, runner: Runner | None = None, tests: int = 1, journal: Any = None,
          progress: Any = None, input_distance: Any = None,
          sequential: bool = False) -> AuditResult:
    """Audit a mechanism (or a learner: dispatched to `audit_learner`) on pairs of inputs.

    Parameters
    ----------
    mechanism : Mechanism
        Any object with ``name``, ``claim`` and ``sample(inp, runs, rng)``.
    pairs : list of (a, b)
        Neighbouring inputs; default: the mechanism's own ``pairs`` attribute.
    claim : Claim, optional
        The promise to test; default ``mechanism.claim``.
    confidence : float
        Every reported bound holds simultaneously with at least this probability.
    explore_runs, confirm_runs : int
        Runs per input in the exploration and confirmation phases.
    seed : int
        Same seed, same result — on one machine or fifty.
    runner : Runner, optional
        `LocalRunner()` (default) or `RayRunner(...)`.
    tests : int
        How many selected (pair, event, direction) candidates to confirm (Bonferroni over them).
    input_distance : InputDistance or str, optional
        The neighbour relation of the inputs (``"l1:1"``, ``"hamming:1"``, ...); default the
        mechanism's ``input_distance`` attribute. Pairs farther apart are refused. With none
        declared the pairs are audited as given and the result's notes say so.
    sequential : bool
        Confirm with anytime-valid confidence sequences (`audit.sequential`), peeking after every
        chunk and stopping at a certified violation, at futility, or when `confirm_runs` is spent.

    Returns
    -------
    AuditResult
    """
    if is_learner(mechanism):
        if input_distance is not None:
            raise PrivauditError("input_distance applies to mechanisms; a learner's neighbours "
                                 "are its claim's dataset relation")
        return audit_learner(mechanism, pairs=pairs, claim=claim, confidence=confidence,
                             explore_runs=explore_runs, confirm_runs=confirm_runs, seed=seed,
                             runner=runner, tests=tests, journal=journal, progress=progress,
                             sequential=sequential)
    if not is_mechanism(mechanism):
        raise PrivauditError(f"{_name(mechanism)!r} is neither a Mechanism (no sample method) nor a "
                             f"Learner (no predict method)")
    claim = _resolve_claim(mechanism, claim)
    explore_runs, confirm_runs, seed, tests = _check_common(confidence, explore_runs, confirm_runs,
                                                            seed, tests)
    if pairs is None:
        pairs = own_pairs(mechanism)
        if not pairs:
            raise PrivauditError(f"no pairs given and {_name(mechanism)} has no `pairs` attribute")
    try:
        plist = [Pair(np.asarray(a), np.asarray(b)) for a, b in pairs]
    except (TypeError, ValueError):
        raise PrivauditError("pairs must be a list of (a, b) input pairs") from None
    if not plist:
        raise PrivauditError("pairs is empty")
    relation = parse_input_distance(input_distance) or declared_input_distance(mechanism)
    if relation is not None:
        for i, p in enumerate(plist):
            check_input_neighbours(p.a, p.b, relation, f"pair {i}")
    result = run_audit(mechanism, plist, claim=claim, confidence=confidence,
                       explore_runs=explore_runs, confirm_runs=confirm_runs, seed=seed,
                       runner=runner, tests=tests, journal=journal, progress=progress,
                       sequential=sequential)
    result.notes = list(result.notes) + [
        NOT_CHECKED_NOTE if relation is None else f"neighbourhood checked: every pair within "
                                                  f"{relation.describe()}"]
    return result


def _powerless_note(ceiling: float, claim: Claim, confirm_runs: int, confidence: float,
                    tests: int, seq_info: dict | None) -> str:
    """A PASS no budget of this size could have turned into a violation: even the event that
    happened in every run on one side and never on the other certifies at most `ceiling`,
    not above the tested epsilon. Says so, with the runs per side that would make one possible."""
    fn = sequential_ceiling if seq_info is not None else stats.max_certifiable_epsilon
    need = stats.runs_to_certify(claim.epsilon,
                                 lambda n: fn(n, confidence, tests, claim.delta))
    ceiling_text = f"{ceiling:.3g}" if np.isfinite(ceiling) else "nothing"
    more = (f"at {need:,} confirmation runs per input (--runs) one becomes possible at all (an "
            "event seen in every run on one side and never on the other); a real leak needs "
            "far more" if need is not None else "no feasible number of runs makes one possible")
    return (f"powerless: with {confirm_runs:,} confirmation runs per input and {tests} test(s) at "
            f"confidence {confidence:g}, the largest bound this audit could certify is "
            f"{ceiling_text}, not above the tested epsilon {claim.epsilon:g}: no violation could "
            f"have been shown, so this PASS says nothing about the claim; {more}")


def _learner_pairs(learner: Any, pairs: Any, queries: Any, claim: Claim, group: int = 1,
                   grow: bool = False) -> tuple[list[Pair], dict]:
    """Validated pairs; at group distance > 1 each pair may be up to `group` moves apart, and with
    `grow` (pairs the audit found itself, one move apart) each is grown to `group` moves by
    repeating its differing record (`audit.group.copies`)."""
    out, diffs = [], {}
    for i, item in enumerate(pairs):
        if isinstance(item, Pair):
            a, b, q, label, found = item.a, item.b, item.queries, item.label, item.found_by
        else:
            try:
                a, b = item
            except (TypeError, ValueError):
                raise PrivauditError(f"pair {i} must be (S, S'), got {type(item).__name__}") from None
            q, label, found = None, "", "given pairs"
        a, b = as_dataset(a, f"pair {i} first dataset"), as_dataset(b, f"pair {i} second dataset")
        if group > 1 and grow:
            check_neighbours(a, b, claim.neighbours, f"pair {i}")
            a, b = copies(a, b, claim.neighbours, group)
        if group > 1:
            check_within(a, b, claim.neighbours, group, f"pair {i}")
            diffs[i] = None
        else:
            diffs[i] = check_neighbours(a, b, claim.neighbours, f"pair {i}")
        q = q if q is not None else queries
        if q is None:
            q = own_queries(learner)
        if q is None:
            raise PrivauditError(f"pair {i}: no query points; pass queries= (points where the "
                                 f"learned predictor is evaluated)")
        out.append(Pair(a, b, as_queries(q, a.d), label, found))
    return out, diffs


def audit_learner(learner: Any, *, data: Any = None, pairs: Any = None, queries: Any = None,
                  claim: Any = None, confidence: float = 0.95,
                  explore_runs: int = DEFAULT_EXPLORE_RUNS, confirm_runs: int = DEFAULT_CONFIRM_RUNS,
                  seed: int = 0, runner: Runner | None = None, tests: int = 1,
                  journal: Any = None, progress: Any = None, against: str = "claim",
                  search_options: dict | None = None, search: Any = None,
                  group: int = 1, sequential: bool = False) -> AuditResult:
    """Audit a learner: given pairs, a search around the user's `data`, or its own families.

    Parameters
    ----------
    learner : Learner
        Any object with ``name``, ``claim`` and ``predict(data, queries, runs, rng)``.
    data : Dataset, optional
        The user's dataset: neighbours of it (and query points) are searched by `attacks`.
    pairs : list of (S, S'), optional
        Neighbouring datasets (checked against ``claim.neighbours``).
    queries : array (q, d), optional
        Query points; default the learner's ``queries`` attribute (or the search's choice).
    claim : Claim, optional
        Default ``learner.claim``; ``against="certified"`` uses ``learner.certified``.
    group : int
        Group distance k (default 1): given pairs may be up to k moves of the claim's relation
        apart, pairs the audit finds itself are grown to k moves by repeating the differing record,
        and every bound is tested against the group claim ``(k eps, delta_k)`` of `audit.group`
        (the result's ``claim``; ``group`` records k).
    Other parameters as for `audit`.

    Returns
    -------
    AuditResult
    """
    if not is_learner(learner):
        raise PrivauditError(f"{_name(learner)!r} is not a Learner (no predict method)")
    if against not in ("claim", "certified"):
        raise PrivauditError(f"against must be 'claim' or 'certified', got {against!r}")
    if against == "certified" and claim is None:
        claim = certified_of(learner) or claim_of(learner)
    claim = _resolve_claim(learner, claim)
    group = check_group(group)
    explore_runs, confirm_runs, seed, tests = _check_common(confidence, explore_runs, confirm_runs,
                                                            seed, tests)
    runner = runner if runner is not None else LocalRunner()
    search_info: dict = {}
    grow = pairs is None
    if pairs is None and data is None and search_options is None:  # search_options forces a search
        pairs = own_pairs(learner)
        if pairs:
            search_info = {"strategy": "learner's own adversarial pairs"}
        elif own_data(learner) is not None:  # the object's own dataset: search it
            data = own_data(learner)
    if pairs is None:
        # the search lives in attacks/, above the core: injected, or found by entry point
        attack_search = search if search is not None else find_search()
        if data is not None:
            data = as_dataset(data, "data")
        outcome = attack_search(learner, data=data, queries=queries, claim=claim, runner=runner,
                                seed=seed, confidence=confidence, explore_runs=explore_runs,
                                confirm_runs=confirm_runs, tests=tests, journal=journal,
                                progress=progress, **(search_options or {}))
        pairs, search_info = outcome.pairs, outcome.info
        queries = None
    if not pairs:
        raise PrivauditError("pairs is empty")
    plist, diffs = _learner_pairs(learner, pairs, queries, claim, group, grow)
    result = run_audit(learner, plist, claim=group_claim(claim, group), confidence=confidence,
                       explore_runs=explore_runs, confirm_runs=confirm_runs, seed=seed,
                       runner=runner, tests=tests, journal=journal, progress=progress,
                       search=search_info, against=against, differing=diffs,
                       sequential=sequential)
    # what the search could not do at this budget, in its own words (attacks/ is above the core:
    # read as plain strings)
    result.notes.extend(str(n) for n in search_info.get("notes", ()))
    if group > 1:
        # the result's claim is the group claim actually tested, so every display stays
        # consistent; the note keeps the individual claim and the per-individual reading
        g = result.claim
        result.group = group
        result.notes.append(
            f"group audit at distance k = {group} ({claim.neighbours} moves): the claim "
            f"{claim.describe()} promises ({g.epsilon:g}, {g.delta:.3g}) = (k eps, delta "
            f"(e^(k eps)-1)/(e^eps-1)) for the group, which is what was tested; per individual "
            f"epsilon >= {per_individual(result.epsilon_lower, group):.4g} (= epsilon_lower / k)")
    return result
