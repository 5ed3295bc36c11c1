"""The view of an implementation that statements see: records every protocol call, enforces capabilities, and
turns a missing method (top level or inside a sub-adapter) into a skip naming it.

Statements receive ``ctx.impl``, a :class:`Recorder` around the implementation under test.  Attribute access goes
through to the implementation; a protocol method is wrapped so that

* the call is recorded by its dotted name (``energy``, ``online.run``), which the certificate reports per statement
  (``methods``) and which decides whether a statement exercised the implementation at all (``scope``);
* arguments outside the declared :class:`~.capabilities.Capabilities` (or declined by ``supports``) raise
  :class:`InstanceSkipped` *before* the call, so the statement skips that instance only;
* a method the object does not have raises :class:`MissingMethod` naming it (that instance, or the statement, is
  declined), while an exception raised *inside* a method propagates unchanged (an error);
* the last calls are kept in ``log`` (method, bound arguments, what came back or what was raised), so a failing check
  names the protocol call that produced it (:mod:`refvi.verification.certificate.reproducers`);
* with a ``ledger`` (:class:`~refvi.verification.statement.provenance.ledger.Ledger`), what comes back is *marked* as
  reported, one token per call and field, and the arguments passed in are stripped of marks: the implementation
  receives plain values, the statement can tell which of its values came from the implementation and whether it
  checked them.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import numpy as np

#: calls kept in a recorder's log (the statement clears it at each instance; the failing call is among the last)
LOG_LENGTH = 8
#: arrays larger than this are not copied into the log (their shape is kept)
LOG_MAX_ELEMENTS = 2_000_000


class MissingMethod(Exception):
    """The implementation under test lacks a protocol method (or sub-adapter) a statement needs: the instance that
    called it is declined (the statement is a ``skip`` when nothing else ran).  ``optional``: the method is an
    optional feature (``capabilities.OPTIONAL_METHODS``)."""

    def __init__(self, message: str, optional: bool = False):
        super().__init__(message)
        self.optional = optional


class InstanceSkipped(Exception):
    """One instance needs a call outside the implementation's declared capabilities: that instance is declined.
    ``optional``: the declined argument is an optional feature (``capabilities.OPTIONAL_ARGUMENTS``)."""

    def __init__(self, message: str, optional: bool = False):
        super().__init__(message)
        self.optional = optional


def _absent(obj, attr: str, exc: AttributeError) -> bool:
    """Whether ``exc``, raised looking up ``attr`` on ``obj``, means that ``obj`` has no ``attr``: not when the class
    defines it (a property that failed inside is a bug of the implementation, not a missing method), nor when the
    error is about another object."""
    if getattr(exc, "obj", obj) is not obj:
        return False
    return attr not in getattr(obj, "__dict__", {}) and not any(attr in vars(k) for k in type(obj).__mro__)


class Recorder:
    """Wraps an implementation (or a sub-adapter, with ``prefix`` set) for one statement run."""

    def __init__(
        self,
        obj: Any,
        protocol: type | None,
        calls: dict[str, int],
        prefix: str = "",
        subprotocols: dict[str, type] | None = None,
        supports=None,
        log: list | None = None,
        ledger=None,
    ):
        from refvi.verification.protocol.capabilities import Capabilities

        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_protocol", protocol)
        object.__setattr__(self, "_calls", calls)
        object.__setattr__(self, "_prefix", prefix)
        object.__setattr__(self, "_sub", subprotocols or {})
        object.__setattr__(self, "_caps", Capabilities.of(obj))
        object.__setattr__(self, "_supports", supports if supports is not None else getattr(obj, "supports", None))
        object.__setattr__(self, "_log", log)
        object.__setattr__(self, "_ledger", ledger)

    @property
    def wrapped(self) -> Any:
        """The implementation object itself (for identity checks; calls through it are not recorded)."""
        return self._obj

    def __getattr__(self, attr: str):
        dotted = self._prefix + attr
        if attr in self._sub:
            try:
                sub = getattr(self._obj, attr)
            except AttributeError as exc:
                if _absent(self._obj, attr, exc):
                    raise MissingMethod(
                        f"sub-adapter {dotted!r} ({self._sub[attr].__name__}, see refvi.verification.protocol)"
                    ) from None
                raise
            if sub is None:
                raise MissingMethod(f"sub-adapter {dotted!r} ({self._sub[attr].__name__})")
            return Recorder(
                sub,
                self._sub[attr],
                self._calls,
                dotted + ".",
                None,
                getattr(sub, "supports", None) or self._supports,
                self._log,
                self._ledger,
            )
        spec = getattr(self._protocol, attr, None) if self._protocol is not None else None
        if spec is None or not callable(spec):
            return getattr(self._obj, attr)  # plain attributes (name, capabilities, ...) pass through
        from refvi.verification.protocol.capabilities import is_optional

        try:
            fn = getattr(self._obj, attr)
        except AttributeError as exc:
            if _absent(self._obj, attr, exc):
                raise MissingMethod(f"method {dotted!r}", is_optional(dotted)) from None
            raise
        if fn is None:
            raise MissingMethod(f"method {dotted!r}", is_optional(dotted))
        return self._wrap(dotted, spec, fn)

    def __setattr__(self, attr, value):
        raise AttributeError("the implementation under test is read-only to statements")

    def _wrap(self, dotted: str, spec, fn):
        sig = _signature(spec)

        from refvi.verification.protocol.capabilities import is_optional

        ledger = self._ledger
        from refvi.verification.statement.provenance import plain

        @functools.wraps(fn)
        def call(*args, **kwargs):
            if ledger is not None:  # the implementation receives plain values, never marked ones
                args, kwargs = plain(args), plain(kwargs)
            arguments = _bind(sig, args, kwargs)
            found = self._caps.declined(arguments)
            name, reason = found if found is not None else (None, None)
            if reason is None and self._supports is not None:
                verdict = self._supports(dotted, arguments)
                if verdict is not True and verdict is not None:
                    reason = verdict if isinstance(verdict, str) else "declined by supports()"
                    # supports() declining a call that carries a frame is taken as declining frames
                    name = "frame" if arguments.get("frame") is not None else None
            if reason is not None:
                raise InstanceSkipped(f"{dotted}: {reason}", is_optional(dotted, name))
            self._calls[dotted] = self._calls.get(dotted, 0) + 1
            log = self._log
            if log is None:
                out = fn(*args, **kwargs)
                return out if ledger is None else ledger.mark(out, ledger.call(dotted))
            entry = {"method": dotted, "arguments": {k: snapshot(v) for k, v in arguments.items()}}
            if len(log) >= LOG_LENGTH:
                del log[0]
            log.append(entry)
            try:
                out = fn(*args, **kwargs)
            except BaseException as exc:
                entry["raised"] = f"{type(exc).__name__}: {exc}"[:500]
                raise
            entry["returned"] = snapshot(out)
            return out if ledger is None else ledger.mark(out, ledger.call(dotted))

        return call


def snapshot(value):
    """A copy of a call's argument or result for the log: arrays copied (unless huge), containers copied one level
    deep, anything else by reference."""
    if isinstance(value, np.ndarray):
        return value.copy() if value.size <= LOG_MAX_ELEMENTS else f"<array {value.shape} not kept>"
    if isinstance(value, tuple):
        return tuple(snapshot(v) for v in value)
    if isinstance(value, list):
        return [snapshot(v) for v in value]
    return value


@functools.cache
def _signature(spec) -> inspect.Signature | None:
    try:
        sig = inspect.signature(spec)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if params and params[0].name == "self":
        sig = sig.replace(parameters=params[1:])
    return sig


@functools.cache
def _simple_parameters(sig: inspect.Signature) -> tuple[tuple[str, Any], ...] | None:
    """(name, default) of each parameter when all are plain positional-or-keyword ones (the protocol's methods), so
    that :func:`_bind` can map a call without ``inspect``; None otherwise."""
    params = sig.parameters.values()
    if any(p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params):
        return None
    return tuple((p.name, p.default) for p in params)


def _bind(sig: inspect.Signature | None, args, kwargs) -> dict[str, Any]:
    """The call's arguments by name, defaults filled in, in the signature's order (``inspect``'s ``bind_partial``
    and ``apply_defaults``); a call that does not fit the signature gives its keyword arguments only."""
    if sig is None:
        return dict(kwargs)
    simple = _simple_parameters(sig)
    if simple is not None and len(args) <= len(simple) and all(k in sig.parameters for k in kwargs):
        out: dict[str, Any] = {}
        for i, (name, default) in enumerate(simple):
            if i < len(args):
                if name in kwargs:  # given twice: a TypeError for bind_partial
                    return dict(kwargs)
                out[name] = args[i]
            elif name in kwargs:
                out[name] = kwargs[name]
            elif default is not inspect.Parameter.empty:
                out[name] = default
        return out
    return _bind_by_inspect(sig, args, kwargs)


def _bind_by_inspect(sig: inspect.Signature, args, kwargs) -> dict[str, Any]:
    """:func:`_bind` for any signature, through ``inspect`` (the definition its fast path must agree with)."""
    try:
        bound = sig.bind_partial(*args, **kwargs)
    except TypeError:
        return dict(kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)
