"""Which values a statement took from the implementation under test, and which of them it checked.

Every value a protocol method returns is *reported*: the recorder (:mod:`.protocol.recorder`) hands the statement
a marked copy -- arrays as :class:`Reported` (a NumPy subclass), floats, ints and bools as :class:`ReportedFloat`,
:class:`ReportedInt`, :class:`ReportedBool`, records as :class:`ReportedRecord` (reading a field marks it) -- with a
*token* per call, field and row (index along the first axis: ``run.f[t]`` is its own value).  Marks survive NumPy
arithmetic and functions (``__array_ufunc__`` / ``__array_function__``), Python arithmetic on the scalars, the
oracles (:func:`pass_marks_through`), and inside the statement modules ``np.asarray`` / ``np.array``, ``math``
functions, :func:`scalar` (the statements' ``float``) and arrays filled element by element (:func:`instrument`).
The implementation itself always receives plain values.

Evidence (:class:`~refvi.verification.statement.Context`) tells the :class:`Ledger` what it did with marked values:

* a passing **comparison** (``close``, ``mean_close``, ``equal``) *checks* one side's tokens once every token of the
  other side is checked (or the other side carries none: an oracle, a closed form, an input).  Two sides with rows
  of the same length are compared row by row, so a recurrence checks by induction: ``close(W[1:], [step(W[t], g[t])
  for t in ...])`` checks ``W[t+1]`` once ``W[t]`` and ``g[t]`` are;
* a **use** (``bound``, ``leq``, ``geq``, ``mean_leq``, ``decay``, ``true``) takes its sides' values as true.

At the end of the statement the ledger closes the comparisons (a fixpoint) and reports, per protocol method, how
many calls were *value-checked* (a returned value compared with an oracle or a recomputation from checked values),
*used only* (a returned value reached evidence unchecked) or neither, and every use of an unchecked value
(*trusted*: the method, the field and the check's label).  ``ctx.given(value, why)`` declares a reported value an
input of the claim (the paper's statement is about that value itself); it is then neither checked nor trusted, and
the reason is listed.  refvi's own tests require that no statement trusts a value.

A mark is lost where a value leaves NumPy and Python arithmetic (``builtins.float``, a compiled extension): a lost
mark can hide a use, never invent a check.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import operator
import types
from collections import defaultdict
from typing import Any

import numpy as np

EMPTY: frozenset[int] = frozenset()
Rows = tuple[frozenset[int], ...]

#: arrays with more rows than this get one token for the whole array
ROW_LIMIT = 100_000

# ------------------------------------------------------------------------------------------------------------------
# marked values
# ------------------------------------------------------------------------------------------------------------------


class Reported(np.ndarray):
    """An array returned by the implementation under test, or computed from one.  ``marks``: every token it carries;
    ``rows``: the tokens of each index along the first axis, when it is (a slice of) a reported array."""

    marks: frozenset[int]
    rows: Rows | None

    def __array_finalize__(self, obj):
        self.marks = getattr(obj, "marks", EMPTY)
        self.rows = None

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        found = marks_of(inputs) | marks_of(kwargs.get("out", ()))
        if "out" in kwargs:
            kwargs["out"] = tuple(plain(o) for o in kwargs["out"])
        return tag(getattr(ufunc, method)(*(plain(x) for x in inputs), **kwargs), found)

    def __array_function__(self, func, types, args, kwargs):
        return tag(func(*plain(args), **plain(kwargs)), marks_of(args) | marks_of(kwargs))

    def __getitem__(self, key):
        out = super().__getitem__(key)
        found, part = self.marks, None
        if self.rows is not None:
            found, part = _index_rows(self, key)
        if not isinstance(out, Reported):
            return tag(out, found)
        out.marks = found
        if part is not None and out.ndim >= 1 and out.shape[0] == len(part):
            out.rows = part
        return out

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __reduce_ex__(self, protocol):  # pickled (a Dask worker, a reproducer) as a plain array
        return self.view(np.ndarray).__reduce_ex__(protocol)


def _index_rows(array: Reported, key) -> tuple[frozenset[int], Rows | None]:
    """The marks of ``array[key]`` and its rows, from the rows of ``array``."""
    rows = array.rows
    assert rows is not None
    first = key[0] if isinstance(key, tuple) and key else key
    if isinstance(first, int | np.integer):
        return rows[int(first)], None
    if isinstance(first, slice):
        part = tuple(rows[first])
        return _union(part), part
    if first is Ellipsis and not (isinstance(key, tuple) and len(key) > 1):
        return array.marks, rows
    if first is not Ellipsis and first is not None:
        index = np.asarray(plain(first))
        if index.dtype == bool and index.ndim == 1 and index.size == len(rows):
            part = tuple(r for r, keep in zip(rows, index, strict=True) if keep)
            return _union(part), part
        if index.dtype.kind in "iu" and index.ndim == 1:
            part = tuple(rows[int(i)] for i in index)
            return _union(part), part
    return array.marks, None


def _union(sets) -> frozenset[int]:
    return frozenset().union(*sets) if sets else EMPTY


def _binary(op, reflected: bool = False):
    def method(self, other):
        a, b = (other, self) if reflected else (self, other)
        result = op(plain(a), plain(b))
        if result is NotImplemented:
            return result
        return tag(result, self.marks | marks_of(other))

    return method


def _unary(op):
    def method(self):
        return tag(op(plain(self)), self.marks)

    return method


class _Scalar:
    """Arithmetic of a marked Python scalar: every result carries the union of the operands' marks."""

    marks: frozenset[int] = EMPTY
    __array_priority__ = 1000

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        found = marks_of(inputs) | marks_of(kwargs.get("out", ()))
        if "out" in kwargs:
            kwargs["out"] = tuple(plain(o) for o in kwargs["out"])
        return tag(getattr(ufunc, method)(*(plain(x) for x in inputs), **kwargs), found)

    def __array_function__(self, func, types, args, kwargs):
        return tag(func(*plain(args), **plain(kwargs)), marks_of(args) | marks_of(kwargs))


_BINARY: dict[str, Any] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "pow": operator.pow,
}
_UNARY: dict[str, Any] = {"neg": operator.neg, "pos": operator.pos, "abs": operator.abs}
for _name, _op in _BINARY.items():
    setattr(_Scalar, f"__{_name}__", _binary(_op))
    setattr(_Scalar, f"__r{_name}__", _binary(_op, reflected=True))
for _name, _op in _UNARY.items():
    setattr(_Scalar, f"__{_name}__", _unary(_op))


class ReportedFloat(_Scalar, float):
    """A float returned by the implementation under test (or computed from one)."""

    def __new__(cls, value, marks: frozenset[int] = EMPTY):
        out = float.__new__(cls, value)
        out.marks = marks
        return out

    def __reduce__(self):
        return (float, (float.__float__(self),))


class ReportedInt(_Scalar, int):
    """An int returned by the implementation under test (an atom index, a count)."""

    def __new__(cls, value, marks: frozenset[int] = EMPTY):
        out = int.__new__(cls, value)
        out.marks = marks
        return out

    def __reduce__(self):
        return (int, (int.__int__(self),))


class ReportedBool:
    """A bool returned by the implementation under test (``bool`` cannot be subclassed): truthy as its value and
    equal to it; a statement checks it with ``ctx.equal``."""

    __slots__ = ("value", "marks")

    def __init__(self, value, marks: frozenset[int] = EMPTY):
        self.value = bool(value)
        self.marks = marks

    def __bool__(self):
        return self.value

    def __eq__(self, other):
        return self.value == plain(other)

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return repr(self.value)

    def __reduce__(self):
        return (bool, (self.value,))


class ReportedRecord:
    """A record (a dataclass, a namespace, any object with fields) returned by the implementation: reading a field
    returns it marked with tokens of its own; a method of the record (``run.sample(...)``) returns marked values."""

    __slots__ = ("_obj", "_ledger", "_call", "_path", "_fields")

    def __init__(self, obj, ledger: Ledger, call: int, path: str):
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_ledger", ledger)
        object.__setattr__(self, "_call", call)
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_fields", {})

    def __getattr__(self, attr):
        fields = self._fields
        if attr not in fields:
            value = getattr(self._obj, attr)
            path = f"{self._path}.{attr}" if self._path else attr
            if callable(value) and not isinstance(value, type):
                fields[attr] = _reported_method(value, self._ledger, self._call, f"{path}()")
            else:
                fields[attr] = self._ledger.mark(value, self._call, path)
        return fields[attr]

    def __setattr__(self, attr, value):
        raise AttributeError("a reported record is read-only")

    def __getitem__(self, key):
        return self._ledger.mark(self._obj[key], self._call, f"{self._path}[{key!r}]")

    def __len__(self):
        return len(self._obj)

    def __iter__(self):
        for i, v in enumerate(self._obj):
            yield self._ledger.mark(v, self._call, f"{self._path}[{i}]")

    def __repr__(self):
        return f"reported({self._obj!r})"

    def __reduce__(self):
        return (_identity, (self._obj,))

    @property
    def unwrapped(self):
        """The implementation's own record."""
        return self._obj


def _identity(obj):
    return obj


def _reported_method(fn, ledger: Ledger, call: int, path: str):
    def wrapped(*args, **kwargs):
        return ledger.mark(fn(*plain(args), **plain(kwargs)), call, path)

    return wrapped


def tag(value, found: frozenset[int]):
    """``value`` carrying the marks ``found`` (arrays, NumPy and Python numbers, and containers of them; anything
    else, bools included, as it is)."""
    if not found:
        return value
    if isinstance(value, np.ndarray):
        out = value.view(Reported)
        out.marks = found
        return out
    if isinstance(value, bool | np.bool_):
        return value
    if isinstance(value, float | np.floating):
        return ReportedFloat(value, found)
    if isinstance(value, int | np.integer):
        return ReportedInt(value, found)
    if isinstance(value, tuple):
        items = [tag(v, found) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [tag(v, found) for v in value]
    if isinstance(value, dict):
        return {k: tag(v, found) for k, v in value.items()}
    return value


#: exact types that never carry marks (the common case, tested first: marks_of runs on every oracle call)
_UNMARKED = frozenset({float, int, bool, str, type(None), np.ndarray, np.float64, np.int64, np.bool_})
_MARKED = (Reported, _Scalar, ReportedBool)


def marks_of(value, depth: int = 0) -> frozenset[int]:
    """The union of the marks inside ``value`` (arrays, scalars, and lists / tuples / dicts of them)."""
    kind = type(value)
    if kind in _UNMARKED:
        return EMPTY
    if isinstance(value, _MARKED):
        return value.marks
    if depth < 4 and (kind is list or kind is tuple or isinstance(value, list | tuple)):
        parts = [m for v in value if type(v) not in _UNMARKED and (m := marks_of(v, depth + 1))]
        if not parts:
            return EMPTY
        return parts[0] if len(parts) == 1 else frozenset().union(*parts)
    if depth < 4 and isinstance(value, dict):
        return marks_of(list(value.values()), depth + 1)
    if depth < 2 and kind is types.FunctionType and value.__closure__:
        # a callable handed to an oracle (an integrand) computes with what it captured
        return marks_of([c.cell_contents for c in value.__closure__ if c.cell_contents is not value], depth + 1)
    return EMPTY


def rows_of(value) -> Rows | None:
    """The tokens of each row of ``value``: a reported array's rows, or the items of a list or tuple."""
    if isinstance(value, Reported):
        return value.rows
    if isinstance(value, list | tuple) and not hasattr(value, "_fields"):
        return tuple(marks_of(v) for v in value)
    return None


def plain(value, depth: int = 0):
    """``value`` without marks: what the implementation (or an oracle) receives."""
    if type(value) in _UNMARKED:
        return value
    if isinstance(value, Reported):
        return value.view(np.ndarray)
    if isinstance(value, ReportedFloat):
        return float.__float__(value)
    if isinstance(value, ReportedInt):
        return int.__int__(value)
    if isinstance(value, ReportedBool):
        return value.value
    if isinstance(value, ReportedRecord):
        return value.unwrapped
    if depth < 6:
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            return tuple(plain(v, depth + 1) for v in value)
        if isinstance(value, list):
            return [plain(v, depth + 1) for v in value]
        if isinstance(value, dict):
            return {k: plain(v, depth + 1) for k, v in value.items()}
    return value


def hint(value):
    """A reported value used only as a *hint* for an oracle whose answer is certified independently (the support an
    active-set solver starts from, a starting point): its marks are dropped, so the oracle's answer does not depend,
    for the ledger, on the value it is compared with."""
    return plain(value)


def derived(fn):
    """Decorate a statement's own oracle-side helper (a recomputation): it receives plain values and its result is
    marked with every argument's marks (what it was computed from).  The helper then runs at NumPy's speed, and
    nothing it computes can hide a dependence on a reported value."""
    return _passing(fn)


def computed_from(value, *sources):
    """``value`` marked with the marks of ``sources``: for a statement's own oracle-side helper that computes a number
    from reported values through a library that drops marks (a SciPy optimizer), so the number still depends on them.
    It can only add marks, never remove them."""
    return tag(plain(value), marks_of(sources) | marks_of(value))


def scalar(value) -> float:
    """``float(value)`` that keeps the marks of a reported value: the statements' ``float``
    (``tests/verification/test_statement_imports.py`` finds any ``float(...)`` call in them)."""
    found = marks_of(value)
    if found:
        return ReportedFloat(float(plain(value)), found)
    return float(value)


# ------------------------------------------------------------------------------------------------------------------
# the ledger of one statement run
# ------------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Use:
    """One piece of evidence that took marked values: its label, its kind and the tokens of its two sides."""

    label: str
    kind: str  # "compare" (close, mean_close, equal) or "use" (bound, leq, geq, mean_leq, decay, true)
    sides: tuple[frozenset[int], frozenset[int]]
    passed: bool


class Ledger:
    """The calls of one statement run, the tokens of what they returned, and what the evidence did with them."""

    def __init__(self):
        self.calls: list[tuple[str, bool]] = []  # (dotted method, made by a bad-input probe)
        self.fields: list[tuple[int, str]] = []  # token -> (call, field path; a row is "<path>#<index>")
        self.uses: list[Use] = []
        self.given: dict[int, str] = {}  # token -> why it is an input of the claim
        self.in_probe = False

    # ---- marking ------------------------------------------------------------------------------------------
    def call(self, method: str) -> int:
        self.calls.append((method, self.in_probe))
        return len(self.calls) - 1

    def _token(self, call: int, path: str) -> frozenset[int]:
        self.fields.append((call, path))
        return frozenset((len(self.fields) - 1,))

    def mark(self, value, call: int, path: str = ""):
        """``value`` (a method's result or a part of it) marked with tokens of ``call``: one per field and row."""
        here = path or "value"
        if value is None or isinstance(value, str | bytes | type):
            return value
        if isinstance(value, Reported | _Scalar | ReportedRecord | ReportedBool):
            return value
        if isinstance(value, bool | np.bool_):
            return ReportedBool(value, self._token(call, here))
        if isinstance(value, np.ndarray):
            if value.dtype.kind not in "biufc":
                return value
            out = value.view(Reported)
            if value.ndim >= 1 and 0 < value.shape[0] <= ROW_LIMIT:
                out.rows = tuple(self._token(call, f"{here}#{i}") for i in range(value.shape[0]))
                out.marks = _union(out.rows)
            else:
                out.marks = self._token(call, here)
            return out
        if isinstance(value, float | np.floating):
            return ReportedFloat(value, self._token(call, here))
        if isinstance(value, int | np.integer):
            return ReportedInt(value, self._token(call, here))
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            return tuple(self.mark(v, call, f"{path}[{i}]") for i, v in enumerate(value))
        if isinstance(value, list):
            return [self.mark(v, call, f"{path}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {k: self.mark(v, call, f"{path}[{k!r}]") for k, v in value.items()}
        if callable(value) and not hasattr(value, "__dict__"):
            return value
        return ReportedRecord(value, self, call, path)

    # ---- evidence -----------------------------------------------------------------------------------------
    def note(self, label: str, kind: str, lhs, rhs, passed: bool) -> None:
        """Record one piece of evidence about ``lhs`` and ``rhs`` (a comparison row by row when both have rows)."""
        a, b = marks_of(lhs), marks_of(rhs)
        if not (a or b):
            return
        if kind == "compare":
            ra, rb = rows_of(lhs), rows_of(rhs)
            if ra is not None and rb is not None and len(ra) == len(rb) > 1:
                self.uses.extend(Use(label, kind, (x, y), passed) for x, y in zip(ra, rb, strict=True) if x or y)
                return
        self.uses.append(Use(label, kind, (a, b), passed))

    def declare(self, value, why: str) -> None:
        for t in marks_of(value):
            self.given.setdefault(t, why)

    # ---- the end of a statement ---------------------------------------------------------------------------
    def checked(self) -> set[int]:
        """The tokens compared with an oracle, or with a recomputation from checked values and inputs: the fixpoint
        of the passing comparisons (a side all of whose tokens are checked checks the other side)."""
        done: set[int] = set(self.given)
        compares = [u for u in self.uses if u.kind == "compare" and u.passed]
        waiting: dict[tuple[int, int], int] = {}
        watchers: dict[int, list[tuple[int, int]]] = defaultdict(list)
        ready: list[tuple[int, int]] = []
        for i, u in enumerate(compares):
            for side in (0, 1):
                open_ = [t for t in u.sides[side] if t not in done]
                waiting[i, side] = len(open_)
                for t in open_:
                    watchers[t].append((i, side))
                if not open_:
                    ready.append((i, side))
        while ready:
            i, side = ready.pop()
            for t in compares[i].sides[1 - side]:
                if t in done:
                    continue
                done.add(t)
                for key in watchers.pop(t, ()):
                    waiting[key] -= 1
                    if waiting[key] == 0:
                        ready.append(key)
        return done - set(self.given)

    def summary(self) -> dict:
        """Per method: ``calls``, value-``checked`` calls, ``used``-only calls and bad-input ``probes``; every
        ``trusted`` use (method, field, label, how many); the ``given`` inputs; ``unseen`` fields (read by the
        statement, never in evidence: a value it ignored, or a mark lost on the way)."""
        checked = self.checked()
        given = set(self.given)
        seen: set[int] = set()
        for u in self.uses:
            seen |= u.sides[0] | u.sides[1]
        call_checked, call_used = set(), set()
        for tok, (call, _) in enumerate(self.fields):
            if tok in checked:
                call_checked.add(call)
            elif tok in seen:
                call_used.add(call)
        methods: dict[str, dict[str, int]] = {}
        for i, (method, probe) in enumerate(self.calls):
            row = methods.setdefault(method, {"calls": 0, "checked": 0, "used": 0, "probes": 0})
            row["calls"] += 1
            if i in call_checked:
                row["checked"] += 1
            elif i in call_used:
                row["used"] += 1
            elif probe:
                row["probes"] += 1
        trusted: dict[tuple[str, str, str], int] = {}
        for u in self.uses:
            if u.kind != "use":
                continue
            for tok in sorted((u.sides[0] | u.sides[1]) - checked - given):
                key = (self._method(tok), self._field(tok), u.label)
                trusted[key] = trusted.get(key, 0) + 1
        read = {(self._method(t), self._field(t)) for t, (call, _) in enumerate(self.fields) if not self.calls[call][1]}
        reached = {(self._method(t), self._field(t)) for t in seen | given}
        return {
            "methods": dict(sorted(methods.items())),
            "trusted": [
                {"method": m, "field": f, "label": lab, "uses": n} for (m, f, lab), n in sorted(trusted.items())
            ],
            "given": sorted({(self._method(t), self._field(t), why) for t, why in self.given.items()}),
            "unseen": sorted(read - reached),
        }

    def describe(self, tokens, limit: int = 3) -> str:
        """``boosting.frank_wolfe (call 2 of the statement): weights_history row 1``, for up to ``limit`` fields."""
        seen: dict[tuple[int, str], list[str]] = {}
        for t in sorted(tokens):
            call, path = self.fields[t]
            field, _, row = path.partition("#")
            seen.setdefault((call, field or "value"), []).append(row)
        parts = []
        for (call, field), rows in list(seen.items())[:limit]:
            rows = [r for r in rows if r]
            where = f" row {rows[0]}" if len(rows) == 1 else (f" rows {rows[0]}..{rows[-1]}" if rows else "")
            parts.append(f"{self.calls[call][0]} (call {call + 1} of the statement): {field}{where}")
        more = len(seen) - limit
        return ", ".join(parts) + (f" and {more} more" if more > 0 else "")

    def _method(self, token: int) -> str:
        return self.calls[self.fields[token][0]][0]

    def _field(self, token: int) -> str:
        return self.fields[token][1].split("#")[0] or "value"


# ------------------------------------------------------------------------------------------------------------------
# statements see a NumPy and a math whose results keep marks, and arrays they fill collect them
# ------------------------------------------------------------------------------------------------------------------


class Collector(Reported):
    """An array a statement created (``np.empty``, ``np.zeros``, ...): what is assigned into it marks it, row by
    row, so ``kl = np.empty(R); kl[r] = kl_of(reported[r])`` keeps what each ``kl[r]`` was computed from."""

    def __setitem__(self, key, value):
        found = marks_of(value) | marks_of(key)  # e[reported_index] = 1 depends on the index too
        if found:
            self.marks = self.marks | found
            if self.ndim >= 1:
                rows = list(self.rows) if self.rows is not None else [EMPTY] * self.shape[0]
                first = key[0] if isinstance(key, tuple) and key else key
                if isinstance(first, int | np.integer):
                    span: Any = [int(first)]
                elif isinstance(first, slice):
                    span = range(*first.indices(len(rows)))
                else:
                    span = range(len(rows))
                for i in span:
                    rows[i] = rows[i] | found
                self.rows = tuple(rows)
        super().__setitem__(plain(key), plain(value))


def _keeping(original):
    def converter(obj, *args, **kwargs):
        if type(obj) in _UNMARKED or _INSIDE_ORACLE:
            return original(obj, *args, **kwargs)
        found = marks_of(obj)
        if not found:
            return original(obj, *args, **kwargs)
        out = tag(original(plain(obj), *args, **kwargs), found)
        rows = rows_of(obj)
        if isinstance(out, Reported) and rows is not None and out.ndim >= 1 and out.shape[0] == len(rows):
            out.rows = rows
        return out

    return functools.wraps(original)(converter)


def _collecting(original):
    def constructor(*args, **kwargs):
        out = original(*plain(args), **plain(kwargs)).view(Collector)
        out.marks = marks_of(args) | marks_of(kwargs)
        return out

    return functools.wraps(original)(constructor)


class MarkingNumpy:
    """What ``np`` is inside the statement modules (:func:`instrument`): NumPy itself, except that ``asarray``,
    ``array``, ``ascontiguousarray`` and ``asfortranarray`` keep the marks (and rows) of what they convert, lists of
    marked values included, and ``empty`` / ``zeros`` / ``ones`` / ``full`` (and their ``_like``) make
    :class:`Collector` arrays.  The implementation and the oracles see NumPy unchanged."""

    KEEP = ("asarray", "array", "ascontiguousarray", "asfortranarray")
    COLLECT = ("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like")

    def __init__(self):
        for name in self.KEEP:
            setattr(self, name, _keeping(getattr(np, name)))
        for name in self.COLLECT:
            setattr(self, name, _collecting(getattr(np, name)))

    def __getattr__(self, attr):
        value = getattr(np, attr)
        setattr(self, attr, value)  # looked up once
        return value

    def __repr__(self):
        return "<numpy, keeping the marks of reported values>"


class MarkingMath:
    """What ``math`` is inside the statement modules: :mod:`math`'s functions on plain values, their results marked
    with their arguments' marks (``math.sqrt(reported)`` is reported)."""

    def __getattr__(self, attr):
        value = getattr(math, attr)
        if callable(value):
            value = _passing(value)
        setattr(self, attr, value)  # looked up once
        return value

    def __repr__(self):
        return "<math, keeping the marks of reported values>"


def instrument(package) -> None:
    """Give every module of ``package`` (the statements) a :class:`MarkingNumpy` as its ``np`` and a
    :class:`MarkingMath` as its ``math`` (idempotent)."""
    import importlib
    import pkgutil

    marking, marking_math = MarkingNumpy(), MarkingMath()
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        module = importlib.import_module(info.name)
        if getattr(module, "np", None) is np:
            module.np = marking  # type: ignore[attr-defined]
        if getattr(module, "math", None) is math:
            module.math = marking_math  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------------------------------------------
# oracles pass marks through: what an oracle computes from a reported value is reported
# ------------------------------------------------------------------------------------------------------------------


#: > 0 while an oracle runs: its arguments were stripped of marks at its entry, so the calls it makes (to other
#: oracles, to a statement's integrand) skip the bookkeeping
_INSIDE_ORACLE = 0


def _passing(fn):
    """``fn`` receiving plain values, its result marked with the union of its arguments' marks (a callable
    argument's marks are those of what it captured)."""
    if getattr(fn, "_passes_marks", False):
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        global _INSIDE_ORACLE
        if _INSIDE_ORACLE:
            return fn(*args, **kwargs)
        found = marks_of(args) | marks_of(kwargs)
        _INSIDE_ORACLE += 1
        try:
            out = fn(*plain(args), **plain(kwargs)) if found else fn(*args, **kwargs)
        finally:
            _INSIDE_ORACLE -= 1
        return tag(out, found)

    wrapper._passes_marks = True  # type: ignore[attr-defined]
    return wrapper


def _pass_through_class(cls) -> None:
    for attr, member in list(vars(cls).items()):
        if attr.startswith("__") and attr != "__call__":
            continue
        if isinstance(member, staticmethod):
            setattr(cls, attr, staticmethod(_passing(member.__func__)))
        elif isinstance(member, property):
            setattr(cls, attr, property(_passing(member.fget) if member.fget else None, member.fset, member.fdel))
        elif inspect.isfunction(member):
            setattr(cls, attr, _passing(member))
        elif isinstance(member, functools.cached_property):
            member.func = _passing(member.func)


def pass_marks_through(package) -> None:
    """Wrap every function and method defined in the modules of ``package`` (the oracles) so that what they compute
    from a reported value is marked as reported (idempotent).  The oracles themselves import nothing of refvi."""
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        module = importlib.import_module(info.name)
        if getattr(module, "_passes_marks", False):
            continue
        for name, obj in list(vars(module).items()):
            if getattr(obj, "__module__", None) != module.__name__ or name.startswith("__"):
                continue
            if inspect.isclass(obj):
                _pass_through_class(obj)
            elif callable(obj):
                setattr(module, name, _passing(obj))
        module._passes_marks = True  # type: ignore[attr-defined]
