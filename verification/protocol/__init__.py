"""The contract between the statements and an implementation under test: one protocol per paper.

=================  ==========================  ==================================================================
where              protocol                    what
=================  ==========================  ==================================================================
top level          :class:`Implementation`     seeds 000 / 002: estimators, prox, projections, constants, optimizers
``impl.boosting``  :class:`BoostingProtocol`   seed 001: atoms, Frank-Wolfe, LMOs, step rules, corrective variants
``impl.online``    :class:`OnlineProtocol`     seed 003: EWA, SVA, SVB, online NGVI, OGA, OGA-EL, expected losses
``impl.ngvi``      :class:`NGVIProtocol`       seed 004: exponential-family maps, NGD, stochastic NGVI, estimators
=================  ==========================  ==================================================================

An implementation implements any subset: each statement declares the dotted methods it uses (``energy``,
``online.run``); a missing one makes that statement ``skip`` naming it.  Instances handed to an implementation are
plain data (arrays, callables and the records defined here), and results are plain arrays or records.  Optional
``capabilities`` (:mod:`.capabilities`) let an implementation decline instances it cannot represent.

refvi's own implementation is :data:`REFVI` (:mod:`.refvi_impl`); a complete outside example that imports nothing of
refvi is ``refvi.verification.examples.numpy_adapter``.  See ``docs/conformance.md``.
"""

from __future__ import annotations

from refvi.verification.protocol.boosting import BoostingProtocol
from refvi.verification.protocol.capabilities import Capabilities
from refvi.verification.protocol.core import METHODS as CORE_METHODS
from refvi.verification.protocol.core import Implementation
from refvi.verification.protocol.ngvi import NGVIProtocol
from refvi.verification.protocol.online import OnlineProtocol
from refvi.verification.protocol.recorder import InstanceSkipped, MissingMethod, Recorder

#: sub-adapter attribute -> its protocol class
SUBPROTOCOLS: dict[str, type] = {"boosting": BoostingProtocol, "online": OnlineProtocol, "ngvi": NGVIProtocol}


def protocol_methods(top_level: bool = False) -> tuple[str, ...]:
    """Every protocol method by dotted name (``energy``, ``boosting.frank_wolfe``, ...); ``top_level``: seed 000/002
    methods only."""
    from refvi.verification.protocol import boosting, ngvi, online

    out = list(CORE_METHODS)
    if not top_level:
        for attr, mod in (("boosting", boosting), ("online", online), ("ngvi", ngvi)):
            out += [f"{attr}.{m}" for m in mod.METHODS]
    return tuple(out)


def recording(impl, calls: dict[str, int], log: list | None = None, ledger=None) -> Recorder:
    """The view of ``impl`` a statement receives (counts calls into ``calls``, keeps the last ones with their
    arguments and results in ``log``, marks what comes back as reported in ``ledger``, enforces capabilities)."""
    return Recorder(impl, Implementation, calls, "", SUBPROTOCOLS, log=log, ledger=ledger)


def __getattr__(name):  # REFVI, is_refvi and load_implementation import refvi's subsystems lazily
    if name in ("REFVI", "RefviImplementation", "is_refvi"):
        from refvi.verification.protocol import refvi_impl

        return getattr(refvi_impl, name)
    if name in ("load_implementation", "ImplementationSpecError"):
        from refvi.verification.protocol import loading

        return getattr(loading, name)
    raise AttributeError(name)


__all__ = [
    "Implementation",
    "BoostingProtocol",
    "OnlineProtocol",
    "NGVIProtocol",
    "Capabilities",
    "SUBPROTOCOLS",
    "CORE_METHODS",
    "protocol_methods",
    "recording",
    "Recorder",
    "MissingMethod",
    "InstanceSkipped",
    "REFVI",
    "RefviImplementation",
    "is_refvi",
    "load_implementation",
    "ImplementationSpecError",
]
