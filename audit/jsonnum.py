"""The one JSON encoding of numbers used by results, suites, search histories and the registry.

JSON has no NaN or infinities. privaudit writes them as the strings ``"nan"``, ``"inf"`` and
``"-inf"`` (the result schema's convention since version 1) and reads those strings back as floats.
numpy scalars and arrays become plain Python numbers and lists.

    >>> from audit.jsonnum import encode, decode, dumps
    >>> dumps({"eps": float("inf")})
    '{"eps": "inf"}'
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

_SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def encode(x: Any) -> Any:
    """`x` as plain JSON types: non-finite floats become their strings, numpy scalars and arrays
    numbers and lists, tuples lists, objects with ``to_dict()`` their dict, anything else its
    ``str``."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (float, np.floating)):
        f = float(x)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.ndarray):
        return encode(x.tolist())
    if isinstance(x, dict):
        return {str(k): encode(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [encode(v) for v in x]
    if x is None or isinstance(x, (str, int)):
        return x
    if callable(getattr(x, "to_dict", None)):     # result objects, claims, datasets
        return encode(x.to_dict())
    return str(x)   # e.g. a Path among the parameters: readable, never pickled


def decode_number(x: Any) -> Any:
    """A number as `encode` wrote it: ``"inf"``/``"-inf"``/``"nan"`` become floats, the rest as is."""
    if isinstance(x, str) and x in _SPECIAL:
        return _SPECIAL[x]
    return x


def dumps(obj: Any, **kw: Any) -> str:
    """`json.dumps` of ``encode(obj)``; never writes a bare NaN or Infinity."""
    return json.dumps(encode(obj), allow_nan=False, **kw)


__all__ = ["encode", "decode_number", "dumps"]
