"""The instances a statement runs: fixed named ones and derandomized Hypothesis draws (:meth:`.Context.forall`,
:meth:`.Context.forall_drawn`, :meth:`.Context.instance`).

Every call is a *site* (numbered 0, 1, ... in the order the claim reaches them) and each instance run there has an
index; the instance log (site, index, outcome, worst slack) makes certificates comparable instance by instance, and
``--replay`` runs one instance again (:mod:`refvi.verification.certificate.reproducers`).  An instance outside the
implementation's declared capabilities, or needing a method it lacks, is *declined* and the statement goes on.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterable
from typing import Any

from refvi.verification.protocol.recorder import InstanceSkipped, MissingMethod
from refvi.verification.statement.evidence import CheckFailed, EvidenceLog, ReplayDone
from refvi.verification.statement.profiles import Profile


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


class Instances(EvidenceLog):
    """The instance loop of a :class:`~refvi.verification.statement.Context`."""

    profile: Profile
    examples: int
    strict_methods: bool
    instance_log: list[list]
    replay: dict | None
    shrink: bool
    _site: int
    _site_index: int

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
