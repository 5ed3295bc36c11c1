"""Which values a statement took from the implementation under test, and which of them it checked.

Every value a protocol method returns is *reported*: the recorder (:mod:`.protocol.recorder`) hands the statement
a marked copy -- arrays as :class:`.Reported` (a NumPy subclass), floats, ints and bools as :class:`.ReportedFloat`,
:class:`.ReportedInt`, :class:`.ReportedBool`, records as :class:`.ReportedRecord` (reading a field marks it) -- with a
*token* per call, field and row (index along the first axis: ``run.f[t]`` is its own value).  Marks survive NumPy
arithmetic and functions (``__array_ufunc__`` / ``__array_function__``), Python arithmetic on the scalars, the
oracles (:func:`.pass_marks_through`), and inside the statement modules ``np.asarray`` / ``np.array``, ``math``
functions, :func:`.scalar` (the statements' ``float``) and arrays filled element by element (:func:`.instrument`).
The implementation itself always receives plain values.

Evidence (:class:`~refvi.verification.statement.Context`) tells the :class:`.Ledger` what it did with marked values:

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

The parts: :mod:`.provenance.marks` (marked values and their marks), :mod:`.provenance.ledger` (what one statement
run did with them), :mod:`.provenance.instrument` (the marking NumPy and math of the statement modules, the oracles
passing marks through).
"""

from refvi.verification.statement.provenance.instrument import (
    Collector,
    MarkingMath,
    MarkingNumpy,
    derived,
    instrument,
    pass_marks_through,
)
from refvi.verification.statement.provenance.ledger import Ledger, Use
from refvi.verification.statement.provenance.marks import (
    EMPTY,
    ROW_LIMIT,
    Reported,
    ReportedBool,
    ReportedFloat,
    ReportedInt,
    ReportedRecord,
    ReportedScalar,
    Rows,
    computed_from,
    hint,
    marks_of,
    plain,
    rows_of,
    scalar,
    tag,
)

__all__ = [
    "EMPTY",
    "ROW_LIMIT",
    "Collector",
    "Ledger",
    "MarkingMath",
    "MarkingNumpy",
    "Reported",
    "ReportedBool",
    "ReportedFloat",
    "ReportedInt",
    "ReportedRecord",
    "ReportedScalar",
    "Rows",
    "Use",
    "computed_from",
    "derived",
    "hint",
    "instrument",
    "marks_of",
    "pass_marks_through",
    "plain",
    "rows_of",
    "scalar",
    "tag",
]
