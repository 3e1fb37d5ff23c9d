"""Exceptions raised for bad input.

Every user-facing error is a subclass of `ValueError` so that callers who catch ``ValueError``
(the DESIGN contract for unknown algorithm names and parameters) keep working, while the CLI can
tell bad input (exit code 2) from a bug (a traceback).
"""

from __future__ import annotations


class PrivauditError(ValueError):
    """Bad input: a wrong shape, an invalid claim, an unknown name, an unreadable file."""


class BlackBoxError(PrivauditError):
    """The audited black box raised, or returned something that is not a valid output."""
