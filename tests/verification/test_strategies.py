"""verification.strategies: instance sources drawn by Hypothesis shrink to the numbers of the instance, not to a
seed, stay inside the documented ranges, and fixed integer seeds still give NumPy generators."""

import numpy as np
import pytest
from hypothesis import find, given, settings

from refvi.verification.strategies import RNG, DrawnRNG, rng_of


@settings(max_examples=30, deadline=None)
@given(RNG)
def test_draws_respect_their_ranges(rng):
    z = rng.standard_normal((3, 2))
    assert z.shape == (3, 2) and np.all(np.abs(z) <= 4.0)
    u = rng.uniform(0.5, 2.0, 4)
    assert u.shape == (4,) and np.all((0.5 <= u) & (u <= 2.0))
    k = rng.integers(1, 5)
    assert 1 <= k < 5
    assert 0 <= rng.poisson(3.0) <= 3 + 6 * 3 ** 0.5 + 5
    assert rng.choice([7, 8]) in (7, 8)


def test_a_failure_shrinks_to_the_instance_numbers():
    def big(rng):
        x = rng.standard_normal(3)
        return float(np.max(np.abs(x))) > 1.0
    minimal = find(RNG, big, settings=settings(database=None, derandomize=True))
    assert isinstance(minimal, DrawnRNG)
    assert "normal[3]=" in repr(minimal)                    # the report shows the drawn vector, not a seed


def test_integer_seeds_give_numpy_generators():
    a, b = rng_of(3), rng_of(3)
    assert isinstance(a, np.random.Generator)
    assert a.standard_normal() == b.standard_normal()
    g = np.random.default_rng(0)
    assert rng_of(g) is g
    with pytest.raises((TypeError, ValueError)):
        rng_of("abc")


def test_a_drawn_instance_pickles_as_its_draws_and_replays_them_in_order():
    """--replay rebuilds a drawn instance from its pickle: the copy draws the very same numbers, first to last."""
    import pickle
    import random

    rng = DrawnRNG(random.Random(5))
    first = (rng.standard_normal(3), rng.uniform(0.5, 2.0, 2), rng.integers(1, 9), rng.choice([7, 8, 9]))
    copy = pickle.loads(pickle.dumps(rng))
    again = (copy.standard_normal(3), copy.uniform(0.5, 2.0, 2), copy.integers(1, 9), copy.choice([7, 8, 9]))
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(IndexError, match="draws more numbers than were recorded"):
        copy.standard_normal()


def test_a_drawn_poisson_count_spans_the_bulk_up_to_lam_plus_six_sd_plus_five():
    import random

    rng = DrawnRNG(random.Random(0))
    draws = rng.poisson(100.0, 400)
    top = 100 + 6 * 10 + 5
    assert draws.min() >= 0 and draws.max() <= top and draws.max() > top - 10  # reaches the top of its range


def test_every_generator_method_draws_in_its_range_and_replays_from_its_pickle():
    """The rest of the Generator subset: normal (loc + scale z), uniform with array bounds (one draw per entry, each
    within its own bounds), exponential (0 to 8 scales), dirichlet (a probability vector), permutation, choice
    without replacement; a pickled copy replays each, the permutation's shuffle included."""
    import pickle
    import random

    rng = DrawnRNG(random.Random(11))
    lo, hi = np.array([[0.0, 10.0], [-5.0, 100.0]]), np.array([[1.0, 11.0], [-4.0, 101.0]])

    def draws(g):
        return (
            g.normal(10.0, 0.5, 6),
            g.uniform(lo, hi),
            g.exponential(2.0, 5),
            g.dirichlet([1.0, 2.0, 3.0]),
            g.permutation(6),
            g.choice(5, size=4, replace=False),
        )

    n, u, e, w, perm, picks = first = draws(rng)
    raw = random.Random(11)  # the same primitive draws, in the same order, by hand
    np.testing.assert_array_equal(n, [10.0 + 0.5 * raw.uniform(-4.0, 4.0) for _ in range(6)])
    np.testing.assert_array_equal(u, [[raw.uniform(0.0, 1.0), raw.uniform(10.0, 11.0)],
                                      [raw.uniform(-5.0, -4.0), raw.uniform(100.0, 101.0)]])
    np.testing.assert_array_equal(e, [2.0 * raw.uniform(0.0, 8.0) for _ in range(5)])
    v = np.array([raw.uniform(1e-3, 1.0) for _ in range(3)]) * [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(w, v / v.sum())
    pool = list(range(6))
    raw.shuffle(pool)
    assert perm.tolist() == pool != list(range(6))
    assert picks.tolist() == raw.sample(list(range(5)), 4)
    assert "dirichlet[3]" in repr(rng) and "uniform[2, 2]" in repr(rng)
    copy = pickle.loads(pickle.dumps(rng))
    for a, b in zip(first, draws(copy), strict=True):
        np.testing.assert_array_equal(a, b)
