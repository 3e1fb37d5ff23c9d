"""A coin-flip black box written to a module file, for tests of what the command line does when
the black box misbehaves (`{body}` is its misbehaviour, run at the start of every `sample`)."""

from __future__ import annotations

from pathlib import Path

# a fast local audit: small budgets, no progress output
FAST = ["--runner", "local", "--quiet", "--runs", "2000", "--explore-runs", "1000"]

COIN = '''
import numpy as np
from audit import Claim

class Coin:
    name = "coin"
    claim = Claim(1.0)
    pairs = [[[0], [1]]]
    def sample(self, inp, runs, rng):
        {body}
        return rng.integers(0, 2, size=runs)

coin = Coin()
'''


def coin_module(tmp_path: Path, name: str, body: str, prelude: str = "") -> str:
    """Write `name`.py into `tmp_path`; returns its ``--blackbox`` spec, ``name:coin``."""
    (tmp_path / f"{name}.py").write_text(prelude + COIN.format(body=body))
    return f"{name}:coin"
