"""Chaudhuri & Hsu, "Sample complexity bounds for differentially private learning" (COLT 2011):
the learners, covers and planted bugs, registered as ``ch-...``."""

from . import learners  # noqa: F401  (registration)
