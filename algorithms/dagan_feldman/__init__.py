"""Dagan & Feldman, "PAC learning with stable and private predictions" (COLT 2020): every
learner of the paper, its baselines and planted bugs, registered as ``df-...``."""

from . import em  # noqa: F401  (registration)
from . import sta  # noqa: F401  (registration)
from . import real  # noqa: F401  (registration)
from . import baselines  # noqa: F401  (registration)
from . import pp2  # noqa: F401  (registration)
