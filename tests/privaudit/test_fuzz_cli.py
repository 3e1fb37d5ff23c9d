"""Fuzz test of the command line and the CI config: hostile and malformed input never ends in a
traceback, a wrong exit code or a partial file.

1,200 cases are generated from a fixed seed (so a failure names a reproducible case) out of a
grammar of `audit` / `ci` / `report` / `list` commands whose every option is drawn from a pool of
valid, boundary and hostile values; black boxes that exit, interrupt, hang, return garbage or
huge integers, and files that are not UTF-8, nested too deeply, of the wrong shape or symlinked.
Each case runs in this process through `privaudit.cli.main` (the console script's function), with
tiny budgets. Checked for every case: the exit code is 0, 1 or 2 (never 3, an internal error);
no "Traceback" on stderr; stderr is at most a few lines; no temporary file is left behind; and an
output directory holds either no result or the whole set (result.json that parses, report.html,
report.md). Deterministic (no statistics), so no false-alarm rate.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import sys
import textwrap
import time
from pathlib import Path

import pytest

from privaudit.cli import main

N_CASES = 1200
SEED = 20261127

BLACKBOXES = textwrap.dedent('''
    import os, sys, time
    import numpy as np
    from audit import Claim

    class Base:
        name = "fz"
        claim = Claim(1.0)
        pairs = [[[0], [1]]]
        def sample(self, inp, runs, rng):
            return rng.integers(0, 2, size=runs)

    ok = Base()
    class _E(Base):
        def sample(self, inp, runs, rng): sys.exit(0)
    exit0 = _E()
    class _X(Base):
        def sample(self, inp, runs, rng): os._exit(0)
    osexit = _X()
    class _K(Base):
        def sample(self, inp, runs, rng): raise KeyboardInterrupt
    kbint = _K()
    class _R(Base):
        def sample(self, inp, runs, rng): raise ValueError("boom")
    raises = _R()
    class _G(Base):
        def sample(self, inp, runs, rng): return ["x"] * runs
    garbage = _G()
    class _N(Base):
        def sample(self, inp, runs, rng): return np.full(runs, np.nan)
    nans = _N()
    class _S(Base):
        def sample(self, inp, runs, rng): return np.zeros(runs + 1)
    shape = _S()
    class _U(Base):
        def sample(self, inp, runs, rng):
            return rng.integers(0, 2, size=runs).astype(np.uint64) + np.uint64(2**63)
    uint64 = _U()
    class _D(Base):
        def sample(self, inp, runs, rng): return np.random.randint(0, 2, size=runs)
    nondet = _D()
    class _H(Base):
        def sample(self, inp, runs, rng):
            time.sleep(30)
    hang = _H()
    class NeedsArgs(Base):
        def __init__(self, p): self.p = p
    class _C(Base):
        claim = "eps 1"
    badclaim = _C()
    class _P(Base):
        @property
        def pairs(self): raise RuntimeError("pairs property")
    badpairs = _P()
    class _F(Base):
        input_distance = "l1:1"
        pairs = [[[0, 0], [3, 3]]]
    far = _F()
    notabb = 42
    ''')


def _files(root: Path) -> dict[str, str]:
    f = {}
    def put(name: str, data: bytes | str) -> None:
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        f[name] = str(p)
    put("pairs_ok.json", "[[[0], [1]]]")
    put("pairs_far.json", "[[[0, 0, 0], [1, 1, 1]]]")
    put("pairs_deep.json", "[" * 50000 + "]" * 50000)
    put("pairs_nonutf8.json", b"[[[0],[1]]]\xff")
    put("pairs_nan.json", "[[[NaN], [1]]]")
    put("pairs_str.json", '"abc"')
    put("pairs_empty.json", "[]")
    put("pairs_ragged.json", "[[[0, 1], [1]]]")
    put("pairs_huge.json", "[[[1e400], [1]]]")
    put("pairs_obj.json", '[{"a": 1}]')
    put("pairs_sets.json", '[[{"X": [[0], [1]], "y": [0, 1]}, {"X": [[0], [2]], "y": [0, 1]}]]')
    put("pairs_badsets.json", '[[{"X": {}, "y": null}, {"X": [[0]], "y": [7]}]]')
    put("data_ok.csv", "x,label\n0.1,0\n0.5,1\n0.9,1\n")
    put("data_nonutf8.csv", b"0,1\n\xff,0\n")
    put("data_text.csv", "a,b\nc,d\n")
    put("data_ragged.csv", "0,1\n0,1,2\n")
    put("data_far.csv", "1e300,0\n-1e300,1\n")
    put("queries_ok.json", "[[0.5]]")
    put("queries_bad.json", '[["x"]]')
    put("result_nan.json", '{"schema_version": 1, "epsilon_lower": NaN}')
    put("result_random.json", '{"a": [1, 2, {"b": null}]}')
    put("empty.json", "")
    put("notafile_dir/.keep", "")
    return f


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    (root / "fzbb.py").write_text(BLACKBOXES)
    (root / "fzsyntax.py").write_text("def broken(:\n")
    (root / "fzexitimport.py").write_text("import sys\nsys.exit(0)\n")
    files = _files(root)
    # a valid stored result to re-render, and a symlinked journal to refuse
    valid = root / "valid"
    with _quiet():
        assert main(["audit", "dp-rr", "--runner", "local", "--quiet", "--runs", "2000",
                     "--explore-runs", "1000", "--out", str(valid)]) == 0
    files["result_ok.json"] = str(valid / "result.json")
    (root / "symlinked").mkdir()
    (root / "victim.txt").write_text("do not touch\nlast line")
    (root / "symlinked" / "journal.jsonl").symlink_to(root / "victim.txt")
    (root / "afile").write_text("x")
    return root, files


@contextlib.contextmanager
def _quiet():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield out, err


def _audit_case(r: random.Random, root: Path, files: dict, k: int) -> list[str]:
    argv = ["audit"]
    pick = r.random()
    if pick < 0.35:
        argv.append(r.choice(["dp-rr", "dp-laplace", "dp-em", "dp-gaussian", "lit-laplace",
                              "dp-rr", "dp-rr", "dp-laplace", "df-cor1"]))
    elif pick < 0.5:
        argv.append(r.choice(["", "nope", "../x", "DP-RR", "dp-rr;rm", "ü", "-"]))
    elif pick < 0.95:
        argv += ["--blackbox", r.choice(
            ["fzbb:ok", "fzbb:exit0", "fzbb:osexit", "fzbb:kbint", "fzbb:raises", "fzbb:garbage",
             "fzbb:nans", "fzbb:shape", "fzbb:uint64", "fzbb:nondet", "fzbb:NeedsArgs",
             "fzbb:badclaim", "fzbb:badpairs", "fzbb:far", "fzbb:notabb", "fzbb:nothing",
             "fzsyntax:x", "fzexitimport:x", "nosuchmod:x", ":", "a:", ":b", "reports:write_reports",
             "fzbb", "fzbb:ok.sample.x", "1bad:x"])]
        if "hang" in argv[-1]:
            pass
    else:
        argv += ["--blackbox", "fzbb:hang", "--timeout", "0.3"]
    pools = {
        "--runs": ["2000", "3000", "0", "-5", "1e15", "abc", str(10**15), "1"],
        "--explore-runs": ["1000", "0", "x", "10"],
        "--epsilon": ["0.5", "-1", "nan", "inf", "1e308", "701", "0", "abc"],
        "--delta": ["0", "1", "-0.1", "nan", "0.5", "1e-300"],
        "--confidence": ["0.9", "1", "0", "nan", "2", "0.999999"],
        "--seed": ["0", "-1", "x", "99999999999999999999999", "7"],
        "--tests": ["1", "0", "3", "-2"],
        "--param": ["epsilon=0.5", "epsilon=abc", "nope=1", "variant=bv-rr-eps", "epsilon", "=",
                    "epsilon=1e308", "k=3", "k=0", "epsilon=nan", "variant=correct"],
        "--variant": ["bv-rr-eps", "nope", "correct", ""],
        "--pairs": [v for n, v in files.items() if n.startswith("pairs_")] + ["/nonexistent.json"],
        "--data": [v for n, v in files.items() if n.startswith("data_")],
        "--queries": [files["queries_ok.json"], files["queries_bad.json"], files["empty.json"]],
        "--input-distance": ["l1:1", "hamming:1", "l7:1", "l1:-1", "linf:0", "", "l1:nan"],
        "--chunk-runs": ["500", "0", "-1", "x"],
        "--against": ["claim", "certified", "x"],
        "--strategy": ["bogus"],   # a valid strategy starts a search at its default budget
        "--num-cpus": ["0", "2", "x"],
        "--address": ["auto"],
        "--timeout": ["0", "-1", "nan", "30"],
    }
    for flag in r.sample(list(pools), r.randint(0, 4)):
        argv += [flag, r.choice(pools[flag])]
    if r.random() < 0.3:
        argv.append(r.choice(["--json", "--search", "--quiet"]))
        if argv[-1] == "--search":   # a search's own budget, kept small
            argv += ["--search-runs", "2000", "--candidates", "2", "--strategy", "random"]
    out_pick = r.random()
    if out_pick < 0.04:   # writing the HTML report costs ~1 s: a few cases cover it
        argv += ["--out", str(root / f"out{k}")]
    elif out_pick < 0.09:
        argv += ["--out", r.choice([str(root / "afile"), str(root / "afile" / "sub"),
                                    str(root / "symlinked")])]
    if "--runs" not in argv:
        argv += ["--runs", "1000"]
    if "--explore-runs" not in argv:
        argv += ["--explore-runs", "500"]
    if "--address" in argv or r.random() < 0.97:
        argv += ["--runner", "local"]   # never start Ray in the default test run
    if "--num-cpus" in argv and "--runner" not in argv:
        argv += ["--runner", "local"]
    return argv


_CI_KEYS = ["confidence", "seed", "runner", "address", "explore_runs", "confirm_runs",
            "algorithm", "blackbox", "params", "claim", "expect", "pairs", "input_distance",
            "tests", "against", "name", "bogus", "num_cpus", "chunk_runs"]
_CI_VALUES = ['1', '0', '-1', '1e308', 'nan', 'inf', '"dp-rr"', '"local"', '"ray"', '"fzbb:ok"',
              '"fzbb:exit0"', '"fzbb:osexit"', '"fzbb:kbint"', '"fzbb:raises"', '"fzsyntax:x"',
              '""', '{ epsilon = 1.0 }', '{ variant = "bv-rr-eps" }', '[1, 2]', 'true', '"l1:1"',
              '"pass"', '"violation"', '0.95', '{ epsilon = -1 }', '"../../etc/passwd"',
              '{ epsilon = 1e308 }', '"pairs_ok.json"', '"pairs_deep.json"', '"pairs_nonutf8.json"',
              '"auto"', '5', '2000', '1000']


def _ci_case(r: random.Random, root: Path, files: dict, k: int) -> list[str]:
    cfg = root / f"ci{k}.toml"
    kind = r.random()
    if kind < 0.05:
        cfg.write_bytes(r.choice([b"\xff\xfe[[audit]]", b"a = " + b"[" * 3000 + b"]" * 3000,
                                 b"[[audit]\n", b""]))
    else:
        lines = ["[defaults]", 'runner = "local"', "explore_runs = 1000", "confirm_runs = 2000"]
        for key, val in r.sample([(kk, r.choice(_CI_VALUES)) for kk in _CI_KEYS], r.randint(0, 2)):
            if key in ("confidence", "seed", "runner", "address", "explore_runs", "confirm_runs",
                       "tests", "num_cpus", "chunk_runs", "bogus"):
                lines.append(f"{key} = {val}")
        for _ in range(r.randint(0, 3)):
            entry = {"algorithm": '"dp-rr"'} if r.random() < 0.6 else {}
            for key in r.sample(_CI_KEYS, r.randint(0, 4)):
                entry[key] = r.choice(_CI_VALUES)
            lines += ["[[audit]]"] + [f"{kk} = {vv}" for kk, vv in entry.items()]
        text = "\n".join(lines) + "\n"
        # keep every suite tiny: the defaults' budgets win unless a case sets its own
        cfg.write_text(text.replace("runner = \"ray\"", "runner = \"local\""))
    argv = ["ci", str(cfg)]
    if r.random() < 0.3:
        argv.append("--check")
    if r.random() < 0.3:
        argv += ["--junit", r.choice([str(root / f"j{k}.xml"), str(root / "afile" / "j.xml"),
                                      str(root / "notafile_dir")])]
    if r.random() < 0.2:
        argv += ["--summary", str(root / f"s{k}.md")]
    if r.random() < 0.15:
        argv += ["--baseline", r.choice([str(root / f"b{k}.json"), files["result_ok.json"],
                                         files["pairs_nonutf8.json"]])]
    if r.random() < 0.1:
        argv += ["--address", "auto", "--runner", "local"]
    if r.random() < 0.2:
        argv.append(r.choice(["--json", "--quiet", "--fail-on-regression", "--update-baseline"]))
    if r.random() < 0.1:
        argv += ["--timeout", r.choice(["0", "5", "x"])]
    return argv


def _report_case(r: random.Random, root: Path, files: dict, k: int) -> list[str]:
    src = r.choice([files["result_ok.json"], files["result_nan.json"], files["result_random.json"],
                    files["pairs_deep.json"], files["pairs_nonutf8.json"], files["empty.json"],
                    "/nonexistent.json", str(root)])
    argv = ["report", src]
    flags = ["--md", "--json"] + (["--html"] if r.random() < 0.3 else [])   # HTML costs ~1 s
    for flag in r.sample(flags, r.randint(0, len(flags))):
        argv += [flag, r.choice([str(root / f"r{k}{flag[2:]}"), "-", str(root / "afile" / "x"),
                                 str(root / "notafile_dir")])]
    return argv


def _case(r: random.Random, root: Path, files: dict, k: int) -> list[str]:
    x = r.random()
    if x < 0.6:
        return _audit_case(r, root, files, k)
    if x < 0.85:
        return _ci_case(r, root, files, k)
    if x < 0.995:   # `list` builds every registered algorithm (~0.4 s): a few cases
        return _report_case(r, root, files, k)
    return ["list"] + (["--json"] if r.random() < 0.5 else [])


def _check_outputs(root: Path) -> list[str]:
    problems = []
    for p in root.rglob("*"):
        if p.name.endswith(".tmp"):
            problems.append(f"partial file left: {p}")
        if p.name == "result.json" and p.parent.name.startswith("out"):
            try:
                json.loads(p.read_text())
            except ValueError:
                problems.append(f"unreadable {p}")
            for other in ("report.html", "report.md"):
                if not (p.parent / other).exists():
                    problems.append(f"{p} without {other}")
    if (root / "victim.txt").read_text() != "do not touch\nlast line":
        problems.append("a write went through the symlinked journal")
    return problems


def test_fuzz_cli_and_ci_config(arena, monkeypatch):
    root, files = arena
    monkeypatch.chdir(root)   # --blackbox modules and relative CI paths resolve here
    r = random.Random(SEED)
    codes: dict[int, int] = {}
    failures = []
    slow = []
    t0 = time.perf_counter()
    for k in range(N_CASES):
        argv = _case(r, root, files, k)
        t_case = time.perf_counter()
        with _quiet() as (out, err):
            try:
                code = main(argv)
            except SystemExit as exc:   # argparse: usage errors (2) and --help (0) only
                code = exc.code if isinstance(exc.code, int) else 2
        text = err.getvalue()
        slow.append((time.perf_counter() - t_case, k, argv, code))
        codes[code] = codes.get(code, 0) + 1
        if code not in (0, 1, 2) or "Traceback" in text or len(text.strip().splitlines()) > 12:
            failures.append(f"case {k}: {argv!r} -> exit {code}: {text.strip()[-400:]}")
    failures += _check_outputs(root)
    elapsed = time.perf_counter() - t0
    print(f"fuzz: {N_CASES} cases in {elapsed:.1f} s, exit codes {dict(sorted(codes.items()))}, "
          f"{len(failures)} failures", file=sys.__stderr__)
    if os.environ.get("FUZZ_PROFILE"):
        for t, k, argv, c in sorted(slow, reverse=True)[:10]:
            print(f"{t:.2f}s case {k}: {argv}", file=sys.__stderr__)
        by = {}
        for t, k, argv, c in slow:
            key = (argv[0], c)
            by[key] = (by.get(key, (0, 0))[0] + t, by.get(key, (0, 0))[1] + 1)
        print({k: (round(v[0], 1), v[1]) for k, v in sorted(by.items())}, file=sys.__stderr__)
    assert not failures, "\n".join(failures[:20])
    assert sum(codes.values()) == N_CASES and codes.get(2, 0) > N_CASES // 3
