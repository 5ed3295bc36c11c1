"""The ledger of one statement run: the protocol calls, the tokens of what they returned, and what the evidence did
with them (:class:`Ledger`): which calls were value-checked, used only, or neither, and every trusted use."""

from __future__ import annotations

import bisect
import dataclasses
from collections import defaultdict

import numpy as np

from refvi.verification.statement.provenance.marks import (
    ROW_LIMIT,
    Reported,
    ReportedBool,
    ReportedRecord,
    is_reported,
    marks_of,
    rows_of,
    tag,
)


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
        # the tokens, in blocks of consecutive ones: a field's one token, or an array's one token per row; block k
        # starts at token _starts[k] and is (call, field path, rows: whether its tokens are rows)
        self._starts: list[int] = []
        self._blocks: list[tuple[int, str, bool]] = []
        self._next = 0
        self.uses: list[Use] = []
        self.given: dict[int, str] = {}  # token -> why it is an input of the claim
        self.in_probe = False

    # ---- marking ------------------------------------------------------------------------------------------
    def call(self, method: str) -> int:
        self.calls.append((method, self.in_probe))
        return len(self.calls) - 1

    def _tokens(self, call: int, path: str, n: int = 0) -> int:
        """A new block: one token for the field ``path`` (``n`` 0), or ``n`` row tokens; its first token."""
        start = self._next
        self._starts.append(start)
        self._blocks.append((call, path, n > 0))
        self._next = start + max(n, 1)
        return start

    def _token(self, call: int, path: str) -> frozenset[int]:
        return frozenset((self._tokens(call, path),))

    def _block_index(self, token: int) -> int:
        return bisect.bisect_right(self._starts, token) - 1

    def _block(self, token: int) -> tuple[int, str, bool]:
        return self._blocks[self._block_index(token)]

    def field(self, token: int) -> tuple[int, str]:
        """The call and field path of ``token`` (a row's path is ``<path>#<index>``)."""
        k = self._block_index(token)
        call, path, rows = self._blocks[k]
        return (call, f"{path}#{token - self._starts[k]}") if rows else (call, path)

    def mark(self, value, call: int, path: str = ""):
        """``value`` (a method's result or a part of it) marked with tokens of ``call``: one per field and row."""
        here = path or "value"
        if value is None or isinstance(value, str | bytes | type):
            return value
        if is_reported(value):
            return value
        if isinstance(value, bool | np.bool_):
            return ReportedBool(value, self._token(call, here))
        if isinstance(value, np.ndarray):
            if value.dtype.kind not in "biufc":
                return value
            out = value.view(Reported)
            if value.ndim >= 1 and 0 < value.shape[0] <= ROW_LIMIT:
                start = self._tokens(call, here, value.shape[0])
                tokens = range(start, start + value.shape[0])
                out.rows = tuple(map(frozenset, zip(tokens)))  # row i: {start + i}
                out.marks = frozenset(tokens)
            else:
                out.marks = self._token(call, here)
            return out
        if isinstance(value, float | np.floating | int | np.integer):
            return tag(value, self._token(call, here))  # a ReportedFloat or ReportedInt
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
        # a comparison with an oracle (one side unmarked) checks the other side outright.  Otherwise each side checks
        # the other once it is all checked: a side of one token is ready when its token is, so its partner's tokens
        # are that token's followers; a side of several tokens waits, as a group, for all of them.
        follow: dict[int, list[int]] = defaultdict(list)
        group: dict[frozenset[int], int] = {}
        partners: list[list[frozenset[int]]] = []
        for u in self.uses:
            if u.kind != "compare" or not u.passed:
                continue
            a, b = u.sides
            if not a:
                done.update(b)
                continue
            if not b:
                done.update(a)
                continue
            for this, other in ((a, b), (b, a)):
                if len(this) == 1:
                    (t,) = this
                    follow[t].extend(other)
                else:
                    g = group.setdefault(this, len(group))
                    if g == len(partners):
                        partners.append([])
                    partners[g].append(other)
        waiting = [0] * len(group)
        watchers: dict[int, list[int]] = defaultdict(list)
        ready: list[int] = []
        for side, g in group.items():
            open_ = [t for t in side if t not in done]
            waiting[g] = len(open_)
            for t in open_:
                watchers[t].append(g)
            if not open_:
                ready.append(g)
        # every token done so far starts the propagation; a token newly done is propagated once
        fresh = list(done)
        while fresh or ready:
            while fresh:
                t = fresh.pop()
                for y in follow.get(t, ()):
                    if y not in done:
                        done.add(y)
                        fresh.append(y)
                for g in watchers.pop(t, ()):
                    waiting[g] -= 1
                    if waiting[g] == 0:
                        ready.append(g)
            if ready:
                for other in partners[ready.pop()]:
                    for t in other:
                        if t not in done:
                            done.add(t)
                            fresh.append(t)
        return done - set(self.given)

    def summary(self) -> dict:
        """Per method: ``calls``, value-``checked`` calls, ``used``-only calls and bad-input ``probes``; every
        ``trusted`` use (method, field, label, how many); the ``given`` inputs; ``unseen`` fields (read by the
        statement, never in evidence: a value it ignored, or a mark lost on the way)."""
        checked = self.checked()
        given = set(self.given)
        seen: set[int] = set()
        for u in self.uses:
            seen.update(u.sides[0])
            seen.update(u.sides[1])
        call_checked = {self._block(t)[0] for t in checked}
        call_used = {self._block(t)[0] for t in seen - checked}
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
        # the fields read, by (call, field path without the row): one entry per field, not per token
        read_fields = {(call, path.partition("#")[0]) for call, path, _ in self._blocks if not self.calls[call][1]}
        read = {(self.calls[call][0], field or "value") for call, field in read_fields}
        reached_fields = {(call, path.partition("#")[0]) for call, path, _ in map(self._block, seen | given)}
        reached = {(self.calls[call][0], field or "value") for call, field in reached_fields}
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
            call, path = self.field(t)
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
        return self.calls[self._block(token)[0]][0]

    def _field(self, token: int) -> str:
        return self._block(token)[1].split("#")[0] or "value"
