"""Compatibility names: the protocol now lives in :mod:`refvi.verification.protocol` (one module per paper)."""

from refvi.verification.protocol import CORE_METHODS as METHODS  # noqa: F401
from refvi.verification.protocol import Implementation  # noqa: F401
from refvi.verification.protocol.loading import load_implementation  # noqa: F401
from refvi.verification.protocol.refvi_impl import REFVI, RefviImplementation  # noqa: F401
