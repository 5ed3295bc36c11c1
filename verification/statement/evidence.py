"""The evidence a check records, and the one place it is recorded.

:class:`.Evidence` is one comparison (left side, right side, relation, slack, passed); ``EvidenceLog`` is the
part of a :class:`~refvi.verification.statement.Context` that keeps it: the evidence list, the worst slack, the
tightness of each bound (:func:`.tightness`, named by :func:`.check_name`), the statistical power, the declined
instances and the failures with what produced them.  The checks (:mod:`.statement.checks`,
:mod:`.statement.statistics`, :mod:`.statement.probes`) and the instance loop (:mod:`.statement.instances`) all
record through it.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

from refvi.verification.protocol.recorder import MissingMethod
from refvi.verification.statement.provenance import Ledger


class CheckFailed(AssertionError):
    """A piece of evidence contradicted the claim."""


class ReplayDone(BaseException):
    """Raised by a :class:`~refvi.verification.statement.Context` in replay mode once the replayed instance has run:
    the claim stops there."""


@dataclasses.dataclass
class Evidence:
    label: str
    lhs: float
    rhs: float
    relation: str
    slack: float
    passed: bool


class EvidenceLog:
    """Records evidence for a :class:`~refvi.verification.statement.Context` (the state it keeps is set up there)."""

    evidence: list[Evidence]
    worst_slack: float | None
    instances_skipped: int
    skip_reasons: list[str]
    decline_counts: dict[str, int]
    optional_declines: int
    call_log: list | None
    failures: list[dict]
    deferred: list[str]
    tightness: dict | None
    checks: dict[str, dict]
    power: dict | None
    search: dict | None
    ledger: Ledger | None
    _current: tuple | None
    _instance: Any
    _in_hypothesis: bool
    _targets: dict[str, float]

    def _note(self, label: str, kind: str, lhs, rhs, ok: bool) -> None:
        if self.ledger is not None:
            self.ledger.note(label, kind, lhs, rhs, ok)

    def decline(self, exc: BaseException) -> None:
        """Count one declined instance or probe with its reason."""
        reason = str(exc).strip() or type(exc).__name__
        if isinstance(exc, MissingMethod):
            reason = f"lacks {reason}"
        if getattr(exc, "optional", False):
            reason = f"optional: {reason}"
            self.optional_declines += 1
        self.instances_skipped += 1
        self.decline_counts[reason] = self.decline_counts.get(reason, 0) + 1
        if len(self.skip_reasons) < 3 and reason not in self.skip_reasons:
            self.skip_reasons.append(reason)

    def _track(self, lhs: float, rhs: float, label: str, floor: float = 0.0) -> None:
        """Keep the tightest ``lhs / rhs`` of the statement over right sides above ``floor`` (a right side at the
        rounding level of its check says nothing about tightness); in search mode, steer Hypothesis toward it."""
        name = check_name(label)
        check = self.checks.setdefault(name, {"ratio": None, "label": label, "instance": None, "count": 0})
        check["count"] += 1
        ratio = tightness(lhs, rhs, floor)
        if ratio is not None:
            if check["ratio"] is None or ratio > check["ratio"]:
                check.update(ratio=ratio, label=label, instance=_short_repr(self._instance))
            if self.tightness is None or ratio > self.tightness["ratio"]:
                self.tightness = {"ratio": ratio, "label": label, "instance": _short_repr(self._instance)}
            if self.search is not None and self._in_hypothesis:
                key = label or "bound"
                self._targets[key] = max(ratio, self._targets.get(key, -math.inf))

    def _note_power(self, resolution: float, label: str, repetitions: int) -> None:
        if self.power is None or resolution > self.power["resolution"]:
            self.power = {"resolution": float(resolution), "label": label, "repetitions": int(repetitions)}

    def _record(self, label, lhs, rhs, relation, slack, ok, detail, defer: bool = False, arrays=None) -> None:
        self.evidence.append(Evidence(label, lhs, rhs, relation, float(slack), bool(ok)))
        if math.isfinite(slack):
            self.worst_slack = slack if self.worst_slack is None else min(self.worst_slack, slack)
        if not ok:
            message = (
                f"{label or 'probe'}: {detail}"
                if relation in ("refused", "member")
                else f"{label or 'check'}: {lhs!r} {relation} {rhs!r} fails ({detail})"
            )
            check = {"label": label, "lhs": lhs, "rhs": rhs, "relation": relation, "detail": detail}
            if arrays is not None:
                check["lhs_array"], check["rhs_array"] = arrays
            self.note_failure(check, deferred=defer)
            if defer:
                self.deferred.append(message)
                return
            raise CheckFailed(message)

    def note_failure(self, check: dict | None, error: BaseException | None = None, deferred: bool = False) -> None:
        """Keep what produced a failing check (or an exception inside the implementation): the instance site and
        index, the instance itself, the check and the protocol calls of the instance so far."""
        site, index, inst = self._current if self._current is not None else (None, None, None)
        rec = {
            "site": site,
            "index": index,
            "instance": inst,
            "check": check,
            "error": None if error is None else f"{type(error).__name__}: {error}"[:1000],
            "calls": list(self.call_log or ()),
        }
        if deferred:
            rec["deferred"] = True
            self.failures.append(rec)
        else:
            # a raised failure: the last one is kept first (Hypothesis re-runs the shrunk instance last)
            self.failures = [rec] + [f for f in self.failures if f.get("deferred")]


def tightness(lhs: float, rhs: float, floor: float = 0.0) -> float | None:
    """How close ``lhs`` comes to the bound ``rhs`` (1 = attained, 0.1 = 10x headroom): ``lhs / rhs`` for a positive
    bound above ``floor`` (a right side at the rounding level of its check says nothing), ``rhs / lhs`` when both
    are negative (``lambda_max <= -1/(2 nu)``: -5 against -0.5 is 10x headroom); None for a zero bound (a sign)."""
    if not (math.isfinite(lhs) and math.isfinite(rhs)):
        return None
    if rhs > floor and rhs > 0:
        return lhs / rhs
    if rhs < -floor and lhs < 0:
        return rhs / lhs
    return None


_NUMBER = re.compile(r"(?<![A-Za-z0-9_.\-])[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def check_name(label: str) -> str:
    """The name of a bound: its label with the numbers in it masked as ``#`` (``"h_t <= bound, delta = 0.5"`` and
    ``"..., delta = 1"`` are one check, run at two instances); a symbol's index (``h_t0``, ``sigma2``) and an id
    (``E001-4``, ``000.thm7``) stay."""
    return _NUMBER.sub("#", label) if label else "bound"


def _short_repr(inst, limit: int = 300) -> str | None:
    if inst is None:
        return None
    text = repr(inst)
    return text if len(text) <= limit else text[:limit] + "..."
