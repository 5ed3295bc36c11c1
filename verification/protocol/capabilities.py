"""What an implementation declares it supports, so statements skip *instances* outside it and still run the rest.

An implementation (or a sub-adapter) may carry ``capabilities``: a :class:`Capabilities` or a plain dict.  Three kinds
of entry:

* a protocol argument name mapped to the values it accepts, e.g. a library that only represents lower-triangular
  scales and has no affine frames::

      capabilities = {"structure": ("tril", "diag"), "frame": (None,)}

* ``"targets"``: the target kinds (``TargetSpec.kind``: ``gaussian``, ``linear``, ``logistic``,
  ``hierarchical_logistic``, ``cosine``, ``callable``) it can evaluate; a call handed a target of another kind is
  declined, whatever the argument's name::

      capabilities = {"targets": ("gaussian", "linear", "logistic")}

* ``"refusals"``: the exception classes by which it refuses bad input, besides the protocol's ``ValueError`` and
  ``TypeError`` (:data:`PROTOCOL_REFUSALS`), e.g. ``{"refusals": (FloatingPointError, mylib.DivergenceError)}``.

Every call the statements make through the protocol is checked against it before it reaches the implementation: a
call with ``structure="sym"`` is then not made, the instance that needed it is counted as declined (with the reason),
and the statement goes on with its other instances.  For conditions these entries cannot express (e.g. "the
diagonal of C must be positive"), define ``supports(method, arguments) -> bool | str`` on the implementation: it
receives the dotted method name and the bound arguments (a dict by the protocol's parameter names) and returns True
to accept, or False / a reason string to decline.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

#: the exception classes that count as refusing bad input for every implementation (docs/conformance.md)
PROTOCOL_REFUSALS: tuple[type[BaseException], ...] = (ValueError, TypeError)

#: keys of a capabilities dict that are not protocol argument names
SPECIAL_KEYS = ("targets", "refusals")

#: optional protocol features: refvi's affine frames (preconditioning, not a paper result), its driver called with
#: its own defaults (``fit_as_user``) and its fit diagnostics (``fit_diagnostics``).  Instances declined for them (the
#: methods absent, or a ``frame`` argument declined) are counted and listed, but never count against a paper's
#: certification (:mod:`refvi.verification.certificate.coverage`)
OPTIONAL_METHODS = ("frame", "framed_energy", "framed_prox_sgd", "fit_as_user", "fit_diagnostics")
OPTIONAL_ARGUMENTS = ("frame",)


def is_optional(dotted: str, declined_argument: str | None = None) -> bool:
    """Whether declining a call of ``dotted`` (for ``declined_argument``) concerns an optional feature only."""
    return dotted.rpartition(".")[2] in OPTIONAL_METHODS or declined_argument in OPTIONAL_ARGUMENTS


@dataclasses.dataclass(frozen=True)
class Capabilities:
    """Accepted values per protocol argument name (absent name: every value accepted), accepted target kinds (None:
    all) and the implementation's own refusal exception classes."""

    accepts: Mapping[str, tuple[Any, ...]] = dataclasses.field(default_factory=dict)
    targets: tuple[str, ...] | None = None
    refusals: tuple[type[BaseException], ...] = ()

    @classmethod
    def of(cls, obj) -> Capabilities:
        """The capabilities declared by ``obj`` (an implementation or sub-adapter); none declared: accept all."""
        raw = getattr(obj, "capabilities", None)
        if raw is None:
            return cls()
        if isinstance(raw, Capabilities):
            return raw
        if not isinstance(raw, Mapping):
            raise TypeError(
                f"capabilities must be a Capabilities or a dict of argument -> accepted values, "
                f"got {type(raw).__name__}"
            )
        accepts = {str(k): _as_tuple(v) for k, v in raw.items() if k not in SPECIAL_KEYS}
        targets = None if raw.get("targets") is None else tuple(str(t) for t in _as_tuple(raw["targets"]))
        refusals = _as_tuple(raw.get("refusals", ()))
        bad = [r for r in refusals if not (isinstance(r, type) and issubclass(r, BaseException))]
        if bad:
            raise TypeError(f"capabilities['refusals'] must hold exception classes, got {bad!r}")
        return cls(accepts, targets, tuple(refusals))

    def declines(self, arguments: Mapping[str, Any]) -> str | None:
        """Why a call with these bound arguments is outside the declared capabilities, or None if it is inside."""
        found = self.declined(arguments)
        return None if found is None else found[1]

    def declined(self, arguments: Mapping[str, Any]) -> tuple[str, str] | None:
        """(the argument declined, why) for a call outside the declared capabilities, or None if it is inside."""
        for name, allowed in self.accepts.items():
            if name in arguments and not _member(arguments[name], allowed):
                return name, f"{name}={_short(arguments[name])} not in declared {list(allowed)}"
        if self.targets is not None:
            for name, value in arguments.items():
                kind = _target_kind(value)
                if kind is not None and kind not in self.targets:
                    return name, f"{name}: target kind {kind!r} not in declared targets {list(self.targets)}"
        return None


def _as_tuple(v) -> tuple:
    return tuple(v) if isinstance(v, (list, tuple, set, frozenset)) else (v,)


def _target_kind(value) -> str | None:
    """The kind of a protocol target record (anything with string ``kind``, integer ``dim`` and ``params``)."""
    kind = getattr(value, "kind", None) if hasattr(value, "params") and hasattr(value, "dim") else None
    return kind if isinstance(kind, str) else None


def _short(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _member(value, allowed) -> bool:
    try:
        return value in allowed
    except Exception:  # unhashable / array-valued arguments are never declined by a value list
        return True
