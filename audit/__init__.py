"""privaudit's core: value types, statistics, the auditor and its runners.

    >>> from audit import Dataset, Claim, audit, audit_learner, AuditResult
"""

from .errors import BlackBoxError, PrivauditError
from .result import AuditResult, BoundTest, Witness
from .interfaces import Learner, Mechanism
from .types import Claim, Dataset

__version__ = "0.1.0"


def __getattr__(name: str):
    # The auditor pulls in scipy; keep `import audit` light for the CLI's fast paths.
    if name in ("audit", "audit_learner", "Pair"):
        from . import auditor
        return getattr(auditor, name)
    raise AttributeError(f"module 'audit' has no attribute {name!r}")


__all__ = ["Dataset", "Claim", "Learner", "Mechanism", "audit", "audit_learner", "AuditResult",
           "Witness", "BoundTest", "Pair", "PrivauditError", "BlackBoxError", "__version__"]
