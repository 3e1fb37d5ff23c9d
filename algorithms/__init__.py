"""Every algorithm privaudit can audit, as a runnable black box, and the registry.

    >>> import algorithms
    >>> algorithms.names()            # every registered algorithm
    >>> learner = algorithms.get("df-cor1", epsilon=1.0)
    >>> algorithms.info("df-cor1")    # paper, section, claim, parameters, variants

Registered names are the lower-case spec IDs with their paper prefix (``df-…`` Dagan & Feldman);
building blocks (randomized response, Laplace, Gaussian, exponential mechanism) are ``dp-…``.
Planted bugs are chosen with ``variant="bv-…"``; ``variant="correct"`` is the default.
"""

from .registry import Spec, coerce_params, get, info, names, register, spec

# Importing a module registers its algorithms.
from . import building_blocks  # noqa: F401,E402  (registration, one subpackage per paper)
from . import li_wang_ye  # noqa: F401,E402
from . import dagan_feldman  # noqa: F401,E402
from . import chaudhuri_hsu  # noqa: F401,E402
from . import bun_livni_moran  # noqa: F401,E402
from . import literature  # noqa: F401,E402
from . import libraries  # noqa: F401,E402

__all__ = ["names", "get", "info", "register", "spec", "Spec", "coerce_params"]
