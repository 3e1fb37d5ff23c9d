"""Variant tables: the planted bugs of a learner written once, as rows next to the learner.

A learner's variants (``"correct"``, the spec's planted bugs ``bv-…``/``brk-…``/``v…``, the
negative controls ``nc-…``/``fp-…``) are the rows of one table: a dict from the variant id to a
frozen dataclass holding

* ``says``: one line saying what the variant is, and for a bug **what bug it plants** (the
  registry's ``variants=`` is derived from the table with `describe`, so it is written once);
* the constants the variant changes (a noise scale, a temperature, a fraction, a count), with
  the published values as defaults, so a constant-change bug is a row, not a branch;
* for a behavioural bug, the small named function it swaps in (a field holding a function, or a
  flag naming one), so the learner's body calls ``self.row.<field>`` instead of testing the id.

    @dataclass(frozen=True)
    class EMRow(Row):
        divisor: float = 2.0          # weights exp(-eps err / divisor)

    EM_TABLE = {"correct": EMRow("as published"),
                "bv-em-1": EMRow("BUG: the /2 forgotten", divisor=1.0)}
    EM_VARIANTS = describe(EM_TABLE)  # -> register(..., variants=EM_VARIANTS)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, TypeVar

from audit.errors import PrivauditError


@dataclass(frozen=True)
class Row:
    """One variant of a learner; subclasses add the constants and functions it sets."""

    says: str


R = TypeVar("R", bound=Row)


def describe(table: Mapping[str, Row]) -> dict[str, str]:
    """The registry's ``variants=`` (id -> one line) of a variant table, in the table's order."""
    return {k: r.says for k, r in table.items()}


def row_of(table: Mapping[str, R], variant: str, who: str = "variant") -> R:
    """The row of `variant`; a PrivauditError naming the valid ids for an unknown one."""
    if not isinstance(variant, str) or variant not in table:
        raise PrivauditError(f"{who}: unknown variant {variant!r}; valid: {', '.join(table)}")
    return table[variant]


__all__ = ["Row", "describe", "row_of"]
