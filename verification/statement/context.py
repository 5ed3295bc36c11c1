"""The context a claim runs in: :class:`.Context`, a thin facade over the parts of a statement run, each with one
job -- the instances it runs (:mod:`.statement.instances`), the exact checks (:mod:`.statement.checks`), the
bad-input probes (:mod:`.statement.probes`), the statistical checks (:mod:`.statement.statistics`) and the evidence
log they all record into (:mod:`.statement.evidence`).  The context itself holds the state those parts share, the
implementation under test and the profile, and gives the claim seeded random generators and the sub-adapters.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from refvi.verification.statement.evidence import Evidence
from refvi.verification.statement.instances import Instances
from refvi.verification.statement.probes import Probes
from refvi.verification.statement.profiles import Profile
from refvi.verification.statement.provenance import Ledger
from refvi.verification.statement.statistics import Statistics


class Context(Instances, Probes, Statistics):
    """What a claim receives: the implementation under test, the profile, seeded RNGs and evidence recorders.

    Its methods come from its parts, one job each (:mod:`.statement.instances`, :mod:`.statement.checks`,
    :mod:`.statement.probes`, :mod:`.statement.statistics`, :mod:`.statement.evidence`); it holds the state they
    share."""

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
        #: True for refvi itself: a missing method is then a bug (an error), never a decline, and where a probe
        #: accepts a refusal or the right value, refvi's documented refusal is what its statement requires
        self.strict_methods = False
        #: the exception classes that count as refusing bad input (:meth:`refuses`)
        self.refusals: tuple[type[BaseException], ...] = (ValueError, TypeError)
        #: per instance: [site, index, outcome ("ran" | "declined" | "fail" | "error"), worst slack or None]
        self.instance_log: list[list] = []
        #: the recorder's log of the last protocol calls (set by the runner; cleared at each instance)
        self.call_log: list | None = None
        #: failing checks with what produced them (:mod:`.certificate.reproducers`): the last raised one (a
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
        #: :mod:`refvi.verification.statement.provenance`): None outside a run
        self.ledger: Ledger | None = None

    def given(self, value, why: str):
        """Declare a value reported by the implementation an *input* of the claim (the paper's statement is about that
        value itself, e.g. the samples of an estimator whose second moment is bounded): it is then neither checked nor
        trusted, and ``why`` is listed in the certificate.  Returns ``value``."""
        if self.ledger is not None:
            self.ledger.declare(value, why)
        return value

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
