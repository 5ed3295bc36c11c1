"""What a statement is: the verification-statement model.

A statement is one numbered result of a paper made executable.  It is a function ``claim(ctx)`` registered with
:func:`statement` (:mod:`.statement.decorator`); the function generates instances (fixed named ones and Hypothesis
draws through :meth:`Context.forall`, :mod:`.statement.instances`) and records evidence through :meth:`Context.leq`,
:meth:`Context.close`, :meth:`Context.mean_leq`, ... (:mod:`.statement.checks`, :mod:`.statement.statistics`,
:mod:`.statement.probes`).  Each evidence call either passes (and its slack is kept, :mod:`.statement.evidence`) or
raises :class:`CheckFailed` naming the left side, the right side and the tolerance.  :class:`Context`
(:mod:`.statement.context`) is the facade a claim receives; :mod:`.statement.provenance` follows every value the
implementation reported through the checks.

Slack convention (reported as ``worst_slack`` in the certificate): for an inequality ``lhs <= rhs`` the slack is
``rhs - lhs`` (>= 0 when it holds before tolerance, negative but within the tolerance when it holds only within it);
for an equality it is ``-max|lhs - rhs|`` (0 is exact, so a passing equality has a slack <= 0 whose magnitude is the
largest error accepted); for a statistical check it is the distance from the confidence bound to the claimed bound.
``worst_slack`` is the minimum over all evidence of the run: a passing statement may have a negative one.

Instances: every :meth:`Context.forall` / :meth:`Context.forall_drawn` / :meth:`Context.instance` call is a *site*
(numbered 0, 1, ... in the order the claim reaches them) and each instance run there has an index; the instance log
(site, index, outcome, worst slack) makes certificates comparable instance by instance, and a failure names its site
and instance so that ``--replay`` can run that one instance again (:mod:`refvi.verification.certificate.reproducers`).

The statement modules import what they use from here (``from refvi.verification.statement import statement,
scalar``): the names below are this package's public interface.
"""

from refvi.verification.protocol.recorder import InstanceSkipped, MissingMethod
from refvi.verification.statement.context import Context
from refvi.verification.statement.decorator import ID_KINDS, KINDS, REGISTRY, Kind, Statement, statement
from refvi.verification.statement.evidence import CheckFailed, Evidence, ReplayDone, check_name, tightness
from refvi.verification.statement.profiles import PROFILES, Profile
from refvi.verification.statement.provenance import Ledger, computed_from, derived, hint, scalar

__all__ = [
    "CheckFailed",
    "Context",
    "Evidence",
    "ID_KINDS",
    "InstanceSkipped",
    "KINDS",
    "Kind",
    "Ledger",
    "MissingMethod",
    "PROFILES",
    "Profile",
    "REGISTRY",
    "ReplayDone",
    "Statement",
    "check_name",
    "computed_from",
    "derived",
    "hint",
    "scalar",
    "statement",
    "tightness",
]
