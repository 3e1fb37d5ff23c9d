"""Attacks: neighbour relations, adversarial dataset families, query-point and event search.

`search(learner, data=..., claim=..., ...)` is what `audit.audit_learner` calls when it has no
pairs (or when ``search_options`` forces a search): it returns a `SearchOutcome` whose ``pairs``
the core explores again and confirms, and whose ``info`` becomes ``AuditResult.search``.

    >>> from attacks import search, neighbours, families
"""

from . import domain, families, neighbours, queries
from .domain import Domain, learner_domain
from .mechanisms import mechanism_pairs
from .search import STRATEGIES, SearchOutcome, search
from .trial import Trial

__all__ = ["search", "SearchOutcome", "STRATEGIES", "Domain", "learner_domain", "Trial",
           "mechanism_pairs",
           "neighbours", "families", "queries", "domain"]
