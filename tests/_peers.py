"""An optional peer library (JAX, NumPyro, BlackJAX, PyMC) in a test: a skip without it, a failure under
``REFVI_REQUIRE_PEERS=1``, which ``.ci/run`` sets after installing the ``peers`` extra."""

import importlib
import os

import pytest

REQUIRED = os.environ.get("REFVI_REQUIRE_PEERS") == "1"


def need(module: str, reason: str | None = None):
    """The imported ``module``; without it, a skip (or, when required, the ImportError: a failure)."""
    if REQUIRED:
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=reason)
