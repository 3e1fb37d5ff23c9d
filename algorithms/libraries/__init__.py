"""Adapters for real DP libraries (``pip install 'privaudit[libs]'``), registered
``lib-<library>-<mechanism>``: IBM's diffprivlib, OpenDP and Google's library through PyDP. Each
states the claim its library documents, its input domain and neighbour relation, and default
adversarial inputs; without the extra (or with an untested version) they are listed as
unavailable with the reason.
"""

from . import diffprivlib_adapters, opendp_adapters, pydp_adapters  # noqa: F401  (registration)
