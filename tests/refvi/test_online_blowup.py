"""An online learner with a step size far too large gives finite rubbish: the run says so (note + warning)."""

import numpy as np
import pytest

from refvi.online import NGVI, OGA, OGAEL, SVA, SVB
from refvi.online._stream import OnlineDivergenceWarning

LEARNERS = {"sva": lambda eta: SVA(4, "hinge", eta=eta),
            "svb": lambda eta: SVB(4, "hinge", schedule="constant", eta=eta),
            "oga": lambda eta: OGA(4, "hinge", eta=eta), "ogael": lambda eta: OGAEL(4, "hinge", eta=eta)}


def _stream():
    rng = np.random.default_rng(0)
    return rng.standard_normal((300, 4)), np.where(rng.random(300) < 0.5, -1.0, 1.0)


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_a_huge_step_is_reported(name):
    X, y = _stream()
    with pytest.warns(OnlineDivergenceWarning, match="blew up") as caught:
        res = LEARNERS[name](1e6).run(X, y)
    assert res.notes and "far too large" in res.notes[0]
    assert [w.filename for w in caught] == [__file__]  # shown at the line that ran the learner, not inside refvi


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_a_sensible_step_says_nothing(name, recwarn):
    X, y = _stream()
    res = LEARNERS[name](0.05).run(X, y)
    assert res.notes == []
    assert not [w for w in recwarn if issubclass(w.category, OnlineDivergenceWarning)]


def test_ngvi_damps_a_huge_eta_and_says_nothing(recwarn):
    """Online NGVI's corrected weight beta = alpha / (alpha + eta) shrinks as eta grows: no blow-up to report."""
    X, y = _stream()
    res = NGVI(4, "hinge", eta=1e6, alpha=1.0, sbox=1.0).run(X, y)
    assert res.notes == [] and np.mean(res.losses) < 2.0
    assert not [w for w in recwarn if issubclass(w.category, OnlineDivergenceWarning)]
