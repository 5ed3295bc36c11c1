"""The verification-statement model.

A statement is one numbered result of a paper made executable.  It is a function ``claim(ctx)`` registered with
:func:`statement`; the function generates instances (fixed named ones and Hypothesis draws through
:meth:`Context.forall`) and records evidence through :meth:`Context.leq`, :meth:`Context.close`,
:meth:`Context.mean_leq`, ...  Each evidence call either passes (and its slack is kept) or raises :class:`CheckFailed`
naming the left side, the right side and the tolerance.

Slack convention (reported as ``worst_slack`` in the certificate): for an inequality ``lhs <= rhs`` the slack is
``rhs - lhs`` (>= 0 when it holds before tolerance, negative but within the tolerance when it holds only within it);
for an equality it is ``-max|lhs - rhs|`` (0 is exact, so a passing equality has a slack <= 0 whose magnitude is the
largest error accepted); for a statistical check it is the distance from the confidence bound to the claimed bound.
``worst_slack`` is the minimum over all evidence of the run: a passing statement may have a negative one.

Instances: every :meth:`Context.forall` / :meth:`Context.forall_drawn` / :meth:`Context.instance` call is a *site*
(numbered 0, 1, ... in the order the claim reaches them) and each instance run there has an index; the instance log
(site, index, outcome, worst slack) makes certificates comparable instance by instance, and a failure names its site
and instance so that ``--replay`` can run that one instance again (:mod:`refvi.verification.reproducers`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import math
import re
from collections.abc import Callable, Iterable
from typing import Any, Literal

import numpy as np

Kind = Literal["exact", "symbolic", "statistical"]
KINDS = ("exact", "symbolic", "statistical")
ID_KINDS = ("def", "thm", "lemma", "cor", "prop", "example", "eq", "remark", "assumption", "claim")


@dataclasses.dataclass(frozen=True)
class Profile:
    """How hard to look: Hypothesis examples per ``forall`` and a multiplier for Monte Carlo repetitions."""

    name: str
    max_examples: int
    mc_scale: int


PROFILES = {
    "ci": Profile("ci", max_examples=20, mc_scale=1),
    "deep": Profile("deep", max_examples=400, mc_scale=8),
}


class CheckFailed(AssertionError):
    """A piece of evidence contradicted the claim."""


class ReplayDone(BaseException):
    """Raised by a :class:`Context` in replay mode once the replayed instance has run: the claim stops there."""


from refvi.verification.protocol.recorder import InstanceSkipped, MissingMethod  # noqa: E402,F401  (re-exported)
from refvi.verification.provenance import Ledger, computed_from, derived, hint, scalar  # noqa: E402,F401  (statements)


@dataclasses.dataclass
class Evidence:
    label: str
    lhs: float
    rhs: float
    relation: str
    slack: float
    passed: bool


@contextlib.contextmanager
def _without_local_constants():
    """Hypothesis mixes literal constants from the *local* modules loaded in the process (source files outside
    site-packages) into its draws, so a derandomized run draws different instances under pytest, in an editable
    install or beside other code.  Certificates must not depend on that: the local pool is emptied while a statement
    draws (private Hypothesis API; without it, nothing is changed)."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants

        original = providers._get_local_constants
    except (ImportError, AttributeError):  # pragma: no cover - another Hypothesis version
        yield
        return
    empty = Constants()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = original


class Context:
    """What a claim receives: the implementation under test, the profile, seeded RNGs and evidence recorders."""

    def __init__(self, impl: Any, profile: Profile, statement_id: str = "adhoc"):
        #: the implementation under test, seen through a :class:`~refvi.verification.protocol.Recorder` when run by
        #: the runner (calls recorded, capabilities enforced, a missing method is a skip naming it)
        self.impl = impl
        self.profile = profile
        self.statement_id = statement_id
        self.evidence: list[Evidence] = []
        self.examples = 0
        self.worst_slack: float | None = None
        #: declined instances: outside the declared capabilities, or needing a method the implementation lacks
        self.instances_skipped = 0
        #: the first few distinct decline reasons
        self.skip_reasons: list[str] = []
        #: every decline reason with its count (certificate ``declined``)
        self.decline_counts: dict[str, int] = {}
        #: declines of optional features only (refvi's affine frames): never counted against certification
        self.optional_declines = 0
        #: True for refvi itself: a missing method is then a bug (an error), never a decline
        self.strict_methods = False
        #: the exception classes that count as refusing bad input (:meth:`refuses`)
        self.refusals: tuple[type[BaseException], ...] = (ValueError, TypeError)
        #: per instance: [site, index, outcome ("ran" | "declined" | "fail" | "error"), worst slack or None]
        self.instance_log: list[list] = []
        #: the recorder's log of the last protocol calls (set by the runner; cleared at each instance)
        self.call_log: list | None = None
        #: failing checks with what produced them (:mod:`refvi.verification.reproducers`): the last raised one (a
        #: Hypothesis failure is re-run shrunk, so the last is the minimal instance), then every deferred one
        self.failures: list[dict] = []
        #: failures of probes that do not stop the statement (:meth:`refuses`): raised together at the end
        self.deferred: list[str] = []
        #: replay mode (``--replay``): {"site": k, "instance": obj}; only that instance runs
        self.replay: dict | None = None
        self._site = -1
        self._site_index = 0
        self._current: tuple | None = None  # (site, index, instance) while an instance runs
        self._probes = -1  # refuses() probes so far
        #: the tightest paper bound seen (:meth:`bound`): {"ratio": lhs/rhs, "label", "instance"} or None
        self.tightness: dict | None = None
        #: per bound (:meth:`bound`, named by its label with the numbers in it masked, :func:`check_name`): the
        #: largest lhs / rhs over the statement's instances, {"name": {"ratio", "label", "instance", "count"}}
        self.checks: dict[str, dict] = {}
        #: the weakest statistical check (:meth:`mean_leq`): {"resolution", "label", "repetitions"}, where resolution
        #: is the smallest relative violation E[X] = (1 + resolution) * bound detected with probability >= 80%
        self.power: dict | None = None
        #: measured decay exponents (:meth:`decay`): {"label", "exponent", "theorem", "horizons"}
        self.rates: list[dict] = []
        #: set by the runner's search mode (``--search``): Hypothesis seed and budget; bounds then steer the search
        self.search: dict | None = None
        #: False (the self-test): a failing draw is reported as found, not shrunk to a minimal instance
        self.shrink = True
        self._instance: Any = None
        self._in_hypothesis = False
        self._targets: dict[str, float] = {}  # search mode: the best lhs/rhs per label of the current example
        self._expect_failure = False
        #: what the statement did with the values the implementation reported (set by the runner;
        #: :mod:`refvi.verification.provenance`): None outside a run
        self.ledger: Ledger | None = None

    def given(self, value, why: str):
        """Declare a value reported by the implementation an *input* of the claim (the paper's statement is about that
        value itself, e.g. the samples of an estimator whose second moment is bounded): it is then neither checked nor
        trusted, and ``why`` is listed in the certificate.  Returns ``value``."""
        if self.ledger is not None:
            self.ledger.declare(value, why)
        return value

    def _note(self, label: str, kind: str, lhs, rhs, ok: bool) -> None:
        if self.ledger is not None:
            self.ledger.note(label, kind, lhs, rhs, ok)

    # ---- randomness -------------------------------------------------------------------------------------------
    def rng(self, stream: int | str = 0) -> np.random.Generator:
        """A generator seeded from the statement id and ``stream``: identical across runs and machines."""
        digest = hashlib.sha256(f"{self.statement_id}/{stream}".encode()).digest()
        return np.random.default_rng(int.from_bytes(digest[:8], "little"))

    def adapter(self, attr: str):
        """The sub-adapter ``attr`` of the implementation under test (``boosting`` for seed 001, ``online`` for seed
        003, ``ngvi`` for seed 004): every statement reaches its paper's protocol through this one accessor.  A
        missing sub-adapter makes the statement report ``skip`` naming it (raised by the recorder)."""
        return getattr(self.impl, attr)

    # ---- instances --------------------------------------------------------------------------------------------
    def forall_drawn(
        self, check: Callable[[Any], None], *, seeds: Iterable[int] = (0,), max_examples: int | None = None
    ) -> None:
        """:meth:`forall` for a check that builds its instance from a random generator, ``check(rng)``: first
        ``numpy.random.default_rng(s)`` for each fixed seed in ``seeds``, then Hypothesis draws
        (:data:`refvi.verification.strategies.RNG`, which shrink draw by draw to a small instance, not to a seed)."""
        from refvi.verification.strategies import RNG, rng_of

        self.forall(RNG, lambda source: check(rng_of(source)), fixed=seeds, max_examples=max_examples)

    def forall(
        self, strategy, check: Callable[[Any], None], *, fixed: Iterable[Any] = (), max_examples: int | None = None
    ) -> None:
        """Run ``check`` on each fixed instance, then on Hypothesis draws from ``strategy``.

        Draws are derandomized (same instances on every run); on failure Hypothesis shrinks to a minimal instance,
        which appears in the error message.
        """
        if self._enter_site(check):
            return
        for inst in fixed:
            if self._run_instance(check, inst):
                self.examples += 1
        n = self.profile.max_examples if max_examples is None else max_examples
        if self.search is not None and strategy is not None:
            n = int(self.search["budget"])
        if strategy is None or n <= 0:
            return
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import seed as hypothesis_seed

        counter = {"n": 0}
        phases = (Phase.explicit, Phase.generate) + ((Phase.shrink,) if self.shrink else ())
        if self.search is not None:
            phases = (Phase.explicit, Phase.generate, Phase.target, Phase.shrink)

        # Hypothesis seeds a derandomized run from a digest of this function's source (decorators included): any
        # change to the lines below, even by a formatter, changes every instance every statement draws
        # fmt: off
        @settings(max_examples=n, derandomize=self.search is None, database=None, deadline=None, print_blob=False,
                  suppress_health_check=list(HealthCheck), phases=phases)
        @given(strategy)
        def _run(inst):
            self._in_hypothesis = True
            self._targets = {}
            try:
                if self._run_instance(check, inst):
                    counter["n"] += 1
            finally:
                self._in_hypothesis = False
                if self.search is not None:
                    # one hypothesis.target call per label and example (a check may test a bound many times)
                    from hypothesis import target
                    for lab, val in self._targets.items():
                        target(val, label=lab)
        # fmt: on

        if self.search is not None:
            _run = hypothesis_seed(int(self.search["seed"]))(_run)
        with _without_local_constants():
            _run()
        self.examples += counter["n"]

    def _enter_site(self, check) -> bool:
        """Start a new instance site; in replay mode run the replayed instance if this is its site (then stop the
        claim) and return True to skip the site's own instances."""
        self._site += 1
        self._site_index = 0
        if self.replay is None:
            return False
        if self._site == self.replay["site"]:
            self._site_index = int(self.replay.get("index", 0))
            if self._run_instance(check, self.replay["instance"]):
                self.examples += 1
            raise ReplayDone()
        return True

    def _run_instance(self, check, inst) -> bool:
        """Run one instance; False if it was declined (a call outside the implementation's declared capabilities, or
        a protocol method it lacks): the statement goes on with its other instances."""
        self._instance = inst
        index = self._site_index
        self._site_index += 1
        first = len(self.evidence)
        if self.call_log is not None:
            self.call_log.clear()
        outer, self._current = self._current, (self._site, index, inst)
        try:
            check(inst)
        except (InstanceSkipped, MissingMethod) as exc:
            if isinstance(exc, MissingMethod) and self.strict_methods:
                raise
            self.decline(exc)
            self.instance_log.append([self._site, index, "declined", None])
            return False
        except CheckFailed:
            self.instance_log.append([self._site, index, "fail", None])
            raise
        except Exception as exc:
            if not type(exc).__module__.startswith("hypothesis"):  # assume() and friends are not errors
                self.note_failure(None, error=exc)
                self.instance_log.append([self._site, index, "error", None])
            raise
        finally:
            self._current = outer
        slacks = [e.slack for e in self.evidence[first:] if math.isfinite(e.slack)]
        self.instance_log.append([self._site, index, "ran", min(slacks) if slacks else None])
        return True

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

    def instance(self, check: Callable[[Any], None], inst: Any = None) -> bool:
        """Run one fixed instance outside :meth:`forall` (``check(inst)``): an instance that needs a call outside the
        implementation's declared capabilities (or a method it lacks) is counted as declined and the statement goes
        on; True if it ran."""
        if self._enter_site(check):
            return False
        if self._run_instance(check, inst):
            self.examples += 1
            return True
        return False

    def count(self, n: int = 1) -> None:
        """Count instances checked outside :meth:`forall` (fixed loops, enumerations)."""
        self.examples += int(n)

    # ---- evidence ---------------------------------------------------------------------------------------------
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
        from refvi.verification.provenance import marks_of, rows_of

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
        from refvi.verification.provenance import plain

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
        from refvi.verification.provenance import plain

        vals = np.atleast_1d(plain(values)).ravel().tolist()
        sets = [plain(a) for a in allowed] if np.ndim(plain(values)) else [plain(allowed)]
        if len(vals) != len(sets):
            self._record(label, math.nan, math.nan, "in", -math.inf, False, f"{len(vals)} values, {len(sets)} sets")
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

    def refuses(
        self, call: Callable[[], Any], *, label: str, correct=None, rtol: float = 0.0, atol: float = 0.0
    ) -> None:
        """Claim that ``call()`` (a protocol call on input outside the paper's domain) does not silently return a wrong
        answer: it raises a refusal (``ValueError`` / ``TypeError``, the protocol's convention for bad input, or an
        exception class the implementation declares in ``capabilities["refusals"]``), or, when the input has a right
        answer that a careful implementation can still compute (``correct``), returns that answer.

        Outside a Hypothesis draw a failing probe does not stop the statement: every probe runs, and the statement
        fails at the end listing all failing ones (:meth:`raise_deferred`).  Another exception type is a failing
        probe naming it; a probe declined by the capabilities, or needing a method the implementation lacks, is a
        declined probe."""
        self.examples += 1
        defer = not self._in_hypothesis
        if defer and self.call_log is not None:
            self.call_log.clear()
        self._probes += 1
        failures = len(self.deferred)
        outcome = "ran"
        try:
            out = self._probe_call(call)
        except (InstanceSkipped, MissingMethod) as exc:
            if isinstance(exc, MissingMethod) and self.strict_methods:
                raise
            self.examples -= 1
            self.decline(exc)
            outcome = "declined"
        except self.refusals as exc:
            self._record(label, 1.0, 1.0, "refused", 0.0, True, f"raised {type(exc).__name__}")
        except Exception as exc:
            self._record(
                label,
                0.0,
                1.0,
                "refused",
                -1.0,
                False,
                f"raised {type(exc).__name__}: {str(exc)[:200]!r}, which is not a refusal: the protocol's "
                f"refusals are {', '.join(c.__name__ for c in self.refusals)} (declare your library's own "
                f"in capabilities['refusals'])",
                defer=defer,
            )
        else:
            if correct is None:
                self._record(
                    label,
                    0.0,
                    1.0,
                    "refused",
                    -1.0,
                    False,
                    f"returned {_short_repr(out, 120)} instead of raising "
                    f"{' / '.join(c.__name__ for c in self.refusals)}",
                    defer=defer,
                )
            else:
                self.close(
                    out, correct, rtol=rtol, atol=atol, label=label + " (not refused: must then be right)", defer=defer
                )
        if outcome == "ran" and len(self.deferred) > failures:
            outcome = "fail"
        self.instance_log.append(["probe", self._probes, outcome, None])

    def _probe_call(self, call):
        """``call()`` with its protocol calls counted as probes (bad input) in the ledger."""
        if self.ledger is None:
            return call()
        self.ledger.in_probe = True
        try:
            return call()
        finally:
            self.ledger.in_probe = False

    def raise_deferred(self) -> None:
        """Fail with every deferred failing probe, if any (the runner calls this after the claim)."""
        if self.deferred:
            n = len(self.deferred)
            raise CheckFailed(f"{n} failing probe{'s' if n > 1 else ''}: " + " || ".join(self.deferred))

    def mean_leq(self, values, bound: float, *, alpha: float = 1e-6, label: str = "") -> None:
        """Statistical claim E[X] <= bound from i.i.d. draws ``values``.

        Fails only if the one-sided (1 - alpha) *lower* confidence bound of the mean exceeds ``bound``, so a true claim
        is rejected with probability at most ``alpha`` (CLT normal approximation; stated false-alarm rate).  Its power
        is recorded: the smallest violation it detects with probability >= 80%, relative to the bound (or to the draws'
        mean magnitude when the bound is 0) (:attr:`power`).
        """
        self._note(label, "use", values, bound, True)
        x = np.asarray(values, dtype=np.float64).view(np.ndarray).ravel()
        if x.size < 2 or not np.all(np.isfinite(x)):
            raise CheckFailed(f"{label}: need >= 2 finite Monte Carlo values, got {x.size}")
        z = _normal_quantile(1.0 - alpha)
        mean, se = float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))
        lower = mean - z * se
        self._track(mean, float(bound), label)
        # a true mean of bound + r * scale is flagged with probability >= 80% when r * scale >= (z + z_0.8) * se; the
        # scale is the bound, or for a zero bound the mean magnitude of the draws
        scale = float(bound) if bound > 0 else float(np.mean(np.abs(x)))
        if scale > 0:
            self._note_power((z + _Z_POWER) * se / scale, label, x.size)
        self._record(
            label,
            lower,
            float(bound),
            "<= (stat)",
            float(bound) - lower,
            lower <= bound,
            f"mean={mean:.6g}, se={se:.3g}, z={z:.2f} (false-alarm <= {alpha:g})",
        )

    def decay(
        self, horizons, values, exponent: float, *, slack: float = 0.2, alpha: float = 1e-6, label: str = ""
    ) -> float:
        """A rate's exponent: ``E[X_T]`` measured at >= 3 horizons ``T`` (``values[i]``: the draws at ``horizons[i]``;
        one value each when exact) decays at least like ``T^exponent``.  The measured exponent is the least-squares
        slope of ``log mean`` on ``log T``; the claim fails if its one-sided (1 - alpha) lower confidence bound
        (delta method) exceeds ``exponent + slack``.  Use on instances in the theorem's asymptotic regime, where the
        rate is attained (noise-dominated): a wrong step rule or a missing average then shows as a slower decay.
        Returns the measured exponent."""
        self._note(label, "use", values, horizons, True)
        values = [np.asarray(v, dtype=np.float64).view(np.ndarray) for v in values]
        T = np.asarray(horizons, dtype=np.float64).view(np.ndarray)
        if T.size < 3 or len(values) != T.size:
            raise CheckFailed(f"{label}: a decay exponent needs >= 3 horizons with values, got {T.size}")
        means, var_log = [], []
        for v in values:
            x = np.asarray(v, dtype=np.float64).ravel()
            if x.size < 1 or not np.all(np.isfinite(x)) or x.mean() <= 0:
                raise CheckFailed(f"{label}: need positive finite values at every horizon")
            means.append(float(x.mean()))
            var_log.append(0.0 if x.size < 2 else float(x.var(ddof=1) / x.size) / means[-1] ** 2)
        lt = np.log(T)
        w = (lt - lt.mean()) / float(np.sum((lt - lt.mean()) ** 2))
        slope = float(w @ np.log(means))
        se = math.sqrt(float(w**2 @ np.asarray(var_log)))
        lower = slope - _normal_quantile(1.0 - alpha) * se
        self._record(
            label,
            lower,
            exponent + slack,
            "<= (stat)",
            exponent + slack - lower,
            lower <= exponent + slack,
            f"measured exponent {slope:.3f} (se {se:.2g}) over T = {[int(t) for t in T]}, theorem's "
            f"{exponent:g}, slack {slack:g}",
        )
        self.rates.append(
            {"label": label, "exponent": slope, "theorem": float(exponent), "horizons": [int(t) for t in T]}
        )
        return slope

    def mean_close(self, values, target, *, alpha: float = 1e-6, atol: float = 0.0, label: str = "") -> None:
        """Statistical claim E[X] == target for vector draws (rows = draws), per-coordinate z-tests with a
        Bonferroni correction so that the joint false-alarm rate is at most ``alpha``.  Its power is recorded: the
        smallest bias, relative to ``max |target|`` (or to the draws' magnitude for a zero target), detected with
        probability >= 80% (:attr:`power`)."""
        marked = (values, target)
        X = np.asarray(values, dtype=np.float64).view(np.ndarray)
        X = X.reshape(X.shape[0], -1)
        t = np.asarray(target, dtype=np.float64).view(np.ndarray).ravel()
        if X.shape[1] != t.size:
            raise CheckFailed(f"{label}: {X.shape[1]} coordinates drawn, target has {t.size}")
        z = _normal_quantile(1.0 - alpha / (2.0 * t.size))
        mean = X.mean(axis=0)
        se = X.std(axis=0, ddof=1) / math.sqrt(X.shape[0])
        excess = np.abs(mean - t) - z * se - atol
        scale = float(np.max(np.abs(t))) if t.size else 0.0
        scale = scale if scale > 0 else float(np.max(np.mean(np.abs(X), axis=0), initial=0.0))
        if scale > 0:
            # a bias of resolution * scale (max |target|, or the draws' magnitude for a zero target) in the worst
            # coordinate is flagged with probability >= 80%
            self._note_power((z + _Z_POWER) * float(np.max(se)) / scale, label, X.shape[0])
        i = int(np.argmax(excess))
        ok = bool(np.all(excess <= 0))
        self._note(label, "compare", *marked, ok)
        self._record(
            label,
            float(mean[i]),
            float(t[i]),
            "== (stat)",
            float(-np.max(excess)),
            ok,
            f"worst coordinate {i}: |mean - target| = {abs(mean[i] - t[i]):.3g}, z*se = {z * se[i]:.3g} "
            f"(joint false-alarm <= {alpha:g})",
        )

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


@dataclasses.dataclass(frozen=True)
class Statement:
    """One numbered result made executable."""

    id: str
    title: str
    source: str
    kind: Kind
    claim: Callable[[Context], None]
    erratum: str | None = None
    profiles: tuple[str, ...] = ("ci", "deep")
    uses: tuple[str, ...] | None = None
    """The protocol methods (dotted: ``energy``, ``online.run``) the statement calls; ``()`` declares an
    *oracle-only* check (true of the paper, exercising no implementation); None: not declared."""
    loose: tuple[tuple[str, str], ...] = ()
    """(check name, why) for each bound that no instance brings within 10x (its catalogue row's ``loose``: the reason,
    with the measured ratio, is shown in the certificate table and the fidelity page)."""

    @property
    def printed(self) -> str:
        return "erratum" if self.erratum else "holds"

    @property
    def oracle_only(self) -> bool:
        return self.uses == ()


REGISTRY: dict[str, Statement] = {}


def statement(
    id: str,
    *,
    title: str | None = None,
    source: str | None = None,
    kind: Kind | None = None,
    erratum: str | None = None,
    profiles: tuple[str, ...] | None = None,
    uses: Iterable[str] | None = None,
):
    """Register ``claim(ctx)`` as the statement ``id`` (``<seed>.<kind><number>``, e.g. ``000.thm3``).

    With the id alone (the paper packages), what the statement states -- title, source, kind, erratum, profiles and
    ``uses``, the protocol methods the claim calls (``()``: an oracle-only check) -- is the row ``[statement."id"]``
    of its package's ``catalog.toml`` (:mod:`refvi.verification.catalog`).  Statements defined elsewhere (tests,
    extensions) give ``title``, ``source`` and ``kind`` (and optionally the rest) inline instead."""
    _check_id(id)
    inline = dict(title=title, source=source, kind=kind, erratum=erratum, profiles=profiles, uses=uses)
    given = {k for k, v in inline.items() if v is not None}
    if given and not {"title", "source", "kind"} <= given:
        raise TypeError(f"statement {id}: give title=, source= and kind= inline, or nothing (its catalog row)")

    def deco(fn: Callable[[Context], None]) -> Callable[[Context], None]:
        if id in REGISTRY:
            raise ValueError(f"statement {id} registered twice")
        meta: dict[str, Any] = inline if given else _catalog_meta(id, fn)
        if meta["kind"] not in KINDS:
            raise ValueError(f"statement {id}: kind must be one of {KINDS}, got {meta['kind']!r}")
        used = None if meta["uses"] is None else tuple(sorted(set(meta["uses"])))
        REGISTRY[id] = Statement(
            id,
            meta["title"],
            meta["source"],
            meta["kind"],
            fn,
            meta["erratum"],
            tuple(meta["profiles"] or ("ci", "deep")),
            used,
            tuple(sorted((meta.get("loose") or {}).items())),
        )
        return fn

    return deco


def _catalog_meta(sid: str, fn) -> dict:
    from refvi.verification import catalog

    row = catalog.row("statement", sid, fn.__module__)
    return dict(
        title=row["title"],
        source=f"{row['citation']}, {row['source']}",
        kind=row["kind"],
        erratum=row.get("erratum"),
        profiles=row.get("profiles"),
        uses=row["uses"],
        loose=row.get("loose"),
    )


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


def _check_id(sid: str) -> None:
    seed, _, rest = sid.partition(".")
    ok = len(seed) == 3 and seed.isdigit() and rest == rest.lower() and rest != ""
    if ok:
        ok = any(
            rest.startswith(k) and (rest[len(k) :].isdigit() or (k == "claim" and rest[len(k) :].startswith("-")))
            for k in ID_KINDS
        )
    if not ok:
        raise ValueError(
            f"bad statement id {sid!r}: expected '<seed>.<kind><number>' or '<seed>.claim-<name>' "
            f"with kind in {ID_KINDS}"
        )


def _short_repr(inst, limit: int = 300) -> str | None:
    if inst is None:
        return None
    text = repr(inst)
    return text if len(text) <= limit else text[:limit] + "..."


def _normal_quantile(p: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(p))


#: z_{0.8}: a statistical check's resolution is stated at 80% power
_Z_POWER = 0.8416212335729143
