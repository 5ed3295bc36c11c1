"""Full-covariance SVA (refvi.online.SVAFull): the kernel against the numerical FTRL argmin and the quadrature
gradients of the oracle, the mean-field special case, and clear errors on bad input."""

import numpy as np
import pytest

from refvi.online import SVA, SVAFull
from refvi.verification.oracles import online_comparators as oc
from refvi.verification.oracles import online_quadrature as oq


@pytest.mark.parametrize("loss", ["hinge", "absolute", "squared"])
def test_every_iterate_is_the_ftrl_argmin(loss):
    rng = np.random.default_rng(3)
    X = rng.uniform(-1.5, 1.5, (9, 3))
    y = np.where(rng.random(9) < 0.5, -1.0, 1.0) if loss == "hinge" else rng.standard_normal(9)
    eta, s = 0.3, 0.9
    r = SVAFull(3, loss, eta=eta, s=s).run(X, y, record=True)
    Gm, GC = np.zeros(3), np.zeros((3, 3))
    for t in range(9):
        _, gm, gC = oq.expected_loss_full_quad(loss, X[t], y[t], r.M[t], r.Cs[t])
        Gm, GC = Gm + gm, GC + gC
        m, C = oc.ftrl_full_argmin(Gm, GC, eta, s)
        np.testing.assert_allclose(r.M[t + 1], m, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(r.Cs[t + 1], C, rtol=1e-6, atol=1e-8)


def test_one_dimension_is_mean_field_sva():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 1)), np.where(rng.random(40) < 0.5, -1.0, 1.0)
    a = SVA(1, "hinge", eta=0.3, s=0.7).run(X, y, record=True)
    b = SVAFull(1, "hinge", eta=0.3, s=0.7).run(X, y, record=True)
    # the same arithmetic up to the order of a few operations (the 1-D reduction b = |C x|)
    np.testing.assert_allclose(a.M, b.M, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(a.S[:, 0], b.Cs[:, 0, 0], rtol=1e-13, atol=1e-15)


def test_streaming_equals_batch():
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((20, 2)), np.where(rng.random(20) < 0.5, -1.0, 1.0)
    batch = SVAFull(2, eta=0.5).run(X, y)
    online = SVAFull(2, eta=0.5)
    for t in range(20):
        online.update(X[t], y[t])
    np.testing.assert_allclose(online.C, batch.C, rtol=1e-14)
    np.testing.assert_allclose(online.m, batch.m, rtol=1e-14)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="linear predictor"):
        SVAFull(2, "quadratic", eta=0.1)
    with pytest.raises(ValueError, match="eta"):
        SVAFull(2, eta=-1.0)
    learner = SVAFull(2, eta=0.1)
    X = np.array([[1.0, 0.0], [np.nan, 1.0]])
    with pytest.raises(ValueError, match="row 1"):
        learner.run(X, np.array([1.0, 1.0]))
    assert learner.t == 1                      # the valid row before the bad one was processed
    with pytest.raises(ValueError, match="hinge labels"):
        SVAFull(2, eta=0.1).run(np.ones((1, 2)), np.array([0.5]))


def test_an_empty_stream_records_the_start_as_the_only_state():
    """run() on no rows with record=True: M and S hold the one state the learner is in (the prior), no losses."""
    learner = SVA(2, "hinge", eta=0.5, s=1.5)
    r = learner.run(np.empty((0, 2)), np.empty(0), record=True)
    np.testing.assert_array_equal(r.M, [[0.0, 0.0]])
    np.testing.assert_array_equal(r.S, [[1.5, 1.5]])
    assert r.losses.shape == (0,)


def test_a_long_stream_on_a_terminal_shows_a_bar_that_counts_every_row(monkeypatch):
    """Streams of at least one chunk (20,000 rows) show a progress bar on a terminal, advanced by each chunk's rows
    and closed at the end; shorter streams, or output that is not a terminal, show none."""
    import sys

    import tqdm

    bars = []

    class Bar:
        def __init__(self, total, **kw):
            self.total, self.n, self.closed = total, 0, False
            bars.append(self)

        def update(self, k):
            self.n += k

        def close(self):
            self.closed = True

    monkeypatch.setattr(tqdm, "tqdm", Bar)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    rng = np.random.default_rng(2)
    T = 45_000
    X, y = rng.standard_normal((T, 2)), np.where(rng.random(T) < 0.5, -1.0, 1.0)
    SVA(2, "hinge", eta=0.01).run(X, y, progress=True)
    assert len(bars) == 1 and bars[0].total == T and bars[0].n == T and bars[0].closed
    SVA(2, "hinge", eta=0.01).run(X[:100], y[:100], progress=True)
    SVA(2, "hinge", eta=0.01).run(X, y)
    assert len(bars) == 1


@pytest.mark.parametrize("loss", ["hinge", "squared"])
def test_a_stream_longer_than_a_chunk_runs_as_the_same_stream_split_at_the_chunk(loss):
    """A run works through its stream in chunks of refvi.online._stream.CHUNK rounds (the statements' streams are
    shorter): one run over CHUNK + 7 rows must leave every learner where two runs leave it, split at the chunk
    boundary and split elsewhere (a round counter or a step schedule that restarts at a chunk shows here)."""
    from refvi.online import NGVI, OGA, OGAEL, SVB, _stream

    rng = np.random.default_rng(4)
    T = _stream.CHUNK + 7
    X = rng.uniform(-1.0, 1.0, (T, 3))
    y = np.where(rng.random(T) < 0.5, -1.0, 1.0)
    makers = {
        "sva": lambda: SVA(3, loss, eta=0.05),
        "svb": lambda: SVB(3, loss, K=0.5),  # a_t = K / sqrt t: the round counter matters
        "oga": lambda: OGA(3, loss, eta=0.05),
        "ogael": lambda: OGAEL(3, loss, eta=0.05),
        "ngvi": lambda: NGVI(3, loss, eta=0.05, alpha=1.0, sbox=1.0),
    }
    for name, make in makers.items():
        whole = make()
        whole.run(X, y)
        for cut in (_stream.CHUNK, 1000):
            split = make()
            split.run(X[:cut], y[:cut])
            split.run(X[cut:], y[cut:])
            np.testing.assert_allclose(split.m, whole.m, rtol=1e-12, atol=1e-14, err_msg=f"{name}, cut at {cut}")
            if whole.sigma is not None:  # OGA keeps no sigma
                np.testing.assert_allclose(split.sigma, whole.sigma, rtol=1e-12, atol=1e-14, err_msg=f"{name}, {cut}")
