"""The algorithm registry: name -> factory, with paper reference, claim, parameters and variants.

Modules register their factories with the `register` decorator at import time;
`algorithms/__init__.py` imports every such module.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from audit.errors import PrivauditError


@dataclass(frozen=True)
class Spec:
    """A registered algorithm.

    `variants` maps each variant id (``"correct"`` first, then the spec's planted-bug ids in
    lower case, e.g. ``"bv-em-1"``) to one line saying what it is / what bug it plants.
    """

    name: str
    factory: Callable[..., Any]
    kind: str                      # "learner" | "mechanism"
    paper: str
    section: str
    summary: str
    variants: dict = field(default_factory=lambda: {"correct": "the algorithm as published"})
    tags: tuple = ()
    instances: dict = field(default_factory=dict)
    expect: dict = field(default_factory=dict)
    requires: Callable[[], str | None] | None = None

    def unavailable(self) -> str | None:
        """Why the algorithm cannot be built here (an optional library missing or untested), or
        None when it can."""
        return None if self.requires is None else self.requires()

    def expectation(self, variant: str) -> str:
        """What a black-box privacy audit of `variant` at its defaults must conclude.

        ``"violation"``: a planted privacy bug (every variant not otherwise marked);
        ``"pass"``: the algorithm itself, a negative control (``nc-``, ``fp-``, ``benign-``), or a
        non-private fixture's absence of bugs; ``"white-box"``: a bug the specs say no feasible
        black-box audit can see (an invariant or exact-oracle test catches it; the variant's
        docstring gives the numbers); ``"utility"``: privacy is intact, utility tests catch it.
        Positive-control algorithms (tag ``positive-control``) expect ``"violation"`` throughout.
        """
        if variant in self.expect:
            return self.expect[variant]
        if "positive-control" in self.tags:
            return "violation"
        if variant == "correct" or variant.startswith(CONTROL_PREFIXES):
            return "pass"
        return "violation"

    def instance(self, variant: str) -> dict:
        """The parameters a variant is built with unless the caller sets them.

        A planted bug is a test fixture: its *audit instance* is the parameter setting at which
        the spec's design exposes it (e.g. CH BRK-5 needs accuracy epsilon > privacy alpha). The
        correct algorithm at the same parameters must pass, which the tests check.
        """
        return dict(self.instances.get(variant, {}))

    @property
    def params(self) -> dict:
        sig = inspect.signature(self.factory)
        return {p.name: (None if p.default is inspect.Parameter.empty else p.default)
                for p in sig.parameters.values()
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


_REGISTRY: dict[str, Spec] = {}
CONTROL_PREFIXES = ("nc-", "fp-", "benign")
EXPECTATIONS = ("violation", "pass", "white-box", "utility")


def register(name: str, *, kind: str, paper: str, section: str, summary: str,
             variants: dict | None = None, tags: tuple = (),
             instances: dict | None = None, expect: dict | None = None,
             requires: Callable[[], str | None] | None = None) -> Callable:
    """Decorator registering `factory(**params)` under `name` (lower case, paper-prefixed).

    `instances` maps a variant id to the parameters it is built with by default (its audit
    instance, see `Spec.instance`); explicit parameters passed to `get` override them.
    `expect` marks variants whose black-box audit is not expected to flag them (see
    `Spec.expectation`): ``{"v17": "white-box"}``. `requires` (adapters of optional libraries)
    returns why the algorithm is unavailable here, or None: `get` then refuses it with that reason
    and `info` marks it ``unavailable``.
    """
    if kind not in ("learner", "mechanism"):
        raise ValueError(f"kind must be 'learner' or 'mechanism', got {kind!r}")

    def deco(factory: Callable) -> Callable:
        if name in _REGISTRY:
            raise ValueError(f"algorithm {name!r} is registered twice")
        v = {"correct": "the algorithm as published"} if variants is None else dict(variants)
        if "correct" not in v:
            v = {"correct": "the algorithm as published", **v}
        spec = Spec(name, factory, kind, paper, section, summary, v, tuple(tags),
                    {k: dict(p) for k, p in (instances or {}).items()}, dict(expect or {}), requires)
        for k, e in spec.expect.items():
            if k not in v or e not in EXPECTATIONS:
                raise ValueError(f"{name}: expect[{k!r}] = {e!r}: needs a known variant and one of "
                                 f"{EXPECTATIONS}")
        if v.keys() - {"correct"} and "variant" not in spec.params:
            raise ValueError(f"{name}: a factory with variants needs a `variant` parameter")
        for k, p in spec.instances.items():
            if k not in v:
                raise ValueError(f"{name}: instance given for unknown variant {k!r}")
            bad = sorted(set(p) - set(spec.params) | ({"variant"} & set(p)))
            if bad:
                raise ValueError(f"{name}: instance of {k!r} sets invalid parameter(s) {bad}")
        _REGISTRY[name] = spec
        return factory

    return deco


def names() -> list[str]:
    """Every registered algorithm name, sorted."""
    return sorted(_REGISTRY)


def spec(name: str) -> Spec:
    if not isinstance(name, str) or name not in _REGISTRY:
        raise PrivauditError(f"unknown algorithm {name!r}; valid names: {', '.join(names())}")
    return _REGISTRY[name]


def get(name: str, **params: Any) -> Any:
    """Build the registered algorithm `name` with `params` (``variant="bv-..."`` for a bug).

    A variant with an audit instance (`Spec.instance`) takes those parameters unless `params`
    sets them. Raises `ValueError` (a `PrivauditError`) naming the valid choices for an unknown name,
    parameter or variant.
    """
    s = spec(name)
    valid = s.params
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise PrivauditError(f"{name}: unknown parameter(s) {', '.join(unknown)}; "
                             f"valid: {', '.join(sorted(valid)) or '(none)'}")
    reason = s.unavailable()
    if reason:
        raise PrivauditError(f"{name} is unavailable: {reason}")
    variant = params.get("variant", "correct")
    if variant not in s.variants:
        raise PrivauditError(f"{name}: unknown variant {variant!r}; valid: {', '.join(s.variants)}")
    params = {**s.instance(variant), **params}
    try:
        return s.factory(**params)
    except PrivauditError:
        raise
    except (TypeError, ValueError) as exc:
        raise PrivauditError(f"{name}: invalid parameters {params}: {exc}") from None


def info(name: str) -> dict:
    """Paper, section, claim, parameters with defaults and variants of algorithm `name`."""
    s = spec(name)
    reason = s.unavailable()
    obj = None if reason else s.factory()
    claim = getattr(obj, "claim", None)
    certified = getattr(obj, "certified", None)
    extra = {"unavailable": reason} if reason else {}
    return {
        "name": s.name,
        "kind": s.kind,
        "paper": s.paper,
        "section": s.section,
        "summary": s.summary,
        "claim": claim.to_dict() if claim is not None else None,
        "certified": certified.to_dict() if certified is not None else None,
        "params": {k: _jsonable(v) for k, v in s.params.items()},
        "variants": dict(s.variants),
        "instances": {k: {p: _jsonable(x) for p, x in d.items()} for k, d in s.instances.items()},
        "expect": {k: s.expectation(k) for k in s.variants},
        "tags": list(s.tags),
        **extra,
    }


def _jsonable(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return repr(v)


def coerce_params(name: str, raw: dict[str, str]) -> dict[str, Any]:
    """Turn ``--param k=v`` strings into values of the parameter's default type."""
    s = spec(name)
    valid = s.params
    out: dict[str, Any] = {}
    for k, text in raw.items():
        if k not in valid:
            raise PrivauditError(f"{name}: unknown parameter {k!r}; valid: {', '.join(sorted(valid))}")
        default = valid[k]
        try:
            if isinstance(default, bool):
                if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError("expected true or false")
                out[k] = text.lower() in ("true", "1", "yes")
            elif isinstance(default, int):
                out[k] = int(text)
            elif isinstance(default, float):
                out[k] = float(text)
            elif isinstance(default, str):
                out[k] = text
            else:
                try:
                    out[k] = ast.literal_eval(text)
                except (ValueError, SyntaxError):
                    out[k] = text
        except ValueError as exc:
            raise PrivauditError(f"{name}: parameter {k}={text!r} is not a valid "
                                 f"{type(default).__name__}: {exc}") from None
    return out
