"""refvi's own seed 003 sub-adapter (``REFVI.online``): :mod:`refvi.online` behind the plain-record protocol of
:mod:`refvi.verification.protocol.online`."""

from __future__ import annotations

import numpy as np

from refvi.verification.protocol.online import EWARun, FullCovRun, OnlineRun

_CLASSES = {"sva": "SVA", "svb": "SVB", "ngvi": "NGVI", "oga": "OGA", "ogael": "OGAEL"}


def _learner(method, d, loss, hyper):
    from refvi import online

    if method not in _CLASSES:
        raise ValueError(f"unknown online method {method!r}; one of {sorted(_CLASSES)}")
    return getattr(online, _CLASSES[method])(d, loss, **hyper)


def _recorded(a: np.ndarray | None) -> np.ndarray:
    """A trajectory refvi.online returns when run with ``record=True`` (None only without it)."""
    if a is None:
        raise RuntimeError("refvi.online returned no trajectory although it was run with record=True")
    return a


def _ball_learner(method, d, loss, hyper):
    """SVB on Thm 3's ball parameter sets: refvi's learner without boxes, each round followed by the Euclidean
    projections onto ||m|| <= mball and {sigma >= 0, ||sigma|| <= sball} (SVB's rounds read only (m, sigma, t), so
    this is projected SVB on the balls).  Returns (learner, project)."""
    hyper = dict(hyper)
    mball, sball = hyper.pop("mball", None), hyper.pop("sball", None)
    if method != "svb":
        raise ValueError(f"the ball parameter sets (mball, sball) are for SVB only, not {method!r}")
    if "mbox" in hyper or "sbox" in hyper:
        raise ValueError("give boxes (mbox, sbox) or balls (mball, sball), not both")
    if mball is None or sball is None or not (mball > 0 and sball > 0):
        raise ValueError(f"need mball > 0 and sball > 0, got {mball!r}, {sball!r}")
    learner = _learner(method, d, loss, hyper)
    if float(np.linalg.norm(learner.sigma)) > sball:
        raise ValueError(f"the initial sigma must lie in the ball ||sigma|| <= sball = {sball}")

    def to_ball(v, radius):
        n = float(np.linalg.norm(v))
        return v if n <= radius else v * (radius / n)

    def project():
        learner.m = to_ball(learner.m, mball)
        learner.sigma = to_ball(np.maximum(learner.sigma, 0.0), sball)

    return learner, project


def _uses_ball(hyper):
    return "mball" in hyper or "sball" in hyper


class RefviOnline:
    """refvi.online behind the calls the seed-003 statements make."""

    name = "refvi.online"

    def run(self, method, X, y, loss="hinge", **hyper):
        if _uses_ball(hyper):
            learner, project = _ball_learner(method, X.shape[1], loss, hyper)
            T, d = X.shape
            M, S, losses = np.empty((T + 1, d)), np.empty((T + 1, d)), np.empty(T)
            for t in range(T):
                M[t], S[t] = learner.m, learner.sigma
                losses[t] = learner.update(X[t], None if y is None else y[t])
                project()
            M[T], S[T] = learner.m, learner.sigma
            return OnlineRun(losses, M, S, M[T].copy(), S[T].copy())
        r = _learner(method, X.shape[1], loss, hyper).run(X, y, record=True)
        return OnlineRun(r.losses, _recorded(r.M), r.S, r.m, r.sigma, r.average)

    def run_full(self, X, y, loss="hinge", *, eta, s=1.0):
        from refvi.online import SVAFull

        r = SVAFull(X.shape[1], loss, eta=eta, s=s).run(X, y, record=True)
        return FullCovRun(r.losses, _recorded(r.M), _recorded(r.Cs), r.m, r.C)

    def run_nn(self, method, X, y, h, U, **hyper):
        from refvi.online import run_nn

        U = np.asarray(U, dtype=np.float64)
        r = run_nn(method, X, y, h=h, n_samples=U.shape[1], base_samples=U, record=True, **hyper)
        return OnlineRun(r.losses, _recorded(r.M), r.S, r.m, r.sigma)

    def nn_predict(self, theta, X, h):
        from refvi.online.nn import nn_predict

        return nn_predict(theta, X, h)

    def run_adversarial(self, method, X, loss="hinge", **hyper):
        learner, project = (
            _ball_learner(method, X.shape[1], loss, hyper)
            if _uses_ball(hyper)
            else (_learner(method, X.shape[1], loss, hyper), lambda: None)
        )
        y = np.empty(X.shape[0])
        for t in range(X.shape[0]):
            y[t] = -1.0 if float(learner.predict() @ X[t]) > 0 else 1.0
            learner.update(X[t], y[t])
            project()
        return y

    def expected_loss(self, loss, X, y, m, sigma, H=1.0):
        from refvi.online import expected_loss

        return expected_loss(loss, X, y, m, sigma, H)

    def expected_loss_full(self, loss, x, y, m, C):
        from refvi.online import expected_loss_full

        return expected_loss_full(loss, x, y, m, C)

    def kl_prior(self, m, sigma, s):
        from refvi.online import kl_prior

        return kl_prior(m, sigma, s)

    def kl_gaussian(self, m, C, mbar, Cbar):
        from refvi.online import kl_gaussian

        return kl_gaussian(m, C, mbar, Cbar)

    def ewa_1d(self, loss, data, eta, lo, hi, log_prior=None, n_nodes=2000, breaks=()):
        from refvi.online import ewa_1d

        r = ewa_1d(loss, data, eta, lo, hi, log_prior, n_nodes, breaks)
        return EWARun(r.means, r.losses, r.log_norm, r.mix_loss, r.nodes, r.log_post)

    def ewa_2d(self, loss, data, eta, lo, hi, log_prior=None, n_nodes=64):
        from refvi.online import ewa_2d

        r = ewa_2d(loss, data, eta, lo, hi, log_prior, n_nodes)
        return EWARun(r.means, r.losses, r.log_norm, r.mix_loss, r.nodes, r.log_post)
