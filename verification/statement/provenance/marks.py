"""Marked values: what a protocol method returns, as the statement sees it (:class:`Reported` arrays,
:class:`ReportedFloat` / :class:`ReportedInt` / :class:`ReportedBool` scalars, :class:`ReportedRecord` records), the
marks they carry (:func:`marks_of`, :func:`rows_of`), how marks survive arithmetic, and the helpers the statements
use to keep them (:func:`scalar`, :func:`.derived`, :func:`computed_from`, :func:`hint`) or drop them (:func:`plain`).
"""

from __future__ import annotations

import operator
import types
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from refvi.verification.statement.provenance.ledger import Ledger

EMPTY: frozenset[int] = frozenset()
Rows = tuple[frozenset[int], ...]

#: arrays with more rows than this get one token for the whole array
ROW_LIMIT = 100_000

# ------------------------------------------------------------------------------------------------------------------
# marked values


class MarkedThroughNumPy:
    """NumPy's ufuncs and functions on marked operands: computed on the plain values, the result carrying the union of
    the operands' marks (the arrays and scalars below)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        found, args = EMPTY, []
        for x in inputs:  # every ufunc on a marked operand comes here: the unmarked operands are passed as they are
            kind = type(x)
            if kind in _UNMARKED:
                args.append(x)
            elif kind is Reported:  # the common marked operand, inlined (marks_of and plain give the same)
                found = found | x.marks
                args.append(x.view(np.ndarray))
            else:
                found = found | marks_of(x)
                args.append(plain(x))
        if "out" in kwargs:
            found = found | marks_of(kwargs["out"])
            kwargs["out"] = tuple(plain(o) for o in kwargs["out"])
        return tag(getattr(ufunc, method)(*args, **kwargs), found)

    def __array_function__(self, func, types, args, kwargs):
        return tag(func(*plain(args), **plain(kwargs)), marks_of(args) | marks_of(kwargs))


class Reported(MarkedThroughNumPy, np.ndarray):
    """An array returned by the implementation under test, or computed from one.  ``marks``: every token it carries;
    ``rows``: the tokens of each index along the first axis, when it is (a slice of) a reported array."""

    marks: frozenset[int]
    rows: Rows | None

    def __array_finalize__(self, obj):
        self.marks = getattr(obj, "marks", EMPTY)
        self.rows = None

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


class ReportedScalar(MarkedThroughNumPy):
    """Arithmetic of a marked Python scalar: every result carries the union of the operands' marks.  A subclass also
    derives from the builtin type ``_number`` (float or int); it pickles as that type's plain value."""

    marks: frozenset[int] = EMPTY
    __array_priority__ = 1000
    _number: Any  # float or int, the builtin type a subclass derives from

    def __new__(cls, value, marks: frozenset[int] = EMPTY):
        out = cls._number.__new__(cls, value)
        out.marks = marks
        return out

    def __reduce__(self):
        return (self._number, (plain(self),))


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
    setattr(ReportedScalar, f"__{_name}__", _binary(_op))
    setattr(ReportedScalar, f"__r{_name}__", _binary(_op, reflected=True))
for _name, _op in _UNARY.items():
    setattr(ReportedScalar, f"__{_name}__", _unary(_op))


class ReportedFloat(ReportedScalar, float):
    """A float returned by the implementation under test (or computed from one)."""

    _number = float


class ReportedInt(ReportedScalar, int):
    """An int returned by the implementation under test (an atom index, a count)."""

    _number = int


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


def is_reported(value) -> bool:
    """Whether ``value`` is already a marked value of the implementation's (an array, a number, a bool, a record)."""
    return isinstance(value, Reported | ReportedScalar | ReportedRecord | ReportedBool)


def tag(value, found: frozenset[int]):
    """``value`` carrying the marks ``found`` (arrays, NumPy and Python numbers, and containers of them; anything
    else, bools included, as it is); a value already marked keeps its own marks as well."""
    if not found:
        return value
    if type(value) is np.ndarray:
        out = value.view(Reported)
        out.marks = found
        return out
    if isinstance(value, _MARKED):  # already marked (computed from a reported value an oracle captured): keep both
        found = found | value.marks
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
_MARKED = (Reported, ReportedScalar, ReportedBool)


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
    kind = type(value)
    if kind in _UNMARKED:
        return value
    if kind is tuple or kind is list:  # the arguments of every wrapped call: the plain items are kept as they are
        if depth >= 6:
            return value
        items = [v if type(v) in _UNMARKED else plain(v, depth + 1) for v in value]
        return tuple(items) if kind is tuple else items
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
