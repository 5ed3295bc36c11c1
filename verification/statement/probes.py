"""Probes of bad input (:meth:`.Context.refuses`): a protocol call outside the paper's domain must be refused (or, when
the input still has a right answer, return it).  Outside a Hypothesis draw a failing probe does not stop the
statement: every probe runs and the statement fails at the end listing all of them (:meth:`.Context.raise_deferred`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from refvi.verification.protocol.recorder import InstanceSkipped, MissingMethod
from refvi.verification.statement.checks import Checks
from refvi.verification.statement.evidence import CheckFailed, _short_repr


class Probes(Checks):
    """The bad-input probes of a :class:`~refvi.verification.statement.Context`."""

    examples: int
    strict_methods: bool
    refusals: tuple[type[BaseException], ...]
    instance_log: list[list]
    _probes: int

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
            self._not_refused(
                label,
                f"raised {type(exc).__name__}: {str(exc)[:200]!r}, which is not a refusal: the protocol's "
                f"refusals are {', '.join(c.__name__ for c in self.refusals)} (declare your library's own "
                f"in capabilities['refusals'])",
                defer,
            )
        else:
            if correct is None:
                self._not_refused(
                    label,
                    f"returned {_short_repr(out, 120)} instead of raising "
                    f"{' / '.join(c.__name__ for c in self.refusals)}",
                    defer,
                )
            else:
                self.close(
                    out, correct, rtol=rtol, atol=atol, label=label + " (not refused: must then be right)", defer=defer
                )
        if outcome == "ran" and len(self.deferred) > failures:
            outcome = "fail"
        self.instance_log.append(["probe", self._probes, outcome, None])

    def refuses_shapes(
        self, call: Callable[..., Any], args: dict[str, Any], fixed: dict[str, tuple[int, ...]], *, label: str
    ) -> None:
        """Claim that ``call(**args)`` refuses an argument of the wrong length: for each ``name: axes`` of ``fixed``
        (the axes of ``args[name]`` whose lengths the other arguments fix), the call with that axis one entry longer
        (its last entry repeated) and, when it has more than one, one entry shorter (the last dropped) is a
        :meth:`refuses` probe.  The values stay in the domain: only the shape is wrong."""
        for name, axes in fixed.items():
            a = np.asarray(args[name])
            for ax in axes:
                n = a.shape[ax]
                variants = [(n + 1, np.concatenate([a, np.take(a, [n - 1], axis=ax)], axis=ax))]
                if n > 1:
                    variants.insert(0, (n - 1, np.take(a, np.arange(n - 1), axis=ax)))
                for length, bad in variants:
                    self.refuses(
                        functools.partial(call, **{**args, name: bad}),
                        label=f"{label}: {name} of shape {bad.shape} (length {length} along axis {ax}, where the "
                        f"other arguments fix {n})",
                    )

    def _not_refused(self, label: str, detail: str, defer: bool) -> None:
        """Record a failing probe: the bad input was neither refused nor answered right (``detail`` says what)."""
        self._record(label, 0.0, 1.0, "refused", -1.0, False, detail, defer=defer)

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
