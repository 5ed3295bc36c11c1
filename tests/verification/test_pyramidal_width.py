"""The exact pyramidal-width oracle (seed 001 Thm 9) against closed forms and a sampled upper estimate."""

import numpy as np
import pytest

from refvi.verification.oracles import pyramidal_width as pw


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_probability_simplex_closed_form(n):
    """LJ&J Lemma 4.  By hand: for n even, r = (1, .., 1, -1, .., -1) at the barycentre gives (max - min) / ||r||
    = 2 / sqrt(n); for n odd, (n+1)/2 entries (n-1)/(2n) and (n-1)/2 entries -(n+1)/(2n) have max - min = 1 and
    ||r||^2 = (n^2 - 1) / (4n), so 2 / sqrt(n - 1/n).  The enumeration must find these as the minimum."""
    expected = 2 / np.sqrt(n) if n % 2 == 0 else 2 / np.sqrt(n - 1 / n)
    assert pw.simplex_pyramidal_width(n) == pytest.approx(expected, rel=1e-15)
    assert pw.pyramidal_width(np.eye(n)) == pytest.approx(expected, rel=1e-12)


def test_hand_directions_attain_the_closed_form():
    """The hand directions above, evaluated by the oracle's own ratio, equal the closed form (n = 3, 4)."""
    assert pw.direction_ratio(np.eye(4), (0, 1, 2, 3), (0, 1, 2, 3), np.array([1.0, 1, -1, -1])) == pytest.approx(1.0)
    lam = np.array([2 / 6, 2 / 6, -4 / 6])
    assert pw.direction_ratio(np.eye(3), (0, 1, 2), (0, 1, 2), lam) == pytest.approx(2 / np.sqrt(3 - 1 / 3))


def test_segment_is_its_length():
    rng = np.random.default_rng(3)
    for _ in range(5):
        B = rng.standard_normal((2, 2))
        G = B.T @ B
        assert pw.pyramidal_width(G) == pytest.approx(np.sqrt(G[0, 0] + G[1, 1] - 2 * G[0, 1]), rel=1e-12)


def test_scaling_and_rotation():
    """PWidth scales with the atoms and ignores an orthogonal change of basis (it sees only G)."""
    rng = np.random.default_rng(4)
    B = rng.standard_normal((4, 4))
    Q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    G = B.T @ B
    assert pw.pyramidal_width(9.0 * G) == pytest.approx(3.0 * pw.pyramidal_width(G), rel=1e-10)
    assert pw.pyramidal_width((Q @ B).T @ (Q @ B)) == pytest.approx(pw.pyramidal_width(G), rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sampled_estimate_never_below_and_close(seed):
    """Every sampled direction is feasible: the sampled minimum is >= the exact one, and within 3% of it (n = 3, 4)."""
    rng = np.random.default_rng(seed)
    n = 3 + seed % 2
    B = rng.standard_normal((n, n))
    G = B.T @ B
    exact = pw.pyramidal_width(G)
    sampled = pw.pyramidal_width_sampled(G, n_per_cone=20000, seed=seed)
    assert sampled >= exact * (1 - 1e-12)
    assert sampled <= exact * 1.03


def test_width_at_most_the_diameter():
    rng = np.random.default_rng(5)
    for _ in range(5):
        B = rng.standard_normal((4, 4))
        G = B.T @ B
        g = np.diag(G)
        assert pw.pyramidal_width(G) <= np.sqrt(np.max(g[:, None] + g[None, :] - 2 * G)) * (1 + 1e-12)


@pytest.mark.parametrize(
    "G, match",
    [
        (np.eye(1), "at least 2 atoms"),
        (np.eye(7), "at most 6"),
        (np.array([[1.0, 2.0], [0.0, 1.0]]), "symmetric"),
        (np.ones((3, 3)), "linearly independent"),
        (np.ones(3), "square"),
    ],
)
def test_bad_gram_refused(G, match):
    with pytest.raises(ValueError, match=match):
        pw.pyramidal_width(G)


@pytest.mark.parametrize("n", [3, 4])
def test_simplex_closed_form_is_the_minimum_by_sampling(n):
    """The closed form is not only attained (hand directions above) but minimal: no sampled direction beats it."""
    sampled = pw.pyramidal_width_sampled(np.eye(n), n_per_cone=20000, seed=n)
    assert pw.simplex_pyramidal_width(n) * (1 - 1e-12) <= sampled <= pw.simplex_pyramidal_width(n) * 1.01
