"""What the core calls but does not own, found by entry point rather than by import.

The core never imports the layers above it (DESIGN.md §2). When `audit_learner` needs a search
for neighbouring datasets and none was passed in (``search=``), it looks up the entry point
``default`` of the group ``privaudit.search``; privaudit's own ``pyproject.toml`` registers
``attacks.search:search`` there, and another package may register its own under another name.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any, Callable

from .errors import PrivauditError

SEARCH_GROUP = "privaudit.search"


def find_search(name: str = "default") -> Callable[..., Any]:
    """The search registered as `name` in the ``privaudit.search`` entry-point group."""
    found = [ep for ep in metadata.entry_points(group=SEARCH_GROUP) if ep.name == name]
    if not found:
        raise PrivauditError(
            f"no search named {name!r} is installed (entry point group {SEARCH_GROUP!r}); "
            f"install privaudit with `pip install .`, or pass pairs= (or search=) explicitly")
    return found[0].load()


__all__ = ["find_search", "SEARCH_GROUP"]
