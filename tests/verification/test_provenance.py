"""The provenance ledger (refvi.verification.statement.provenance): values an implementation reports are marked,
marks survive the arithmetic a statement does, a comparison with an oracle or a recomputation checks them (by induction along a
recurrence), and a bound on an unchecked value is reported as trusted, naming the method, the field and the check."""

import dataclasses

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from refvi.verification.running.runner import run_statement
from refvi.verification.statement import PROFILES, CheckFailed, Context, Statement
from refvi.verification.statement import provenance as P
from refvi.verification.statement.provenance.instrument import _passing
from refvi.verification.statement.provenance.ledger import Use
from refvi.verification.statement.provenance.marks import is_reported


@dataclasses.dataclass(frozen=True)
class Run:
    W: np.ndarray
    gamma: np.ndarray
    f: float


def _ledger_with_run(T=4):
    led = P.Ledger()
    W = np.zeros((T + 1, 2))
    W[0] = [1.0, 0.0]
    gamma = 2.0 / (np.arange(T) + 2.0)
    for t in range(T):
        W[t + 1] = (1 - gamma[t]) * W[t] + gamma[t] * np.array([0.0, 1.0])
    run = led.mark(Run(W, gamma, 0.5), led.call("fw"))
    return led, run


def _ctx(led):
    ctx = Context(None, PROFILES["ci"], "test")
    ctx.ledger = led
    return ctx


def test_marks_survive_arithmetic_numpy_and_python_scalars():
    led, run = _ledger_with_run()
    W = run.W
    assert isinstance(W, P.Reported) and W.rows is not None and len(W.rows) == 5
    for value in (W * 2.0, np.exp(W), W @ np.ones(2), np.sum(W), np.linalg.norm(W[1]), run.f + 1.0, -run.f,
                  2.0 ** run.f, np.float64(3.0) * run.f, P.scalar(W[1, 0]), P.MarkingMath().sqrt(run.f)):
        assert P.marks_of(value), type(value)
    assert P.marks_of(W[2]) == W.rows[2] and P.marks_of(W[1:3]) == W.rows[1] | W.rows[2]
    assert W[1:3].rows == W.rows[1:3] and W[[0, 2]].rows == (W.rows[0], W.rows[2])
    assert W[...].rows == W.rows and W[...,].rows == W.rows  # every row, however the Ellipsis is written
    assert W[..., 0].rows is None and P.marks_of(W[..., 0]) == W.marks  # a column: rows gone, every mark kept
    assert P.marks_of(W.T) == W.marks and W.T.rows is None  # a transposed array has no rows
    assert not P.marks_of(np.ones(3) * 2.0)


def test_plain_strips_every_mark_for_the_implementation():
    led, run = _ledger_with_run()
    stripped = P.plain((run.W, [run.f, {"g": run.gamma}], run))
    assert type(stripped[0]) is np.ndarray and type(stripped[1][0]) is float
    assert type(stripped[1][1]["g"]) is np.ndarray and isinstance(stripped[2], Run)


def test_a_bound_on_an_unchecked_value_is_trusted_and_named():
    led, run = _ledger_with_run()
    ctx = _ctx(led)
    ctx.bound(run.f, 1.0, label="f <= 1")
    (t,) = led.summary()["trusted"]
    assert (t["method"], t["field"], t["label"], t["uses"]) == ("fw", "f", "f <= 1", 1)
    assert led.summary()["methods"]["fw"] == {"calls": 1, "checked": 0, "used": 1, "probes": 0}
    # counted per use: the same value bounded again under the same label, and three rows of W under another
    ctx.bound(run.f, 2.0, label="f <= 1")
    for t in (1, 2, 3):
        ctx.bound(run.W[t, 0], 1.0, label="W <= 1")
    assert [(t["field"], t["uses"]) for t in led.summary()["trusted"]] == [("W", 3), ("f", 2)]


def test_a_value_on_either_side_of_a_bound_is_used_and_seen():
    """A reported value on the right side of a bound counts as used, like one on the left, and is not 'unseen'."""
    led = P.Ledger()
    lhs = led.mark(0.5, led.call("left"))
    rhs = led.mark(1.0, led.call("right"))
    _ctx(led).bound(0.25, rhs, label="0.25 <= right")
    _ctx(led).bound(lhs, 2.0, label="left <= 2")
    summary = led.summary()
    assert summary["methods"]["right"] == {"calls": 1, "checked": 0, "used": 1, "probes": 0}
    assert summary["methods"]["left"] == {"calls": 1, "checked": 0, "used": 1, "probes": 0}
    assert summary["unseen"] == []
    assert {t["method"] for t in summary["trusted"]} == {"left", "right"}


def test_a_comparison_with_an_oracle_checks_the_value():
    led, run = _ledger_with_run()
    ctx = _ctx(led)
    ctx.close(run.f, 0.5, label="f = oracle")
    ctx.bound(run.f, 1.0, label="f <= 1")
    assert led.summary()["trusted"] == []
    assert led.summary()["methods"]["fw"]["checked"] == 1


def test_a_recurrence_checks_a_trajectory_by_induction_and_only_then():
    led, run = _ledger_with_run()
    ctx = _ctx(led)
    W, g = run.W, run.gamma
    T = len(g)
    e = np.array([0.0, 1.0])
    ctx.close(g, 2.0 / (np.arange(T) + 2.0), label="the fixed step")
    ctx.close(W[1:], [(1 - g[t]) * W[t] + g[t] * e for t in range(T)], label="W[t+1] from W[t]")
    ctx.bound(np.sum(W[-1]), 1.0, label="mass")
    # without the start, nothing is checked: the recurrence only relates reported rows to each other
    assert [x["field"] for x in led.summary()["trusted"]] == ["W"]
    ctx.close(W[0], [1.0, 0.0], label="W[0] is the start")
    assert led.summary()["trusted"] == []


def test_a_self_consistent_lie_is_not_checked():
    """Two reported values compared with each other check neither (the average equals the mean of iterates that
    nothing checked)."""
    led = P.Ledger()
    its = led.mark(np.array([[1.0], [3.0]]), led.call("run"))
    avg = led.mark(np.array([2.0]), led.call("average"))
    ctx = _ctx(led)
    ctx.close(avg, np.mean(its, axis=0), label="average = mean of the iterates")
    ctx.bound(avg[0], 5.0, label="average <= 5")
    assert {t["method"] for t in led.summary()["trusted"]} == {"average"}
    ctx.close(its, [[1.0], [3.0]], label="iterates = oracle's")
    assert led.summary()["trusted"] == []


def test_given_inputs_are_neither_checked_nor_trusted():
    led, run = _ledger_with_run()
    ctx = _ctx(led)
    ctx.given(run.f, "the claim is about the reported objective itself")
    ctx.bound(run.f, 1.0, label="f <= 1")
    s = led.summary()
    assert s["trusted"] == [] and s["methods"]["fw"]["checked"] == 0
    assert s["given"] == [("fw", "f", "the claim is about the reported objective itself")]


def test_arrays_a_statement_fills_collect_marks_row_by_row():
    led, run = _ledger_with_run()
    marking = P.MarkingNumpy()
    kl = marking.empty(5)
    for t in range(5):
        kl[t] = float(np.sum(P.plain(run.W[t]))) if t == 0 else np.sum(run.W[t])
    assert kl.rows[0] == P.EMPTY and kl.rows[3] == run.W.rows[3]
    assert P.marks_of(marking.asarray([run.f, 2.0])) == P.marks_of(run.f)
    assert marking.asarray(run.W).rows == run.W.rows


def test_oracles_and_math_pass_marks_through_closures_included():
    led, run = _ledger_with_run()

    def oracle(fn, x):
        return fn(x) * 2.0

    wrapped = _passing(oracle)
    W = run.W
    assert P.marks_of(wrapped(lambda x: x + 1.0, 1.0)) == P.EMPTY
    assert P.marks_of(wrapped(lambda x: x + W[1, 0], 1.0)) == W.marks  # what it captured: all of W
    assert P.marks_of(P.MarkingMath().log(run.f))


def test_an_oracle_given_a_reported_value_by_keyword_marks_its_result_with_it():
    """The oracle gets the plain value and its result carries the marks, whether the reported value is passed
    positionally or by keyword (alone, or beside positional arguments)."""
    led, run = _ledger_with_run()
    seen = []

    def oracle(x, scale=1.0):
        seen.append((is_reported(x), is_reported(scale)))
        return np.asarray(x) * scale

    wrapped = _passing(oracle)
    for call in (lambda: wrapped(run.W), lambda: wrapped(x=run.W), lambda: wrapped(np.ones((5, 2)), scale=run.f)):
        out = call()
        assert P.marks_of(out) and not any(seen[-1]), seen[-1]
    assert P.marks_of(wrapped(x=np.ones(2), scale=2.0)) == P.EMPTY


def test_bools_and_ints_are_checked_with_equal():
    led = P.Ledger()
    ok = led.mark(True, led.call("in_range"))
    k = led.mark(np.int64(3), led.call("lmo"))
    assert ok and ok == True and isinstance(k, int)  # noqa: E712
    no = led.mark(False, led.call("in_range"))  # a reported bool equals its own value only (False != True, 0)
    assert ok != False and no == False and no != True and ok == 1 and no != 1  # noqa: E712
    ctx = _ctx(led)
    ctx.true(ok, label="the implementation says so")
    assert led.summary()["trusted"][0]["method"] == "in_range"
    ctx.equal(ok, True, label="the rule's answer")
    ctx.equal(k, 3, label="the oracle's argmin")
    s = led.summary()
    assert s["trusted"] == [] and s["methods"]["lmo"]["checked"] == 1


def test_probe_calls_are_counted_as_probes():
    led = P.Ledger()
    ctx = _ctx(led)

    class Impl:
        def energy(self):
            raise ValueError("bad")

    ctx.impl = Impl()
    led.in_probe = True
    led.call("energy")
    led.in_probe = False
    assert led.summary()["methods"]["energy"]["probes"] == 1


def test_the_runner_reports_values_trusted_and_unseen_per_statement():
    class Impl:
        name = "toy"

        def smoothness(self, target):
            return 2.0

        def strong_convexity(self, target):
            return 0.5

    def claim(ctx):
        M = ctx.impl.smoothness(None)
        mu = ctx.impl.strong_convexity(None)
        ctx.close(M, 2.0, label="M = oracle")
        ctx.bound(mu, M, label="mu <= M")

    st = Statement("000.claim-toy", "toy", "here", "exact", claim, uses=("smoothness", "strong_convexity"))
    rec = run_statement(st, Impl())
    assert rec["verdict"] == "pass"
    assert rec["values"]["smoothness"]["checked"] == 1 and rec["values"]["strong_convexity"]["used"] == 1
    assert [t["method"] for t in rec["trusted"]] == ["strong_convexity"]
    assert rec["checks"]["mu <= M"]["tightness"] == pytest.approx(0.25)


def test_a_call_inside_a_refusal_probe_is_counted_as_a_probe_not_as_a_call_to_check():
    """ctx.refuses marks the implementation's calls it makes as probes: a probe the implementation answers (here
    wrongly: it should refuse) counts in ``probes``, apart from the calls whose values a statement checks."""

    class Impl:
        name = "toy"

        def smoothness(self, target):
            return 2.0

    def claim(ctx):
        ctx.refuses(lambda: ctx.impl.smoothness("not a target"), label="must refuse")
        ctx.close(ctx.impl.smoothness("t"), 2.0, label="M = oracle")

    st = Statement("000.claim-toy", "toy", "here", "exact", claim, uses=("smoothness",))
    rec = run_statement(st, Impl())
    assert rec["verdict"] == "fail" and "must refuse" in rec["detail"]
    assert rec["values"]["smoothness"] == {"calls": 2, "checked": 1, "used": 0, "probes": 1}


def test_an_array_filled_at_a_reported_index_depends_on_the_index():
    led = P.Ledger()
    k = led.mark(np.int64(2), led.call("lmo"))
    e = P.MarkingNumpy().zeros(4)
    e[k] = 1.0
    assert P.marks_of(e) == P.marks_of(k)


def test_a_comparison_checks_the_other_side_only_when_this_side_is_all_checked():
    led = P.Ledger()
    a = led.mark(np.array([1.0]), led.call("a"))
    b = led.mark(np.array([2.0]), led.call("b"))
    c = led.mark(np.array([3.0]), led.call("c"))
    ctx = _ctx(led)
    ctx.close(a, [1.0], label="a = oracle")
    ctx.close(c, a + b, label="c = a + b")  # b is not checked: c is not
    ctx.bound(c[0], 10.0, label="c <= 10")
    assert {t["method"] for t in led.summary()["trusted"]} == {"c"}
    ctx.close(b, [2.0], label="b = oracle")
    assert led.summary()["trusted"] == []
    assert {m: v["checked"] for m, v in led.summary()["methods"].items()} == {"a": 1, "b": 1, "c": 1}


def test_a_failing_check_names_the_method_field_and_row_that_reported_each_side():
    """A fail's detail says who reported the side that is wrong, down to the row of the worst element (a detail
    without it, or naming every row, fails this); the oracle's side was reported by no one."""
    led, run = _ledger_with_run()
    ctx = _ctx(led)
    oracle = P.plain(run.W).copy()
    oracle[3, 1] += 1.0
    with pytest.raises(CheckFailed) as failed:
        ctx.close(run.W, oracle, atol=1e-9, label="W = oracle")
    msg = str(failed.value)
    assert "worst element at index (3, 1); lhs reported by fw (call 1 of the statement): W row 3)" in msg
    assert "rhs reported" not in msg


def test_a_record_method_returns_reported_values_and_a_class_field_stays_a_class():
    """``run.sample(...)`` on a reported record is the implementation computing: its value is marked as that call's
    (a statement cannot bound it unchecked); a field holding a class is data, returned as it is."""

    class Sampler:
        kind = np.float64

        def sample(self, n):
            return np.arange(float(n))

    led = P.Ledger()
    rec = led.mark(Sampler(), led.call("sampler"))
    draws = rec.sample(3)
    assert is_reported(draws) and np.array_equal(P.plain(draws), [0.0, 1.0, 2.0])
    assert rec.kind is np.float64


def test_plain_strips_six_levels_of_containers_and_ends_on_a_cycle():
    """plain() unmarks lists and tuples six levels deep; a container deeper than that is passed on as it is (the guard
    that ends the recursion on a container that holds itself)."""
    from refvi.verification.statement.provenance.marks import ReportedFloat, plain

    x = ReportedFloat(1.5, frozenset({3}))

    def nest(value, k):
        for i in range(k):
            value = [value] if i % 2 else (value,)
        return value

    def inner(value, k):
        for _ in range(k):
            value = value[0]
        return value

    assert type(inner(plain(nest(x, 6)), 6)) is float
    deep = inner(plain(nest(x, 7)), 7)
    assert isinstance(deep, ReportedFloat) and deep.marks == {3}
    # dicts nest the same way: six levels unmarked, the seventh passed on as it is
    def nest_dict(value, k):
        for _ in range(k):
            value = {"v": value}
        return value

    def inner_dict(value, k):
        for _ in range(k):
            value = value["v"]
        return value

    assert type(inner_dict(plain(nest_dict(x, 6)), 6)) is float
    assert isinstance(inner_dict(plain(nest_dict(x, 7)), 7), ReportedFloat)
    cycle = [x]
    cycle.append(cycle)
    out = plain(cycle)
    assert type(out[0]) is float and type(out[1][1][1][1][1][0]) is float and out[1][1][1][1][1][1] is cycle


_SIDE = st.frozensets(st.integers(0, 5), max_size=2)  # small: chains of single tokens are common


@settings(max_examples=300, deadline=None)
@given(
    uses=st.lists(st.tuples(_SIDE, _SIDE, st.sampled_from(["compare", "use"]), st.booleans()), max_size=25),
    given_=st.frozensets(st.integers(0, 5), max_size=2),
)
@example(  # a chain of single tokens from an input, into a side of two that then checks its partner, and back
    uses=[(frozenset({0}), frozenset({1}), "compare", True), (frozenset({1}), frozenset({2}), "compare", True),
          (frozenset({2, 3}), frozenset({4}), "compare", True), (frozenset({4}), frozenset({5}), "compare", True),
          (frozenset({5}), frozenset({3}), "compare", True)],
    given_=frozenset({0}),
)
def test_checked_is_the_fixpoint_of_the_passing_comparisons(uses, given_):
    """``Ledger.checked`` (a worklist, single-token pairs as graph edges) against the definition iterated to its
    fixpoint: a passing comparison one of whose sides is all checked (or empty: an oracle) checks the other side."""
    led = P.Ledger()
    led.uses = [Use("u", kind, (a, b), passed) for a, b, kind, passed in uses]
    led.given = {t: "input" for t in given_}
    done, changed = set(given_), True
    while changed:
        changed = False
        for a, b, kind, passed in uses:
            if kind != "compare" or not passed:
                continue
            for this, other in ((a, b), (b, a)):
                if this <= done and not other <= done:
                    done |= other
                    changed = True
    assert led.checked() == done - given_


def test_a_closure_carries_what_it_captured_and_two_that_capture_each_other_end():
    """An integrand handed to an oracle has the marks of the values it captured (one level of closures: a closure
    inside it is not followed), and two inner functions that call each other do not recurse without end."""
    led = P.Ledger()
    x = led.mark(np.array([1.0, 2.0]), led.call("x"))

    def integrand(s):
        return s * x[0]

    assert P.marks_of(integrand) == x.marks

    def even(n):
        return n == 0 or odd(n - 1)

    def odd(n):
        return n != 0 and even(n - 1) and x[1] > 0

    assert P.marks_of(odd) == x.marks
    assert P.marks_of(even) == P.EMPTY  # odd is a closure inside it: not followed
    assert P.marks_of(lambda: even(3)) == P.EMPTY


def test_a_failing_checks_detail_names_a_scalar_field_without_a_row():
    """A reported scalar, a record's field and an array's row are described as what they are: no "row" for the first
    two (a token's block says whether its tokens are rows)."""
    led = P.Ledger()
    x = led.mark(2.0, led.call("energy"))
    W = led.mark(np.zeros((3, 2)), led.call("run"), "W")
    assert led.describe(P.marks_of(x)) == "energy (call 1 of the statement): value"
    assert led.describe(W.rows[2]) == "run (call 2 of the statement): W row 2"
    assert led.describe(P.marks_of(W)) == "run (call 2 of the statement): W rows 0..2"


def test_a_field_read_but_never_in_evidence_is_unseen_and_a_probe_reads_nothing():
    """``unseen``: the fields a statement read from a record and never put in a check (a value it ignored, or a mark
    lost on the way), by method and field; what a bad-input probe's call returned is not counted as read."""
    led = P.Ledger()
    run = led.mark(Run(W=np.zeros((2, 2)), gamma=np.ones(3), f=1.5), led.call("run"))
    ctx = _ctx(led)
    ctx.close(run.W, np.zeros((2, 2)), label="W = oracle")
    _ = run.gamma  # read, never checked
    led.in_probe = True
    probe = led.mark(Run(W=np.ones((1, 1)), gamma=np.ones(1), f=0.0), led.call("probe"))
    _ = probe.f
    led.in_probe = False
    assert led.summary()["unseen"] == [("run", "gamma")]


def test_a_derived_helper_that_captured_a_reported_array_keeps_its_arguments_marks_too():
    """A recomputation (``derived``) closing over one reported array and called with another: its result carries
    both (the helper computes on the plain argument, but the captured array is still marked inside it)."""
    led = P.Ledger()
    a = led.mark(np.array([1.0, 2.0]), led.call("a"))
    b = led.mark(np.array([3.0, 4.0]), led.call("b"))

    @P.derived
    def times_a(x):
        return x * a

    out = times_a(b)
    assert P.marks_of(out) == P.marks_of(a) | P.marks_of(b)


def test_a_comparison_of_unequal_row_counts_is_one_use_of_both_whole_sides():
    """Row-by-row evidence needs as many rows on each side; otherwise (a broadcast comparison, 2 rows against 3 in
    either order) the comparison is one use of everything on both sides."""
    led = P.Ledger()
    a = led.mark(np.array([[1.0], [2.0]]), led.call("a"))
    b = led.mark(np.array([[1.0], [2.0], [3.0]]), led.call("b"))
    for lhs, rhs in ((a, b), (b, a)):
        led.note("unequal rows", "compare", lhs, rhs, True)
        assert led.uses[-1] == Use("unequal rows", "compare", (P.marks_of(lhs), P.marks_of(rhs)), True)
    assert len(led.uses) == 2


def test_iterating_a_reported_array_yields_its_rows_each_with_its_own_marks():
    led, run = _ledger_with_run()
    rows = list(run.W)
    assert len(rows) == 5
    for t, row in enumerate(rows):
        np.testing.assert_array_equal(P.plain(row), P.plain(run.W)[t])
        assert P.marks_of(row) == run.W.rows[t]


class _Pair:
    """A record that is also a sequence (a reported run an adapter returns may be one)."""

    def __init__(self, a, b):
        self.items = [a, b]

    def __getitem__(self, i):
        return self.items[i]

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)


class _Items(list):
    """A list subclass: plain() must look inside it too."""


def test_what_a_ledger_marks_and_how_marked_values_behave_as_their_plain_values():
    import pickle

    led = P.Ledger()
    c = led.call("run")
    words, builtin = np.array(["a", "b"]), len
    assert led.mark(words, c) is words and led.mark(builtin, c) is builtin and led.mark("s", c) == "s"
    d = led.mark({"k": 1.5, "v": np.ones(2)}, c, "res")
    assert P.marks_of(d["k"]) and P.marks_of(d["v"]) and not P.marks_of(d["k"]) & P.marks_of(d["v"])
    assert led.mark(d["v"], c) is d["v"]  # already marked: kept, marks and all
    flag = led.mark(True, c, "ok")
    assert isinstance(flag, P.ReportedBool) and flag and flag == True  # noqa: E712
    assert hash(flag) == hash(True) and repr(flag) == "True" and P.marks_of(flag)
    assert pickle.loads(pickle.dumps(flag)) is True
    back = pickle.loads(pickle.dumps(led.mark(np.arange(3.0), c)))
    assert type(back) is np.ndarray and back.tolist() == [0.0, 1.0, 2.0]
    x = pickle.loads(pickle.dumps(led.mark(2.5, c)))
    assert type(x) is float and x == 2.5
    rec = led.mark(_Pair(1.0, 2.0), c, "pair")
    assert isinstance(rec, P.ReportedRecord) and len(rec) == 2 and rec[1] == 2.0 and P.marks_of(rec[1])
    items = list(rec)
    assert items == [1.0, 2.0] and all(P.marks_of(v) for v in items) and not P.marks_of(items[0]) & P.marks_of(items[1])
    with pytest.raises(AttributeError, match="read-only"):
        rec.items = []
    again = pickle.loads(pickle.dumps(rec))
    assert type(again) is _Pair and again.items == [1.0, 2.0]
    found = P.marks_of(d["k"])
    tagged = P.tag([1.0, np.ones(2)], found)
    assert isinstance(tagged, list) and all(P.marks_of(v) == found for v in tagged)
    assert P.marks_of(P.tag({"a": 1.0}, found)["a"]) == found
    plain = P.plain(_Items([d["v"], (d["k"],)]))
    assert type(plain) is list and type(plain[0]) is np.ndarray and type(plain[1][0]) is float
    assert P.marks_of(P.computed_from(3.0, d["v"])) == P.marks_of(d["v"])


def test_the_implementation_receives_plain_values_when_a_statement_passes_back_what_it_reported():
    """Under a ledger, a protocol call's result comes back marked; a statement that passes it to the next call must
    not hand the implementation a marked array (a subclass whose arithmetic records uses): the recorder unmarks every
    argument, positional or keyword."""
    from refvi.verification.protocol import recording

    seen = []

    class Impl:
        name = "types"

        def energy(self, target, m, C, U, structure="tril"):
            seen.append((type(m), type(C), type(U)))
            return np.asarray(m, dtype=float) * 2.0

    led = P.Ledger()
    view = recording(Impl(), {}, ledger=led)
    out = view.energy(None, np.ones(2), np.eye(2), np.zeros((1, 2)))
    assert is_reported(out)
    view.energy(None, out, C=out[:, None] * np.eye(2), U=out[None, :])
    assert seen == [(np.ndarray, np.ndarray, np.ndarray)] * 2


def test_a_boolean_mask_of_a_reported_array_keeps_the_marks_of_the_rows_it_keeps():
    led, run = _ledger_with_run()
    mask = np.array([True, False, True, False, True])
    part = run.W[mask]
    np.testing.assert_array_equal(P.plain(part), P.plain(run.W)[mask])
    assert P.marks_of(part) == frozenset().union(run.W.rows[0], run.W.rows[2], run.W.rows[4])
    assert P.marks_of(part) != P.marks_of(run.W)  # rows 1 and 3 are not what it came from


def test_an_oracle_classs_members_pass_marks_from_their_arguments_and_keep_working():
    """_pass_through_class wraps every kind of member an oracle class may have: what a static method or a method
    returns from a reported argument is marked as derived from it, plain arguments give plain values, and properties
    (with their setters) and cached properties still compute what they did (an oracle object is built from a
    statement's own instance, so its state carries no marks: they come in through the arguments)."""
    import functools

    from refvi.verification.statement.provenance.instrument import _pass_through_class

    class Oracle:
        def __init__(self, x):
            self.x = np.asarray(x, dtype=float)

        @staticmethod
        def double(y):
            return 2 * np.asarray(y)

        def shifted(self, y):
            return np.asarray(y) + self.x

        @property
        def square(self):
            return self.x**2

        @square.setter
        def square(self, value):
            self.x = np.sqrt(value)

        @functools.cached_property
        def cube(self):
            return self.x**3

    _pass_through_class(Oracle)
    led, run = _ledger_with_run()
    o = Oracle(np.full(2, 3.0))
    for value in (Oracle.double(run.W), o.shifted(run.W)):
        assert is_reported(value) and P.marks_of(value) == P.marks_of(run.W)
    np.testing.assert_array_equal(P.plain(o.shifted(run.W)), P.plain(run.W) + 3.0)
    assert not is_reported(Oracle.double(np.ones(2))) and not is_reported(o.shifted(np.ones(2)))
    np.testing.assert_array_equal(o.square, [9.0, 9.0])
    o.square = np.full(2, 16.0)
    np.testing.assert_array_equal(o.x, [4.0, 4.0])
    np.testing.assert_array_equal(o.cube, [64.0, 64.0])
    assert getattr(Oracle.__dict__["cube"].func, "_passes_marks", False)
    assert getattr(Oracle.__dict__["square"].fget, "_passes_marks", False)
