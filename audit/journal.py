"""Resume journal: an append-only record of finished chunks, so an interrupted audit resumes.

One JSON line per finished chunk::

    {"v": 1, "job": "<fingerprint>", "chunk": 3, "size": 262144, "red": {...reduction...}}

The fingerprint is a hash of everything the chunk's counts depend on — the seed, the job's key,
its run count, the chunk size, the reducer (events, grids), the input's bytes, the queries' bytes
and the black box's name, type, parameters and code — so a journal can only ever supply a chunk
that would be recomputed identically; a changed seed, budget, event or input simply misses. A
black box is described by its module, class, ``name``, public data attributes (parameters such as
``epsilon`` or ``variant``; attributes starting with ``_`` are taken for caches and left out) and
the bytes of the source file defining its class: editing that file invalidates old chunks. Code
the class merely calls in *other* modules is not hashed; after editing such a helper, start a
fresh output directory.

Each line is written with one ``write`` call, flushed and fsync'd before `put` returns, so after a
crash (Ctrl-C, SIGTERM, SIGKILL, power loss) the file holds every chunk reported finished plus at
most one torn last line, which is ignored (and cut off before new lines are appended).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import json
import os
import signal
import threading
import warnings
import weakref
from pathlib import Path
from typing import Any

import numpy as np

from . import interrupts
from .errors import PrivauditError
from .files import refuse_symlink
from .journal_check import record_problem
from .reducers import Reduction, reduction_from_dict
from .types import Dataset

JOURNAL_FILE = "journal.jsonl"
_VERSION = 1


# ---------------------------------------------------------------------------------------------
# fingerprints
# ---------------------------------------------------------------------------------------------
def _feed(h: "hashlib._Hash", obj: Any, depth: int = 0) -> None:
    """Hash `obj` by value where it is data (arrays, datasets, numbers, strings, containers)."""
    if depth > 6:  # deep object graphs: the type is all we can cheaply and stably say
        h.update(f"<{type(obj).__qualname__}>".encode())
        return
    if isinstance(obj, Dataset):
        h.update(b"Dataset")
        _feed(h, obj.X, depth + 1)
        _feed(h, obj.y, depth + 1)
    elif isinstance(obj, np.ndarray):
        arr = np.ascontiguousarray(obj)
        h.update(f"nd{arr.dtype.str}{arr.shape}".encode())
        if arr.dtype.kind == "O":
            h.update(repr(arr.tolist()).encode())
        else:
            h.update(arr.tobytes())
    elif obj is None or isinstance(obj, (bool, int, float, complex, str, bytes, np.generic)):
        h.update(f"{type(obj).__name__}:{obj!r}".encode())
    elif isinstance(obj, (list, tuple)):
        h.update(f"{type(obj).__name__}[{len(obj)}](".encode())
        for v in obj:
            _feed(h, v, depth + 1)
        h.update(b")")
    elif isinstance(obj, dict):
        h.update(f"dict[{len(obj)}](".encode())
        for k in sorted(obj, key=repr):
            _feed(h, k, depth + 1)
            _feed(h, obj[k], depth + 1)
        h.update(b")")
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        h.update(f"dc:{type(obj).__module__}.{type(obj).__qualname__}(".encode())
        for f in dataclasses.fields(obj):
            h.update(f.name.encode())
            _feed(h, getattr(obj, f.name), depth + 1)
        h.update(b")")
    else:
        _feed_object(h, obj, depth)


@functools.lru_cache(maxsize=256)
def _source_digest(cls: type) -> str:
    """Hash of the file defining `cls` ('' when there is none, e.g. a class built in a REPL)."""
    try:
        path = inspect.getsourcefile(cls)
        return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else ""
    except (TypeError, OSError):
        return ""


def _feed_object(h: "hashlib._Hash", obj: Any, depth: int) -> None:
    # A black box: its name, type, data attributes (parameters such as epsilon or variant) and
    # defining source file; callables and private caches are left out of the attributes.
    t = type(obj)
    h.update(f"obj:{t.__module__}.{t.__qualname__}:{getattr(obj, 'name', '')}:"
             f"{_source_digest(t) if depth == 0 else ''}(".encode())
    state = getattr(obj, "__dict__", None)
    if isinstance(state, dict):
        for k in sorted(state):
            v = state[k]
            if k.startswith("_") or callable(v):
                continue
            h.update(k.encode())
            _feed(h, v, depth + 1)
    h.update(b")")


def fingerprint(job: Any, size: int, seed: int | None = None) -> str:
    """Hash of everything one chunk of `job` (chunks of `size` runs) depends on, but the index."""
    h = hashlib.sha256()
    h.update(f"v{_VERSION}|seed={seed!r}|key={tuple(int(k) for k in job.key)!r}|"
             f"runs={int(job.runs)}|size={int(size)}|reducer={job.reducer!r}|".encode())
    _feed(h, job.reducer)
    h.update(b"|inp|")
    _feed(h, job.inp)
    h.update(b"|queries|")
    _feed(h, job.queries)
    h.update(b"|blackbox|")
    _feed_object(h, job.blackbox, 0)
    return h.hexdigest()[:32]


# ---------------------------------------------------------------------------------------------
# the journal
# ---------------------------------------------------------------------------------------------
class Journal:
    """Append-only JSON-lines record of finished chunks (the runners' ``journal=`` argument).

    Parameters
    ----------
    path : str or Path
        The journal file; a directory (existing, or a path without suffix) means
        ``path/journal.jsonl``. Created if missing; an existing file is read and extended.
    seed : int, optional
        The seed folded into fingerprints when a runner does not pass one to `get` / `put`.
    fsync : bool
        fsync after every line (default). Costs ~0.3 ms per chunk; without it a crash of the
        process still loses nothing (the line is flushed to the OS), a crash of the machine may.

    Notes
    -----
    `get(job, index, size)` returns the recorded reduction of chunk `index` or None;
    `put(job, index, size, reduction)` records it. One process writes a journal at a time.
    """

    def __init__(self, path: str | os.PathLike, *, seed: int | None = None, fsync: bool = True) -> None:
        p = Path(path)
        if p.is_dir() or (not p.exists() and p.suffix == ""):
            p = p / JOURNAL_FILE
        self.path = p
        self.seed = seed
        self.fsync = fsync
        self._lock = threading.Lock()
        self._done: dict[tuple[str, int, int], dict] = {}
        # job -> {(size, seed): fingerprint}; weak, so finished jobs (and their data) can go
        self._fp_cache: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
        self.loaded = 0       # chunks read from an existing file
        self.torn = 0         # unreadable lines ignored
        self.hits = 0         # chunks supplied by `get`
        self.written = 0      # chunks recorded by `put` in this process
        refuse_symlink(p, "journal")   # its torn-line repair must not cut another file
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            self._load()
            fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                         0o644)
            self._fh = os.fdopen(fd, "a", encoding="utf-8")
        except OSError as exc:
            raise PrivauditError(f"cannot open journal {str(p)!r}: {exc.strerror or exc}") from None

    @classmethod
    def in_dir(cls, directory: str | os.PathLike, **kw: Any) -> "Journal":
        """The journal of an output directory (``DIR/journal.jsonl``)."""
        return cls(Path(directory) / JOURNAL_FILE, **kw)

    # -- reading ---------------------------------------------------------------------------
    def _load(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            # A torn last line (the process died mid-write): drop it, or the next append would
            # be glued onto it.
            self.torn += 1
            with open(self.path, "r+b") as fh:
                fh.truncate(end)
                fh.flush()
                os.fsync(fh.fileno())
        lines = data[:end].splitlines()
        for n, raw in enumerate(lines):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except (ValueError, RecursionError):
                self.torn += 1
                warnings.warn(f"journal {str(self.path)!r}: ignoring unreadable line {n + 1}",
                              RuntimeWarning, stacklevel=3)
                continue
            # A readable line that does not add up was edited or corrupted: using it would
            # change the bounds, ignoring it would hide that; stop with a clear message.
            problem = record_problem(rec)
            if problem is not None:
                raise PrivauditError(f"journal {str(self.path)!r} line {n + 1} is not a valid "
                                     f"record ({problem}); it was edited or corrupted: delete "
                                     f"the journal (its chunks are recomputed) or use a new "
                                     f"--out DIR")
            key = (str(rec["job"]), int(rec["chunk"]), int(rec["size"]))
            red = rec["red"]
            self._done[key] = red
            self.loaded += 1

    def _fingerprint(self, job: Any, size: int, seed: int | None) -> str:
        s = self.seed if seed is None else int(seed)
        try:
            per_job = self._fp_cache.setdefault(job, {})
        except TypeError:  # not weak-referenceable: hash every time
            return fingerprint(job, size, s)
        fp = per_job.get((int(size), s))
        if fp is None:
            fp = per_job[(int(size), s)] = fingerprint(job, size, s)
        return fp

    def get(self, job: Any, index: int, size: int, seed: int | None = None) -> Reduction | None:
        """The recorded reduction of chunk `index` (of `size` runs) of `job`, or None."""
        rec = self._done.get((self._fingerprint(job, size, seed), int(index), int(size)))
        if rec is None:
            return None
        self.hits += 1
        return reduction_from_dict(rec)

    def __contains__(self, item: tuple) -> bool:
        job, index, size = item[:3]
        seed = item[3] if len(item) > 3 else None
        return (self._fingerprint(job, size, seed), int(index), int(size)) in self._done

    def __len__(self) -> int:
        return len(self._done)

    # -- writing ---------------------------------------------------------------------------
    def put(self, job: Any, index: int, size: int, reduction: Reduction,
            seed: int | None = None) -> None:
        """Record chunk `index` of `job` as finished with `reduction` (durable on return)."""
        fp = self._fingerprint(job, size, seed)
        red = reduction.to_dict()
        if int(red.get("runs", size)) != int(size):
            raise PrivauditError(f"chunk {index} has {red.get('runs')} runs, expected {size}")
        line = json.dumps({"v": _VERSION, "job": fp, "chunk": int(index), "size": int(size),
                           "red": red}, separators=(",", ":"))
        with self._lock:
            key = (fp, int(index), int(size))
            if key in self._done:
                return  # counted exactly once, even if a chunk were reported twice
            self._fh.write(line + "\n")
            self._fh.flush()
            if self.fsync:
                os.fsync(self._fh.fileno())
            self._done[key] = red
            self.written += 1

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.flush()
                os.fsync(self._fh.fileno())
                self._fh.close()
        self._fp_cache.clear()

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def summary(self) -> dict:
        return {"path": str(self.path), "loaded": self.loaded, "reused": self.hits,
                "written": self.written, "ignored_lines": self.torn}




def interrupt_on_sigterm() -> bool:
    """Make SIGTERM raise KeyboardInterrupt in this (main) thread, like Ctrl-C.

    A terminated audit then stops the same clean way as an interrupted one: runners submit no
    more work, every finished chunk stays in the journal, and ``--resume`` continues. Returns
    False (and does nothing) outside the main thread, where handlers cannot be installed.
    """
    if threading.current_thread() is not threading.main_thread():
        return False

    def _raise(signum: int, frame: Any) -> None:
        interrupts.request(f"signal {signum}")
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, _raise)
    return True


__all__ = ["Journal", "fingerprint", "interrupt_on_sigterm", "JOURNAL_FILE"]
