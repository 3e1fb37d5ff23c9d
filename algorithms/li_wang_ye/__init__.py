"""Li, Wang & Ye, label-private / private-prediction transformations: every learner of the paper
and its planted bugs, registered as ``lwy-...``."""

from . import learners  # noqa: F401  (registration)
from . import extra  # noqa: F401  (registration)
