"""privaudit's core: value types, statistics, the auditor and its runners.

    >>> from audit import Dataset, Claim, audit, audit_learner, AuditResult
"""

from ._version import __version__
from .auditor import Pair, audit, audit_learner
from .budget import Budget
from .errors import BlackBoxError, PrivauditError
from .interfaces import Learner, Mechanism
from .result import AuditResult, BoundTest, Witness
from .types import Claim, Dataset

__all__ = ["Dataset", "Claim", "Learner", "Mechanism", "audit", "audit_learner", "AuditResult",
           "Witness", "BoundTest", "Pair", "Budget", "PrivauditError", "BlackBoxError", "__version__"]
