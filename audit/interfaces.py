"""The whole black-box contract in one place: what privaudit calls, and what it may read.

A black box is any object with the attributes below; nothing needs subclassing. The two required
protocols are DESIGN.md section 3 (Fixed): a `Learner` (``predict``) or a `Mechanism`
(``sample``), each with a ``name`` and a ``claim``. Everything else the pipeline uses is an
*optional capability*, declared here as its own protocol and read only through the accessor below
it, so no module reads an attribute this file does not declare.

Optional capabilities
---------------------
``certified`` (`HasCertified`)
    The tightest valid `Claim` known for the object's parameters when it differs from the paper's
    nominal ``claim`` (``against="certified"`` audits against it).
``params`` (`HasParams`)
    The parameters the object was built with, recorded in the result.
``pairs`` (`HasPairs`)
    Built-in adversarial inputs: ``[(a, b), ...]`` arrays for a mechanism, or datasets for a
    learner (``(S, S')`` or ``(S, S', queries)``). Used when the caller gives no pairs.
``queries`` (`HasQueries`)
    A learner's default query points, shape (q, d).
``data`` (`HasData`)
    A learner's own dataset: with no pairs, the search looks for neighbours of it.
``exact`` (`HasExact`)
    ``exact(data, queries) -> float64 array`` of Pr[label = 1] at each query, for instances small
    enough (raises ``ValueError`` otherwise). The search may steer with it; every reported bound is
    still confirmed on black-box runs.
``input_distance`` (`HasInputDistance`)
    A mechanism's input neighbour relation (`audit.neighbours.InputDistance`, or ``"l1:1"``):
    given pairs farther apart are refused with the distance found.
``input_length`` (`HasInputLength`)
    The number of entries of a vector-input mechanism's input. With a declared ``input_distance``
    and no pairs, `privaudit audit` searches for inputs of this length
    (`attacks.mechanism_search`; ``--input-length K`` gives it on the command line).
``search_sizes`` (`HasSearchSizes`)
    The dataset sizes the learner accepts, when it accepts only some (the search tries these).
``batches`` (`HasBatches`)
    ``(k, m)``: the learner runs a sub-learner on k positional batches of m records each
    (records ``i m .. (i + 1) m - 1`` form batch i; the rest, if any, is used otherwise), a
    property of the algorithm as its paper states it (e.g. Bun, Livni & Moran's M, Theorem 17).
    The search then also builds datasets whose batches replicate the two sides of a pair.
``inner`` and ``lift`` (`HasInner`)
    A wrapper that runs another learner on part of its data (secrecy of the sample, a
    subsample-and-aggregate step) declares that learner as ``inner`` and ``lift((S, S')) -> (S,
    S')``: a neighbouring pair of its own inputs that holds the inner pair where the wrapper
    hands records to ``inner`` (e.g. first, padded to the wrapper's minimum size). With no pairs,
    the search also searches ``inner`` and lifts its short list into its own candidates
    (`attacks.search`); the lifted pairs are scored and confirmed on the wrapper's runs.
``exact_values`` (`HasExactValues`)
    True when a mechanism's float outputs are released as the exact doubles it computes (not as
    stand-ins for real numbers): the auditor then also tests events on each output's exact-value
    grid (`audit.reducers.lattice_exponent`), where floating-point leaks show (Mironov, CCS 2012).
``reproducible`` (`HasReproducible`)
    False for a black box that draws from its own entropy and ignores ``rng`` (a real library):
    the result says its runs were not reproducible; counts still add up and journal as usual.
``domain`` / a hypothesis class (`HasDomain`)
    Where records may lie: an (N, d) array of points, or a hypothesis class (an object with
    ``matrix``, ``domain`` and ``index``) under one of `CLASS_ATTRIBUTES`.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from .errors import PrivauditError
from .neighbours import InputDistance, parse_input_distance
from .types import Claim, Dataset


@runtime_checkable
class Learner(Protocol):
    """A learning algorithm as a black box (DESIGN.md section 3, Fixed)."""

    name: str
    claim: Claim

    def predict(self, data: Dataset, queries: np.ndarray, runs: int,
                rng: np.random.Generator) -> np.ndarray:
        """Run the algorithm ``runs`` times independently on ``data`` and evaluate each resulting
        predictor at every query point. Returns int8 array of shape (runs, len(queries))."""
        ...


@runtime_checkable
class Mechanism(Protocol):
    """Any randomized algorithm with array input (DESIGN.md section 3, Fixed)."""

    name: str
    claim: Claim

    def sample(self, inp: np.ndarray, runs: int, rng: np.random.Generator) -> np.ndarray:
        """``runs`` independent outputs on input ``inp``; shape (runs,) or (runs, k); integer
        (discrete outputs) or float (continuous outputs)."""
        ...


# --- optional capabilities --------------------------------------------------------------------
@runtime_checkable
class HasCertified(Protocol):
    certified: Claim


@runtime_checkable
class HasParams(Protocol):
    params: dict


@runtime_checkable
class HasPairs(Protocol):
    pairs: list


@runtime_checkable
class HasQueries(Protocol):
    queries: np.ndarray


@runtime_checkable
class HasData(Protocol):
    data: Dataset


@runtime_checkable
class HasExact(Protocol):
    def exact(self, data: Dataset, queries: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class HasExactLaw(Protocol):
    """Optional beside `HasExact`: the exact law of the labels at the queries, jointly --
    ``{bytes of the int8 label vector: probability}`` (the same refusals as ``exact``). The
    search scores events on whole outputs with it (a leak spread over several queries, which
    no single query's marginal shows)."""

    def exact_law(self, data: Dataset, queries: np.ndarray) -> dict: ...


@runtime_checkable
class HasInputDistance(Protocol):
    """A mechanism's input neighbour relation: pairs farther apart are refused (e.g.
    ``InputDistance("hamming", 1)`` -- one record replaced -- or ``"l1:1"``; see
    `audit.neighbours.InputDistance`). Without it, pairs are audited as given, and the result
    says their neighbourhood was not checked."""

    input_distance: Any


@runtime_checkable
class HasInputLength(Protocol):
    input_length: int


@runtime_checkable
class HasSearchSizes(Protocol):
    search_sizes: tuple


@runtime_checkable
class HasBatches(Protocol):
    batches: tuple


@runtime_checkable
class HasInner(Protocol):
    """A wrapper's inner learner and how an inner pair becomes a pair of the wrapper's inputs."""

    inner: Any

    def lift(self, pair: tuple[Dataset, Dataset]) -> tuple[Dataset, Dataset]: ...


@runtime_checkable
class HypothesisClassLike(Protocol):
    """What the search needs of a hypothesis class: its points and its label matrix."""

    domain: np.ndarray
    matrix: np.ndarray

    def index(self, *args: Any, **kw: Any) -> Any: ...


@runtime_checkable
class HasExactValues(Protocol):
    exact_values: bool


@runtime_checkable
class HasReproducible(Protocol):
    reproducible: bool


CLASS_ATTRIBUTES = ("domain", "hypotheses", "H", "hclass", "hypothesis_class", "cls")


# --- accessors: the only places these attributes are read --------------------------------------
def _opt(obj: Any, attr: str) -> Any:
    return getattr(obj, attr, None)


def is_learner(obj: Any) -> bool:
    """True for an object with a callable ``predict`` (a `Learner`)."""
    return callable(_opt(obj, "predict"))


def is_mechanism(obj: Any) -> bool:
    """True for an object with a callable ``sample`` and no ``predict`` (a `Mechanism`)."""
    return callable(_opt(obj, "sample")) and not is_learner(obj)


def name_of(obj: Any) -> str:
    """The black box's ``name``, or its class name."""
    return str(_opt(obj, "name") or type(obj).__name__)


def claim_of(obj: Any) -> Claim | None:
    """The object's nominal ``claim`` (None when it declares none)."""
    return _opt(obj, "claim")


def certified_of(obj: Any) -> Claim | None:
    """The object's ``certified`` claim (None when it declares none)."""
    return _opt(obj, "certified")


def params_of(obj: Any) -> dict:
    """The parameters the object declares it was built with (``{}`` when none)."""
    return dict(_opt(obj, "params") or {})


def declared_input_distance(obj: Any) -> InputDistance | None:
    """A mechanism's declared ``input_distance`` (None when it declares none)."""
    return parse_input_distance(_opt(obj, "input_distance"))


def declared_input_length(obj: Any) -> int | None:
    """A vector-input mechanism's declared ``input_length`` (None when it declares none)."""
    k = _opt(obj, "input_length")
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise PrivauditError(f"{name_of(obj)}.input_length must be a positive integer, got {k!r}")
    return int(k)


def own_pairs(obj: Any) -> Any:
    """The object's built-in ``pairs`` (None when it has none or they are empty)."""
    return _opt(obj, "pairs") or None


def own_queries(obj: Any) -> Any:
    """A learner's default ``queries`` (None when it has none)."""
    return _opt(obj, "queries")


def own_data(obj: Any) -> Any:
    """A learner's own ``data`` (None when it has none)."""
    return _opt(obj, "data")


def exact_oracle(obj: Any) -> Callable | None:
    """The learner's ``exact(data, queries)`` when it has one."""
    f = _opt(obj, "exact")
    return f if callable(f) else None


def exact_law_oracle(obj: Any) -> Callable | None:
    """The learner's ``exact_law(data, queries)`` when it has one (`HasExactLaw`)."""
    f = _opt(obj, "exact_law")
    return f if callable(f) else None


def search_sizes(obj: Any) -> Any:
    """The dataset sizes the learner declares it accepts (None: any)."""
    return _opt(obj, "search_sizes")


def declared_batches(obj: Any) -> tuple[int, int] | None:
    """The learner's declared positional batches ``(k, m)`` (None when it declares none).

    A declaration that is not two positive integers is refused (`PrivauditError`): ignoring it
    would silently search without the family the learner asked for."""
    v = _opt(obj, "batches")
    if v is None:
        return None
    try:
        k, m = v
    except (TypeError, ValueError):
        k = m = None
    if any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1 for x in (k, m)):
        raise PrivauditError(f"{name_of(obj)}.batches must be (k, m), two positive integers "
                             f"(k batches of m records), got {v!r}")
    return (int(k), int(m))


def declared_inner(obj: Any) -> tuple[Any, Callable] | None:
    """``(inner, lift)`` of a wrapper (`HasInner`; None when it declares no ``lift``).

    The declaration is ``lift``: an attribute named ``inner`` alone is a common name and is not
    read. A ``lift`` that is not callable, or beside an ``inner`` that is no learner (or is the
    wrapper itself), is refused (`PrivauditError`), as for ``batches``."""
    lift = _opt(obj, "lift")
    if lift is None:
        return None
    inner = _opt(obj, "inner")
    if not callable(lift) or inner is None or not is_learner(inner) or inner is obj:
        raise PrivauditError(f"{name_of(obj)} declares lift(pair); it needs a callable `lift` and "
                             f"a learner `inner` (with predict and claim, not the wrapper "
                             f"itself), got inner={type(inner).__name__}, "
                             f"lift={type(lift).__name__}")
    return inner, lift


def exact_values_of(obj: Any) -> bool:
    """Whether the black box declares its float outputs are released as exact doubles."""
    return bool(_opt(obj, "exact_values"))


def is_reproducible(obj: Any) -> bool:
    """False only when the black box declares ``reproducible = False`` (it ignores ``rng``)."""
    return _opt(obj, "reproducible") is not False


def is_hypothesis_class(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("matrix", "domain", "index"))


def declared_domain(obj: Any) -> tuple[str, Any] | None:
    """``(attribute, value)`` of the first domain or hypothesis class the learner declares."""
    for attr in CLASS_ATTRIBUTES:
        value = _opt(obj, attr)
        if value is None or (callable(value) and not is_hypothesis_class(value)):
            continue
        if is_hypothesis_class(value) or attr == "domain":
            return attr, value
    return None


__all__ = ["Learner", "Mechanism", "HasCertified", "HasParams", "HasPairs", "HasQueries", "HasData",
           "HasExact", "HasSearchSizes", "HypothesisClassLike", "CLASS_ATTRIBUTES", "is_learner",
           "is_mechanism", "name_of", "claim_of", "certified_of", "params_of", "own_pairs",
           "own_queries", "own_data", "exact_oracle", "exact_law_oracle", "HasExactLaw",
           "search_sizes", "exact_values_of",
           "is_reproducible", "HasExactValues", "HasReproducible", "is_hypothesis_class",
           "declared_input_distance", "HasInputDistance", "declared_input_length",
           "HasInputLength", "declared_domain", "HasBatches", "declared_batches",
           "HasInner", "declared_inner"]
