"""The benchmark mechanisms of the DP-auditing literature (StatDP, CCS 2018; DP-Sniper, S&P 2021),
registered as ``lit-...``: each states its claim, its true epsilon with the reference for it, and
carries StatDP's / DP-Sniper's input patterns as default pairs. Mechanisms that are not private as
published expect ``violation`` for their own name (``algorithms.info(name)["expect"]["correct"]``).
"""

from . import basic, floating, histogram, noisy_max, rappor, svt  # noqa: F401  (registration)
