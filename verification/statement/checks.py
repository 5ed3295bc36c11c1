"""Exact checks: inequalities (:meth:`.Context.leq`, :meth:`.Context.geq`, a paper's bound with its tightness
:meth:`.Context.bound`), closeness within a tolerance (:meth:`.Context.close`), exact equality, membership in an
admissible set and boolean claims.  Each either passes (its slack is kept) or raises
:class:`~refvi.verification.statement.CheckFailed` naming both sides, the tolerance and, for a value the
implementation reported, which method, field and row reported it.

Slack convention (reported as ``worst_slack`` in the certificate): for an inequality ``lhs <= rhs`` the slack is
``rhs - lhs``; for an equality it is ``-max|lhs - rhs|`` (0 is exact, so a passing equality has a slack <= 0 whose
magnitude is the largest error accepted).
"""

from __future__ import annotations

import math

import numpy as np

from refvi.verification.statement.evidence import EvidenceLog, _short_repr


class Checks(EvidenceLog):
    """The exact checks of a :class:`~refvi.verification.statement.Context`."""

    def leq(self, lhs, rhs, *, rtol: float = 0.0, atol: float = 0.0, label: str = "") -> None:
        """Claim ``lhs <= rhs`` up to ``atol + rtol*|rhs|`` (tolerance = the oracle's stated accuracy)."""
        self._note(label, "use", lhs, rhs, True)
        lhs, rhs = float(lhs), float(rhs)
        ok = lhs <= rhs + atol + rtol * abs(rhs)
        self._record(label, lhs, rhs, "<=", rhs - lhs, ok, f"tol atol={atol:g}, rtol={rtol:g}")

    def bound(self, lhs, rhs, *, rtol: float = 0.0, atol: float = 0.0, label: str = "") -> None:
        """A paper's inequality ``lhs <= rhs`` between non-negative quantities (a bound, a rate): as :meth:`leq`,
        and its tightness ``lhs / rhs`` is tracked (the certificate reports the tightest instance; a bound whose
        best ratio is far below 1 cannot see a wrong constant).  In search mode it steers Hypothesis toward
        violations."""
        self._track(float(lhs), float(rhs), label, floor=10.0 * atol)
        self.leq(lhs, rhs, rtol=rtol, atol=atol, label=label)

    def geq(self, lhs, rhs, *, rtol: float = 0.0, atol: float = 0.0, label: str = "") -> None:
        """Claim ``lhs >= rhs`` up to ``atol + rtol*|rhs|``."""
        self._note(label, "use", lhs, rhs, True)
        lhs, rhs = float(lhs), float(rhs)
        ok = lhs >= rhs - atol - rtol * abs(rhs)
        self._record(label, lhs, rhs, ">=", lhs - rhs, ok, f"tol atol={atol:g}, rtol={rtol:g}")

    def close(self, lhs, rhs, *, rtol: float = 0.0, atol: float = 0.0, label: str = "", defer: bool = False) -> None:
        """Claim ``lhs == rhs`` elementwise: ``|lhs - rhs| <= atol + rtol*max(|lhs|, |rhs|)`` (arrays allowed; a complex
        side is refused: casting to float would drop the imaginary part, so compare ``.real`` and ``.imag``)."""
        if np.iscomplexobj(lhs) or np.iscomplexobj(rhs):
            raise TypeError(f"{label or 'close'}: complex values; compare the real and imaginary parts separately")
        marked = (lhs, rhs)
        a = np.asarray(lhs, dtype=np.float64).view(np.ndarray)
        b = np.asarray(rhs, dtype=np.float64).view(np.ndarray)
        if a.shape != b.shape:
            self._record(
                label, math.nan, math.nan, "==", -math.inf, False, f"shape mismatch {a.shape} vs {b.shape}", defer=defer
            )
            return
        err = np.abs(a - b)
        tol = atol + rtol * np.maximum(np.abs(a), np.abs(b))
        finite = bool(np.all(np.isfinite(a)) and np.all(np.isfinite(b)))
        ok = finite and bool(np.all(err <= tol))
        worst = float(np.max(err)) if err.size else 0.0
        if not finite:
            worst = math.inf
        i = int(np.argmax(err - tol)) if err.size else 0
        self._note(label, "compare", *marked, ok)
        detail = f"max |lhs - rhs| = {worst:.3g}, atol={atol:g}, rtol={rtol:g}"
        if not ok:
            where = np.unravel_index(i, a.shape) if a.ndim and a.size else ()
            if where:
                detail += f"; worst element at index {tuple(int(k) for k in where)}"
            detail += self._reported_by(marked, where[0] if where else None)
        self._record(
            label,
            float(a.ravel()[i]) if a.size else 0.0,
            float(b.ravel()[i]) if b.size else 0.0,
            "==",
            -worst,
            ok,
            detail,
            defer=defer,
            arrays=(a, b) if not ok else None,
        )

    def _reported_by(self, sides, row=None) -> str:
        """What a failing check's sides were reported by: the protocol method, its call and the field (and row)."""
        if self.ledger is None:
            return ""
        from refvi.verification.statement.provenance import marks_of, rows_of

        out = []
        for name, value in zip(("lhs", "rhs"), sides, strict=True):
            rows = rows_of(value) if row is not None else None
            tokens = rows[int(row)] if rows is not None and int(row) < len(rows) else marks_of(value)
            if tokens:
                out.append(f"{name} reported by {self.ledger.describe(tokens)}")
        return ("; " + "; ".join(out)) if out else ""

    def equal(self, lhs, rhs, *, label: str) -> None:
        """Claim ``lhs == rhs`` exactly, for values that are not numbers to compare within a tolerance: a bool, an
        index, a name (a comparison: a reported value equal to an oracle's is checked)."""
        from refvi.verification.statement.provenance import plain

        a, b = plain(lhs), plain(rhs)
        ok = bool(np.array_equal(a, b)) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else bool(a == b)
        self._note(label, "compare", lhs, rhs, ok)
        self._record(
            label,
            0.0 if ok else 1.0,
            0.0,
            "==",
            0.0 if ok else -1.0,
            ok,
            f"{_short_repr(a, 120)} vs {_short_repr(b, 120)}",
        )

    def member(self, values, allowed, *, label: str) -> None:
        """Claim ``values[i]`` is one of ``allowed[i]`` for every i (an index the implementation chose, among the
        answers an oracle admits: the atoms of a delta-approximate LMO, an argmin with ties).  A comparison: each value
        is checked by the admissible set it falls in (row by row)."""
        from refvi.verification.statement.provenance import plain

        vals = np.atleast_1d(plain(values)).ravel().tolist()
        sets = [plain(a) for a in allowed] if np.ndim(plain(values)) else [plain(allowed)]
        if len(vals) != len(sets):
            self._record(label, math.nan, math.nan, "member", -math.inf, False, f"{len(vals)} values, {len(sets)} sets")
            return
        bad = [i for i, (v, a) in enumerate(zip(vals, sets, strict=True)) if v not in set(np.ravel(a).tolist())]
        ok = not bad
        self._note(label, "compare", values, allowed, ok)
        detail = ""
        if bad:
            detail = (
                f"{len(bad)} of {len(vals)} outside the admissible set; the first at index {bad[0]}: "
                f"{vals[bad[0]]!r} not in {_short_repr(np.ravel(sets[bad[0]]).tolist(), 120)}"
                + self._reported_by((values, allowed), bad[0] if np.ndim(plain(values)) else None)
            )
        self._record(label, float(len(bad)), 0.0, "member", -float(len(bad)), ok, detail)

    def true(self, condition: bool, *, label: str) -> None:
        """A boolean claim (a symbolic identity simplified to zero, a set membership, ...).  A bool the implementation
        reported, passed as it is, is taken as true (a use): compare it with :meth:`equal` instead."""
        self._note(label, "use", condition, None, True)
        ok = bool(condition)
        self._record(label, float(ok), 1.0, "is", 0.0 if ok else -1.0, ok, "")
