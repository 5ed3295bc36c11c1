"""refvi as the implementation under test: the seed 000/002 methods plus the boosting, online and NGVI
sub-adapters.  The runner recognises it by object identity (:func:`is_refvi`), never by its name."""

from __future__ import annotations

import functools

from refvi.verification.protocol.refvi_core import RefviCore


class RefviImplementation(RefviCore):
    """refvi itself.  Sub-adapters are created on first use (importing them loads refvi's subsystems)."""

    name = "refvi"

    @functools.cached_property
    def boosting(self):
        from refvi.verification.protocol.refvi_boosting import RefviBoosting

        return RefviBoosting()

    @property
    def online(self):
        from refvi.verification.protocol.refvi_online import RefviOnline

        return RefviOnline()

    @property
    def ngvi(self):
        from refvi.verification.protocol.refvi_ngvi import RefviNGVI

        return RefviNGVI()


REFVI = RefviImplementation()


def is_refvi(impl) -> bool:
    """True for refvi's own implementation object (identity, so an outside adapter named "refvi" is not it)."""
    from refvi.verification.protocol.recorder import Recorder

    if isinstance(impl, Recorder):
        impl = impl.wrapped
    return impl is REFVI
