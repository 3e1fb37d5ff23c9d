"""pytest plugin (entry point ``pytest11``): privacy assertions inside a user's test suite.

Registers the ``privacy`` marker; the assertion helper itself is `audit.testing.assert_private`.
"""

from __future__ import annotations


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers",
        "privacy: a test that audits a learner or mechanism with audit.testing.assert_private")
