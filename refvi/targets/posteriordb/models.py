"""The ten posteriordb models: data loading, design matrices, priors, the target class and the pushforward moments.

Each model is written from the posterior's Stan program (summarized in ``README.md`` of the database copy; the
densities are in ``_kernels``).  Linear regressions y ~ Normal(X beta, sigma) are fitted on (beta, log sigma);
eight schools on (theta_trans, mu, log tau); the GP on (log rho, log alpha, f_tilde).
"""

from __future__ import annotations

import gzip
import json
import math
import pathlib

import numpy as np

from refvi._checks import as_generator, as_vector, check_scale
from refvi.targets.base import KernelPlan, Target
from refvi.targets.posteriordb import _kernels as K

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE / "data"
#: the names of the ten posteriors, as ``load`` takes them
POSTERIORS = (
    "sblrc-blr",
    "kidiq-kidscore_momhs",
    "kidiq-kidscore_interaction",
    "mesquite-logmesquite",
    "earnings-logearn_interaction",
    "nes1972-nes",
    "arK-arK",
    "diamonds-diamonds",
    "eight_schools-eight_schools_noncentered",
    "gp_pois_regr-gp_pois_regr",
)
#: the posteriors where the model is a linear regression (a full-rank Gaussian is close to exact on (beta, log sigma))
LINEAR_REGRESSIONS = POSTERIORS[:8]


def _data(stem: str) -> dict:
    for path, opener in ((DATA / f"{stem}.json", open), (DATA / f"{stem}.json.gz", gzip.open)):
        if path.exists():
            with opener(path, "rt") as fh:
                return json.load(fh)
    raise FileNotFoundError(f"posteriordb data file {stem}.json(.gz) is missing from {DATA}")


def _reference_table() -> dict:
    with open(HERE / "reference_moments.json") as fh:
        return json.load(fh)


class PosteriorTarget(Target):
    """One posteriordb posterior on the unconstrained scale (a :class:`~refvi.targets.base.Target`).

    ``param_names``: the unconstrained coordinates; ``draw_names``: the constrained parameters of the reference
    draws, in order; ``constrain(Z)`` maps rows of Z (S x d) to rows of constrained parameters (S x p);
    ``reference``: the gold-standard moments (``mean``, ``sd``, ``mcse_mean``, per draw name).  M and mu are not
    known: ``smoothness`` is None.
    """

    smoothness = None
    strong_convexity = 0.0
    convex = False

    def __init__(
        self,
        name,
        kernel,
        args,
        param_names,
        draw_names,
        constrain,
        description,
        lognormal_last=False,
        logp_kernel=None,
    ):
        self.name, self._kernel, self._args = name, kernel, args
        self._logp_kernel = logp_kernel  # log p alone, where the gradient costs much more (the GP)
        self.param_names, self.draw_names = tuple(param_names), tuple(draw_names)
        self.dim = len(self.param_names)
        self._constrain, self.description = constrain, description
        self._lognormal_last = lognormal_last  # constrained = (z[:-1], exp(z[-1])): closed-form moments

    def logp_and_grad(self, Z):
        """(log p, grad log p) on the rows of Z (S x d) in one kernel call."""
        Z, single = self._batch(Z)
        lp, G = self._kernel(Z, *self._args)
        return (float(lp[0]), G[0]) if single else (lp, G)

    def _kernel_plan(self):
        """The model's batched Numba kernel as the energy and -log p kernels (:mod:`refvi.kernels.composed`): fits
        run the fused loop (:mod:`refvi.kernels.fused`)."""
        from refvi.kernels import composed

        neglogp = (
            (composed.joint_neglogp, (self._kernel, self._args))
            if self._logp_kernel is None
            else (composed.values_neglogp, (self._logp_kernel, self._args))
        )
        return KernelPlan(energy=(composed.joint_energy, (self._kernel, self._args)), neglogp=neglogp)

    def _logp_batch(self, Z):
        if self._logp_kernel is not None:
            return self._logp_kernel(Z, *self._args)
        return self._kernel(Z, *self._args)[0]

    def _grad_batch(self, Z):
        return self._kernel(Z, *self._args)[1]

    def constrain(self, Z) -> np.ndarray:
        Z, single = self._batch(Z)
        out = self._constrain(Z)
        return out[0] if single else out

    @property
    def reference(self) -> dict:
        """The gold-standard reference moments: ``names``, ``mean``, ``sd``, ``mcse_mean``, ``ess_bulk`` on the
        constrained scale, ``u_names``, ``u_mean``, ``u_sd``, ``u_cov`` on the unconstrained one, and ``draws``."""
        ref = _reference_table()[self.name]
        return {k: np.asarray(v) if k != "names" else tuple(v) for k, v in ref.items()}

    def __repr__(self) -> str:
        return f"PosteriorTarget({self.name!r}, dim={self.dim})"


def pushforward_moments(target: PosteriorTarget, m, C, *, samples: int = 200_000, seed: int = 0):
    """(mean, sd) of the constrained parameters under z ~ N(m, C C^T): exact for the linear regressions (beta is the
    identity, sigma = exp(log sigma) is log-normal), Monte Carlo with ``samples`` draws otherwise (error of the
    mean about sd / sqrt(samples))."""
    m = as_vector(m, "m", target.dim)
    C = check_scale(C, target.dim, "full", "C")
    if target._lognormal_last:
        v = np.sum(C * C, axis=1)
        mean, sd = m.copy(), np.sqrt(v)
        a, s2 = m[-1], v[-1]
        mean[-1] = math.exp(a + 0.5 * s2)
        sd[-1] = math.sqrt(math.expm1(s2)) * mean[-1]
        return mean, sd
    U = as_generator(seed, "seed").standard_normal((int(samples), target.dim))
    Y = target.constrain(U @ C.T + m)
    return Y.mean(axis=0), Y.std(axis=0, ddof=1)


# ------------------------------------------------------------------------------------------------ model builders
def _glm(name, X, y, bnames, bprior, sprior, description):
    """y ~ Normal(X beta, sigma); ``bprior``: one (code, loc, scale, df) per coefficient, ``sprior``: (code, scale,
    df) for sigma's half prior."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError(f"{name}: non-finite data")
    pri = np.array(bprior, dtype=np.float64).reshape(-1, 4)
    args = (
        X.T @ X,
        X.T @ y,
        float(y @ y),
        float(X.shape[0]),
        pri[:, 0].astype(np.int64).copy(),
        pri[:, 1].copy(),
        pri[:, 2].copy(),
        pri[:, 3].copy(),
        int(sprior[0]),
        float(sprior[1]),
        float(sprior[2]),
    )

    def constrain(Z):
        out = Z.copy()
        out[:, -1] = np.exp(Z[:, -1])
        return out

    return PosteriorTarget(
        name,
        K.glm_normal,
        args,
        list(bnames) + ["log_sigma"],
        list(bnames) + ["sigma"],
        constrain,
        description,
        lognormal_last=True,
    )


def _beta(n):
    return [f"beta[{i + 1}]" for i in range(n)]


FLAT = (K.FLAT, 0.0, 1.0, 0.0)


def _sblrc():
    d = _data("sblrc")
    X, y = np.array(d["X"], dtype=float), np.array(d["y"], dtype=float)
    D = X.shape[1]
    return _glm(
        "sblrc-blr",
        X,
        y,
        _beta(D),
        [(K.NORMAL, 0.0, 10.0, 0.0)] * D,
        (K.NORMAL, 10.0, 0.0),
        "Bayesian linear regression, N=100, D=5; beta ~ N(0, 10), sigma ~ half-N(0, 10)",
    )


def _kidiq(interaction):
    d = _data("kidiq")
    hs, iq = np.array(d["mom_hs"], dtype=float), np.array(d["mom_iq"], dtype=float)
    cols = [np.ones_like(hs), hs] + ([iq, hs * iq] if interaction else [])
    name = "kidiq-kidscore_interaction" if interaction else "kidiq-kidscore_momhs"
    return _glm(
        name,
        np.column_stack(cols),
        np.array(d["kid_score"], dtype=float),
        _beta(len(cols)),
        [FLAT] * len(cols),
        (K.CAUCHY, 2.5, 0.0),
        f"kid_score on mom_hs{' * mom_iq' if interaction else ''}, flat beta, sigma ~ half-Cauchy(0, 2.5)",
    )


def _mesquite():
    d = _data("mesquite")
    lg = lambda k: np.log(np.array(d[k], dtype=float))  # noqa: E731
    X = np.column_stack(
        [
            np.ones(int(d["N"])),
            lg("diam1"),
            lg("diam2"),
            lg("canopy_height"),
            lg("total_height"),
            lg("density"),
            np.array(d["group"], dtype=float),
        ]
    )
    return _glm(
        "mesquite-logmesquite",
        X,
        lg("weight"),
        _beta(7),
        [FLAT] * 7,
        (K.FLAT, 1.0, 0.0),
        "log weight on six log sizes and group, flat priors",
    )


def _earnings():
    d = _data("earnings")
    h, m = np.array(d["height"], dtype=float), np.array(d["male"], dtype=float)
    X = np.column_stack([np.ones_like(h), h, m, h * m])
    return _glm(
        "earnings-logearn_interaction",
        X,
        np.log(np.array(d["earn"], dtype=float)),
        _beta(4),
        [FLAT] * 4,
        (K.FLAT, 1.0, 0.0),
        "log earnings on height * male, flat priors",
    )


def _nes():
    d = _data("nes1972")
    a = np.array(d["age_discrete"])
    f = lambda k: np.array(d[k], dtype=float)  # noqa: E731
    X = np.column_stack(
        [np.ones(a.size), f("real_ideo"), f("race_adj"), a == 2, a == 3, a == 4, f("educ1"), f("gender"), f("income")]
    ).astype(float)
    return _glm(
        "nes1972-nes",
        X,
        f("partyid7"),
        _beta(9),
        [FLAT] * 9,
        (K.FLAT, 1.0, 0.0),
        "party identification on ideology, race, age group, education, gender, income; flat priors",
    )


def _ark():
    d = _data("arK")
    Kl, T, y = int(d["K"]), int(d["T"]), np.array(d["y"], dtype=float)
    X = np.column_stack([np.ones(T - Kl)] + [y[Kl - k : T - k] for k in range(1, Kl + 1)])
    return _glm(
        "arK-arK",
        X,
        y[Kl:],
        ["alpha"] + _beta(Kl),
        [(K.NORMAL, 0.0, 10.0, 0.0)] * (Kl + 1),
        (K.CAUCHY, 2.5, 0.0),
        f"AR({Kl}) on T={T} points; alpha, beta ~ N(0, 10), sigma ~ half-Cauchy(0, 2.5)",
    )


def _diamonds():
    d = _data("diamonds")
    X = np.array(d["X"], dtype=float)
    Xc = X[:, 1:] - X[:, 1:].mean(axis=0)
    Kc = Xc.shape[1]
    design = np.column_stack([Xc, np.ones(X.shape[0])])
    names = [f"b[{i + 1}]" for i in range(Kc)] + ["Intercept"]
    return _glm(
        "diamonds-diamonds",
        design,
        np.array(d["Y"], dtype=float),
        names,
        [(K.NORMAL, 0.0, 1.0, 0.0)] * Kc + [(K.STUDENT, 8.0, 10.0, 3.0)],
        (K.STUDENT, 10.0, 3.0),
        "log price on 24 centred, strongly correlated predictors; b ~ N(0, 1), Intercept ~ t(3, 8, 10), "
        "sigma ~ half-t(3, 0, 10)",
    )


def _eight_schools():
    d = _data("eight_schools")
    y, sig = np.array(d["y"], dtype=float), np.array(d["sigma"], dtype=float)
    J = y.size

    def constrain(Z):
        tau = np.exp(Z[:, J + 1])
        return np.column_stack([Z[:, J : J + 1] + tau[:, None] * Z[:, :J], Z[:, J], tau])

    return PosteriorTarget(
        "eight_schools-eight_schools_noncentered",
        K.eight_schools_nc,
        (y, sig),
        [f"theta_trans[{j + 1}]" for j in range(J)] + ["mu", "log_tau"],
        [f"theta[{j + 1}]" for j in range(J)] + ["mu", "tau"],
        constrain,
        "non-centred eight schools; mu ~ N(0, 5), tau ~ half-Cauchy(0, 5)",
    )


def _gp():
    d = _data("gp_pois_regr")
    x, k = np.array(d["x"], dtype=float), np.array(d["k"], dtype=float)
    lgk = float(sum(math.lgamma(v + 1.0) for v in k))
    N = x.size

    def constrain(Z):
        return np.column_stack([np.exp(Z[:, 0]), np.exp(Z[:, 1]), K.gp_f(np.ascontiguousarray(Z), x)])

    return PosteriorTarget(
        "gp_pois_regr-gp_pois_regr",
        K.gp_pois,
        (x, k, lgk),
        ["log_rho", "log_alpha"] + [f"f_tilde[{i + 1}]" for i in range(N)],
        ["rho", "alpha"] + [f"f[{i + 1}]" for i in range(N)],
        constrain,
        "Poisson GP regression, N=11; rho ~ Gamma(25, 4), alpha ~ half-N(0, 2)",
        logp_kernel=K.gp_pois_logp,
    )


_BUILDERS = {
    "sblrc-blr": _sblrc,
    "kidiq-kidscore_momhs": lambda: _kidiq(False),
    "kidiq-kidscore_interaction": lambda: _kidiq(True),
    "mesquite-logmesquite": _mesquite,
    "earnings-logearn_interaction": _earnings,
    "nes1972-nes": _nes,
    "arK-arK": _ark,
    "diamonds-diamonds": _diamonds,
    "eight_schools-eight_schools_noncentered": _eight_schools,
    "gp_pois_regr-gp_pois_regr": _gp,
}
_CACHE: dict = {}


def load(name: str) -> PosteriorTarget:
    """The posterior ``name`` (one of :data:`POSTERIORS`; the prefix "posteriordb:" is accepted)."""
    if not isinstance(name, str):
        raise TypeError(f"posterior name must be a string, got {type(name).__name__}")
    key = name.split(":", 1)[1] if name.startswith("posteriordb:") else name
    if key not in _BUILDERS:
        raise ValueError(f"unknown posteriordb posterior {name!r}; choose one of {POSTERIORS}")
    if key not in _CACHE:
        _CACHE[key] = _BUILDERS[key]()
    return _CACHE[key]


def reference(name: str) -> dict:
    """The reference moments of ``name`` (see :attr:`PosteriorTarget.reference`)."""
    return load(name).reference
