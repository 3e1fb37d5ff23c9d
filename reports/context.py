"""Plain data for the report templates: what to show, computed once, shared by HTML and Markdown.

Everything here is pure Python over an `AuditResult` / `SuiteResult`; no HTML is produced (the
templates escape every string), and no plotting happens (see `reports.plots`).
"""

from __future__ import annotations

import json
import math
from typing import Any

from audit.result import AuditResult, BoundTest

# Big inputs are shown around their differences only.
MAX_ROWS = 30
CONTEXT = 2
MAX_HISTORY = 200
TOP_ROWS = 15      # rows of a search table shown before the fold


def fmt(x: Any, digits: int = 4) -> str:
    """A number for people: 4 significant digits, "∞" for infinity, "—" for None."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "∞" if x > 0 else "−∞"
        if x == 0:
            return "0"
        if 1e-4 <= abs(x) < 1e6:
            return f"{x:.{digits}g}"
        return f"{x:.{max(digits - 1, 1)}e}"
    return str(x)


def short(value: Any, limit: int = 120) -> str:
    """Any JSON-able value as one line of at most `limit` characters."""
    if isinstance(value, str):
        text = value
    elif value is None:
        text = "—"
    elif isinstance(value, float):
        text = fmt(value)
    elif isinstance(value, dict):   # "k = v; ..." for people, not JSON with quoted keys and nulls
        text = "; ".join(f"{k} = {short(v, limit)}" for k, v in value.items())
    else:
        try:
            text = json.dumps(value, default=str, ensure_ascii=False)
        except (TypeError, ValueError):
            text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def witness_test(result: AuditResult) -> BoundTest | None:
    """The confirmed test behind the witness (same pair, direction, event), else the strongest."""
    if not result.confirmed:
        return None
    w = result.witness
    if w is not None:
        for t in result.confirmed:
            if (t.pair_index, t.direction, t.event_text) == (w.pair_index, w.direction, w.event_text):
                return t
    return max(result.confirmed, key=lambda t: (t.epsilon_lower, t.delta_lower))


def _as_dataset(v: Any) -> tuple[list, list] | None:
    if isinstance(v, dict) and "X" in v and "y" in v and isinstance(v["X"], list):
        X = [row if isinstance(row, list) else [row] for row in v["X"]]
        return X, list(v["y"])
    return None


def _vec(row: Any, limit: int = 8) -> str:
    vals = row if isinstance(row, list) else [row]
    text = ", ".join(fmt(float(v)) if isinstance(v, (int, float)) and not isinstance(v, bool)
                     else short(v, 20) for v in vals[:limit])
    return text + (f", … ({len(vals)} values)" if len(vals) > limit else "")


def _window(n: int, marked: set[int]) -> list[int | None]:
    """Row indices to show (None = an elision): all when few, else the marked ones in context."""
    if n <= MAX_ROWS:
        return list(range(n))
    keep = set(range(min(CONTEXT, n)))
    for i in marked:
        keep.update(range(max(i - CONTEXT, 0), min(i + CONTEXT + 1, n)))
    out: list[int | None] = []
    prev = -1
    for i in sorted(keep)[: MAX_ROWS]:
        if i != prev + 1:
            out.append(None)
        out.append(i)
        prev = i
    if prev != n - 1:
        out.append(None)
    return out


def dataset_pair(a: Any, b: Any, differing: list | None) -> dict | None:
    """Rows of two learner datasets side by side, the differing records marked."""
    da, db = _as_dataset(a), _as_dataset(b)
    if da is None or db is None:
        return None
    (Xa, ya), (Xb, yb) = da, db
    n = max(len(Xa), len(Xb))

    def rec(X, y, i):
        return (_vec(X[i]), y[i]) if i < len(X) else None

    if differing is None:
        differing = [i for i in range(n) if rec(Xa, ya, i) != rec(Xb, yb, i)]
        if len(Xa) != len(Xb) and differing:   # add/remove: the first mismatch is the record
            differing = differing[:1]
    marked = {int(i) for i in differing if isinstance(i, int)}
    rows = []
    for i in _window(n, marked):
        if i is None:
            rows.append({"gap": True})
            continue
        ra, rb = rec(Xa, ya, i), rec(Xb, yb, i)
        rows.append({"gap": False, "index": i, "differs": i in marked,
                     "xa": ra[0] if ra else "(absent)", "ya": "" if ra is None else ra[1],
                     "xb": rb[0] if rb else "(absent)", "yb": "" if rb is None else rb[1]})
    return {"rows": rows, "n_a": len(Xa), "n_b": len(Xb), "differing": sorted(marked),
            "d": len(Xa[0]) if Xa else (len(Xb[0]) if Xb else 0)}


def _flat(v: Any) -> list:
    if isinstance(v, list):
        out: list = []
        for x in v:
            out.extend(_flat(x))
        return out
    return [v]


def input_pair(a: Any, b: Any) -> dict:
    """Two mechanism inputs coordinate by coordinate, differing coordinates marked."""
    fa, fb = _flat(a), _flat(b)
    n = max(len(fa), len(fb))
    marked = {i for i in range(n) if (fa[i] if i < len(fa) else None) != (fb[i] if i < len(fb) else None)}
    rows = []
    for i in _window(n, marked):
        if i is None:
            rows.append({"gap": True})
            continue
        rows.append({"gap": False, "index": i, "differs": i in marked,
                     "a": fmt(fa[i]) if i < len(fa) else "(absent)",
                     "b": fmt(fb[i]) if i < len(fb) else "(absent)"})
    return {"rows": rows, "n_a": len(fa), "n_b": len(fb), "differing": sorted(marked),
            "a_text": short(a, 200), "b_text": short(b, 200)}


def _table(items: list) -> dict:
    items = [{str(k): v for k, v in h.items()} if isinstance(h, dict) else {"value": h} for h in items]
    columns: list[str] = []
    for h in items:
        for k in h:
            if k not in columns:
                columns.append(k)
    # best candidates first (by the estimate the search ranked them by), so the top of a long
    # search history is what a reader sees; the rest is folded (<details>) in the HTML
    est = next((c for c in columns if c.startswith("estimated_")), None)
    if est is not None:
        def rank(h: dict) -> float:
            v = h.get(est)
            return v if isinstance(v, (int, float)) and not isinstance(v, bool) else -math.inf
        items = sorted(items, key=rank, reverse=True)
    shown = items[:MAX_HISTORY]
    rows = [[short(h[c], 80) if c in h else "" for c in columns] for h in shown]
    return {"columns": columns, "rows": rows[:TOP_ROWS],
            "more": rows[TOP_ROWS:], "total": len(items), "shown": len(shown),
            "sorted_by": est}


def table_keys(search: dict) -> list[str]:
    """Keys of `search` whose values are non-empty lists of dicts, "history" first."""
    if not isinstance(search, dict):
        return []
    keys = [k for k, v in search.items()
            if isinstance(v, list) and v and all(isinstance(h, dict) for h in v)]
    return sorted(keys, key=lambda k: k != "history")


def search_tables(search: dict) -> list[dict]:
    """Every list of dicts in `search` (``history``: the candidates tried with their estimates;
    anything else the search recorded the same way) as a titled table of one-line cells."""
    return [dict(_table(search[k]), title=str(k)) for k in table_keys(search)]


def kv(d: dict | None, skip: tuple = ()) -> list[tuple[str, str]]:
    """A dict as (key, one-line value) pairs for a two-column table."""
    if not isinstance(d, dict):
        return []
    return [(str(k), short(v, 300)) for k, v in d.items() if k not in skip]


def direction_text(direction: str) -> tuple[str, str]:
    """Which input is S (p side) and which S′ (q side)."""
    return ("b", "a") if direction == "b>a" else ("a", "b")


__all__ = ["fmt", "short", "witness_test", "dataset_pair", "input_pair", "search_tables", "table_keys", "kv"]
