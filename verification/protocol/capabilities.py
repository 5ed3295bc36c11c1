"""What an implementation declares it supports, so statements skip *instances* outside it and still run the rest.

An implementation (or a sub-adapter) may carry ``capabilities``: a :class:`Capabilities` or a plain dict mapping a
protocol argument name to the values it accepts, e.g. a library that only represents lower-triangular scales::

    capabilities = {"structure": ("tril", "diag"), "estimator": ("energy",)}

Every call the statements make through the protocol is checked against it before it reaches the implementation: a
call with ``structure="sym"`` is then not made, the instance that needed it is counted as skipped for capability
reasons, and the statement goes on with its other instances.  For conditions a value list cannot express (e.g. "the
diagonal of C must be positive"), define ``supports(method, arguments) -> bool | str`` on the implementation: it
receives the dotted method name and the bound arguments (a dict by the protocol's parameter names) and returns True
to accept, or False / a reason string to decline.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping


@dataclasses.dataclass(frozen=True)
class Capabilities:
    """Accepted values per protocol argument name (absent name: every value accepted)."""

    accepts: Mapping[str, tuple[Any, ...]] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, obj) -> "Capabilities":
        """The capabilities declared by ``obj`` (an implementation or sub-adapter); none declared: accept all."""
        raw = getattr(obj, "capabilities", None)
        if raw is None:
            return cls()
        if isinstance(raw, Capabilities):
            return raw
        if isinstance(raw, Mapping):
            return cls({str(k): tuple(v) if isinstance(v, (list, tuple, set, frozenset)) else (v,)
                        for k, v in raw.items()})
        raise TypeError(f"capabilities must be a Capabilities or a dict of argument -> accepted values, "
                        f"got {type(raw).__name__}")

    def declines(self, arguments: Mapping[str, Any]) -> str | None:
        """Why a call with these bound arguments is outside the declared capabilities, or None if it is inside."""
        for name, allowed in self.accepts.items():
            if name in arguments and not _member(arguments[name], allowed):
                return f"{name}={arguments[name]!r} not in declared {list(allowed)}"
        return None


def _member(value, allowed) -> bool:
    try:
        return value in allowed
    except Exception:  # unhashable / array-valued arguments are never declined by a value list
        return True
