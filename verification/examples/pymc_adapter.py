"""Conformance adapter around PyMC's ADVI (``pm.ADVI``, mean field) and full-rank ADVI (``pm.FullRankADVI``).

Run the statements against it with::

    python -m refvi.verification --impl refvi.verification.examples.pymc_adapter:IMPL --select '000.*' '002.*'

PyMC parameterises q = N(mu, L L^T) by ``(mu, L_tril)`` (``FullRankGroup``: the packed lower triangle in
``np.tril_indices`` order, L's diagonal = ``rho2sigma(diagonal entries)`` = softplus) or by ``(mu, rho)``
(``MeanFieldGroup``: sigma = softplus(rho)).  It can therefore only represent lower-triangular C with a positive
diagonal ("tril") and diagonal C with a positive diagonal ("diag"); ``capabilities`` and ``supports`` say so.

Every gradient is PyTensor's ``pytensor.grad`` (through ``pm.updates.get_or_compute_grads``, the call ADVI's
``ObjectiveFunction.add_obj_updates`` makes) of a loss that PyMC's own ``ObjectiveFunction`` builds: the operator's
``apply`` on the approximation's ``datalogp_norm`` / ``varlogp_norm`` / ``logq_norm`` nodes, then
``Approximation.set_size_and_deterministic`` with ``more_replacements = {symbolic_initial: U}``, so PyMC's sampler
z = mu + L u reads refvi's base samples U instead of ``pt.random.normal``.

==================  ==========================================================================================
``entropy``         PyMC's ``KL`` operator, exactly the ADVI / FullRankADVI objective: -ELBO = -log p(z) + log q,
                    with PyMC's log q(z(w); w) = -|u|^2/2 - log det L + const (``symbolic_logq_not_scaled``), i.e.
                    g_energy + grad h (seed 000 Eq. 8)
``energy``          the same objective without PyMC's ``logq_norm`` term (an ``Operator`` whose ``apply`` is
                    ``-datalogp_norm - varlogp_norm``)
``grad_neg_entropy`` the ``logq_norm`` term alone
``stl``             not a PyMC option: the energy plus PyMC's ``symbolic_logq_not_scaled`` graph with its base
                    sample replaced by L'^{-1}(z(w) - mu') and its parameters by ``disconnected_grad`` copies
                    (q held fixed, sticking the landing)
``score``           not a PyMC option: ``pytensor.grad`` of PyMC's ``symbolic_logq_not_scaled`` with its base
                    sample replaced by L^{-1}(z - mu) at the fixed point z = mu + L u, times -log p(z)
==================  ==========================================================================================

The private internals used are ``Group.symbolic_initial`` (the base-sample placeholder), ``Group.params_dict`` and
``symbolic_logq_not_scaled``; the public ones are ``pm.FullRank`` / ``pm.MeanField``, ``pymc.variational.operators.KL``,
``Operator`` / ``ObjectiveFunction`` and ``pm.updates.get_or_compute_grads``.

Chain rule to the protocol's (m, C): m = mu; C_ii = softplus(rho_i), so dF/dC_ii = (dF/drho_i) / sigmoid(rho_i) and
sigmoid(rho_i) = 1 - exp(-C_ii); the strictly-lower entries are C's own.  On V (tril or diag) that is the projected
gradient proj_V dF/dC the protocol asks for.

The target is rebuilt as a PyMC model from ``kind`` / ``params`` (``pm.MvNormal`` for a Gaussian, ``pm.Normal`` /
``pm.Bernoulli(logit_p=...)`` likelihoods for the regressions, ``pm.MvNormal`` group effects for the hierarchical
model, ``pm.Flat`` + ``pm.Potential`` for the cosine target) and checked once per target against ``target.logp``
through PyMC's own objective (the energy loss at U = 0 is -log p(m)).  ``callable`` targets (a Python black box)
are declined: they are not a PyMC model.  The data are ``pytensor.shared`` variables, so one compiled function
serves every target of the same kind and shapes.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
from pymc.variational.operators import KL
from pymc.variational.opvi import Operator
from pytensor.gradient import disconnected_grad
from pytensor.graph.replace import graph_replace

from refvi.verification.examples._validate import positive_triangular_scale, refuse_bad_input

#: protocol structure -> PyMC approximation
FAMILIES = {"tril": "fullrank", "diag": "meanfield"}
KINDS = ("gaussian", "linear", "logistic", "hierarchical_logistic", "cosine")
#: PyTensor's ``fast_run`` rewrites (those ``pm.fit`` compiles with, including the stabilisations of log-sigmoid
#: terms) with the Python linker: the statements call many small shapes, and generating and compiling C code (gcc)
#: for each would dominate the run.  The linker only chooses who executes each rewritten node.
MODE = pytensor.compile.mode.Mode(linker="py", optimizer="fast_run")


def _points(target, Z) -> np.ndarray:
    """The rows of Z as points of the target, refused by name when they are not (S, d): PyTensor's compiled log density
    reads the first d entries of a longer vector and asserts on a shorter one."""
    Z = np.atleast_2d(np.asarray(Z, dtype=np.float64))
    if Z.ndim != 2 or Z.shape[1] != target.dim:
        raise ValueError(f"points must be (S, {target.dim}), got shape {Z.shape}")
    return Z


class _Energy(Operator):
    """ADVI's objective without its log q term: -E log p(z(w))."""

    def apply(self, f):
        return -self.datalogp_norm - self.varlogp_norm


class _NegEntropy(Operator):
    """The log q term of ADVI's objective alone: grad = grad h(C)."""

    def apply(self, f):
        return self.logq_norm


# ---- the target as a PyMC model ---------------------------------------------------------------------------------
def _shared(params, names):
    return {
        k: pytensor.shared(np.asarray(params[k], dtype=np.int64 if k == "groups" else np.float64), name=k)
        for k in names
    }


def pymc_model(kind, params):
    """(model, data) where data maps param name -> the ``pytensor.shared`` variable holding it."""
    with pm.Model() as model:
        if kind == "gaussian":
            data = _shared(params, ("mean", "precision"))
            pm.MvNormal("z", mu=data["mean"], tau=data["precision"], shape=np.shape(params["mean"]))
        elif kind == "linear":
            data = _shared(params, ("X", "y", "noise_scale", "prior_scale"))
            d = np.shape(params["X"])[1]
            z = pm.Normal("z", 0.0, data["prior_scale"], shape=d)
            pm.Normal("y", mu=data["X"] @ z, sigma=data["noise_scale"], observed=data["y"])
        elif kind == "logistic":
            data = _shared(params, ("X", "y", "prior_scale"))
            d = np.shape(params["X"])[1]
            z = pm.Normal("z", 0.0, data["prior_scale"], shape=d)
            pm.Bernoulli("y", logit_p=data["X"] @ z, observed=(data["y"] + 1.0) / 2.0)
        elif kind == "hierarchical_logistic":
            data = _shared(params, ("X", "y", "groups", "Sigma", "Delta"))
            G, q = int(params["n_groups"]), np.shape(params["X"])[1]
            theta = pm.MvNormal("theta", mu=pt.zeros(q), cov=data["Sigma"], shape=q)
            zg = pm.MvNormal("z_g", mu=theta, cov=data["Delta"], shape=(G, q))
            pm.Bernoulli("y", logit_p=(data["X"] * zg[data["groups"]]).sum(axis=1), observed=(data["y"] + 1.0) / 2.0)
        elif kind == "cosine":
            data = _shared(params, ("alpha", "b", "phi", "beta", "z0"))
            z = pm.Flat("z", shape=np.shape(params["b"]))
            r = z - data["z0"]
            pm.Potential(
                "cosine", -(data["alpha"] * pt.cos(data["b"] @ z + data["phi"]) + 0.5 * data["beta"] * (r @ r))
            )
        else:
            raise ValueError(f"PyMC adapter: no PyMC model for target kind {kind!r}")
    return model, data


def _set_data(target, data):
    """Load the target's data into the shared variables.  PyTensor indexes like NumPy, so a negative group label
    would silently pick the last group, and PyMC's normal densities return -inf for a singular covariance: the
    labels and the covariances are checked here (PyMC does not), as the protocol asks for a refusal."""
    for name in {"gaussian": ("precision",), "hierarchical_logistic": ("Sigma", "Delta")}.get(target.kind, ()):
        A = np.asarray(target.params[name], dtype=np.float64)
        if A.ndim != 2 or A.shape[0] != A.shape[1] or not np.all(np.isfinite(A)) or np.linalg.eigvalsh(A)[0] <= 0:
            raise ValueError(f"{target.kind} target: {name} must be a finite positive-definite matrix")
    if target.kind == "hierarchical_logistic":
        g, G = np.asarray(target.params["groups"]), int(target.params["n_groups"])
        if g.size and (g.min() < 0 or g.max() >= G):
            raise ValueError(f"group labels must lie in 0..{G - 1}, got labels from {g.min()} to {g.max()}")
    for k, var in data.items():
        var.set_value(np.asarray(target.params[k], dtype=var.dtype))


def shape_key(target):
    """What the compiled functions depend on: the kind, d, G and every parameter's rank (the data's shared
    variables have no static shape, so targets with another number of observations reuse the same functions)."""
    return (target.kind, target.dim, target.params.get("n_groups")) + tuple(
        (k, np.ndim(v))
        for k, v in sorted(target.params.items())
        if v is not None and k not in ("smoothness", "strong_convexity", "n_groups")
    )


# ---- PyMC's objective at given base samples ---------------------------------------------------------------------
def _solve_lower(L, R):
    """L^{-1} R for lower-triangular L (R has one column per sample)."""
    return pt.linalg.solve_triangular(L, R, lower=True)


class _Compiled:
    """PyMC's approximation of one model and family, with one compiled gradient per (estimator, S == 1)."""

    def __init__(self, model, family, mode=None):
        self.model, self.family, self.mode = model, family, MODE if mode is None else mode
        with model:
            self.approx = pm.FullRank() if family == "fullrank" else pm.MeanField()
        self.group = self.approx.groups[0]
        self.U = pt.matrix("U")
        self.fns = {}

    def _params(self):
        names = ("mu", "L_tril") if self.family == "fullrank" else ("mu", "rho")
        return [self.group.params_dict[n] for n in names]

    def _L(self):
        g = self.group
        return g.L if self.family == "fullrank" else pt.diag(g.std)

    def _score_loss(self):
        """mean over rows of -log p(z) log q_w(z) at fixed z = mu + L u (PyMC's log q graph at u = L^{-1}(z - mu))."""
        g, a = self.group, self.approx
        z = disconnected_grad(g.symbolic_random)  # (S, d), fixed
        neg_logp = disconnected_grad(-a.sized_symbolic_logp)  # (S,)
        u = _solve_lower(self._L(), (z - g.mean).T).T
        logq = graph_replace(g.symbolic_logq_not_scaled, {g.symbolic_initial: u}, strict=False)
        return (neg_logp * logq).mean()

    def _stl_loss(self):
        """-log p(z(w)) + log q_{w'}(z(w)) with w' = w held fixed, on PyMC's graphs."""
        g, a = self.group, self.approx
        frozen = {p: disconnected_grad(p) for p in self._params()}
        Lf, muf = graph_replace([self._L(), g.mean], frozen, strict=False)
        u = _solve_lower(Lf, (g.symbolic_random - muf).T).T
        logq = graph_replace(g.symbolic_logq_not_scaled, {**frozen}, strict=False)
        logq = graph_replace(logq, {g.symbolic_initial: u}, strict=False)
        return -a.sized_symbolic_logp.mean() + logq.mean()

    def _loss(self, which, nmc):
        a = self.approx
        if which == "entropy":
            return KL(a)(None)(nmc, more_replacements={self.group.symbolic_initial: self.U})
        if which == "energy":
            return _Energy(a)(None)(nmc, more_replacements={self.group.symbolic_initial: self.U})
        if which == "neg_entropy":
            return _NegEntropy(a)(None)(nmc, more_replacements={self.group.symbolic_initial: self.U})
        loss = self._score_loss() if which == "score" else self._stl_loss()
        return a.set_size_and_deterministic(loss, nmc, 0, {self.group.symbolic_initial: self.U})

    def fn(self, which, S):
        key = (which, S == 1)
        if key not in self.fns:
            loss = self._loss(which, 1 if S == 1 else 2)  # PyMC skips its scan over samples when S == 1
            params = self._params()
            if which == "neg_entropy":  # log q does not depend on mu: a zero gradient
                grads = pytensor.grad(loss, params, disconnected_inputs="ignore")
            else:  # what ObjectiveFunction.add_obj_updates calls
                grads = pm.updates.get_or_compute_grads(loss, params)
            ins = [pt.vector("mu_in"), pt.vector("cov_in")]
            self.fns[key] = pytensor.function(
                [self.U, *ins],
                [loss, *grads],
                givens=list(zip(params, ins, strict=True)),
                mode=self.mode,
                on_unused_input="ignore",
            )
        return self.fns[key]


def to_pymc(m, C, family):
    """(m, C) -> PyMC's (mu, L_tril) or (mu, rho): softplus^{-1}(C_ii) on the diagonal."""
    m, C = np.asarray(m, dtype=np.float64), np.asarray(C, dtype=np.float64)
    d = C.shape[0]
    rho = np.log(np.expm1(np.diag(C)))
    if family == "meanfield":
        return m, rho
    T = C.copy()
    T[np.diag_indices(d)] = rho
    return m, T[np.tril_indices(d)]


def from_pymc_gradient(g_mu, g_cov, C, family):
    """Chain rule: PyMC's gradient in (mu, L_tril / rho) -> (gm, gC) with respect to (m, C) on V."""
    C = np.asarray(C, dtype=np.float64)
    d = C.shape[0]
    g_cov = np.asarray(g_cov, dtype=np.float64)
    gC = np.zeros((d, d))
    if family == "fullrank":
        gC[np.tril_indices(d)] = g_cov
    else:
        gC[np.diag_indices(d)] = g_cov
    gC[np.diag_indices(d)] /= -np.expm1(-np.diag(C))  # d softplus(rho)/d rho = 1 - exp(-C_ii)
    return np.asarray(g_mu, dtype=np.float64), gC


class PyMCImplementation:
    """PyMC's ADVI (diag) and FullRankADVI (tril) gradients (see the module docstring)."""

    name = "pymc"
    capabilities = {"structure": tuple(FAMILIES)}

    def __init__(self, mode=None):
        """``mode``: the PyTensor compile mode (default :data:`MODE`; ``"FAST_RUN"`` is what ``pm.fit`` uses)."""
        self._cache: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self._compiled = {}
        self.mode = mode

    def supports(self, method, arguments):
        """Target kinds PyMC can express as a model; C that PyMC can represent (tril / diag, positive diagonal)."""
        target = arguments.get("target")
        if target is not None and getattr(target, "kind", None) not in KINDS:
            return f"target kind {getattr(target, 'kind', None)!r} is not a PyMC model (kinds: {', '.join(KINDS)})"
        return positive_triangular_scale(
            arguments,
            "ADVI (mean field)",
            "FullRankADVI",
            "PyMC parameterises C's diagonal by softplus: it must be positive",
        )

    def _compiled_for(self, target, family):
        key = (shape_key(target), family)
        entry = self._compiled.get(key)
        if entry is None:
            model, data = pymc_model(target.kind, dict(target.params))
            entry = self._compiled[key] = (_Compiled(model, family, self.mode), data)
        compiled, data = entry
        _set_data(target, data)
        if target not in self._cache:
            self._cache[target] = set()
        if family not in self._cache[target]:
            _check_logp(target, compiled, family)
            self._cache[target].add(family)
        return compiled

    def _call(self, which, target, m, C, U, structure):
        refuse_bad_input(m, C, U, invertible=which != "energy")
        family = FAMILIES[structure]
        compiled = self._compiled_for(target, family)
        U = np.atleast_2d(np.asarray(U, dtype=np.float64))
        mu, cov = to_pymc(m, C, family)
        _, g_mu, g_cov = compiled.fn(which, U.shape[0])(U, mu, cov)
        return from_pymc_gradient(g_mu, g_cov, C, family)

    def _value_grad(self, target):
        """PyMC's ``model.logp_dlogp_function(ravel_inputs=True)`` (what its samplers call), per shape key."""
        key = ("logp", shape_key(target))
        if key not in self._compiled:
            model, data = pymc_model(target.kind, dict(target.params))
            kw = {} if self.mode is None else {"mode": self.mode}
            fn = model.logp_dlogp_function(ravel_inputs=True, **kw)
            fn.set_extra_values({})
            self._compiled[key] = (fn, data)
        fn, data = self._compiled[key]
        _set_data(target, data)
        return fn

    def log_joint(self, target, Z):
        fn = self._value_grad(target)
        return np.array([float(fn(z)[0]) for z in _points(target, Z)])

    def grad_log_joint(self, target, Z):
        fn = self._value_grad(target)
        return np.array([np.asarray(fn(z)[1]) for z in _points(target, Z)])

    def energy(self, target, m, C, U, structure="tril"):
        return self._call("energy", target, m, C, U, structure)

    def entropy(self, target, m, C, U, structure="sym"):
        return self._call("entropy", target, m, C, U, structure)

    def stl(self, target, m, C, U, structure="tril"):
        return self._call("stl", target, m, C, U, structure)

    def score(self, target, m, C, U, structure="tril"):
        return self._call("score", target, m, C, U, structure)

    def grad_neg_entropy(self, C, structure="tril"):
        family = FAMILIES[structure]
        C = np.asarray(C, dtype=np.float64)
        d = C.shape[0]
        compiled = _flat_compiled(d, family)
        mu, cov = to_pymc(np.zeros(d), C, family)
        _, g_mu, g_cov = compiled.fn("neg_entropy", 1)(np.zeros((1, d)), mu, cov)
        return from_pymc_gradient(g_mu, g_cov, C, family)[1]


@functools.cache
def _flat_compiled(d, family):
    """An approximation over a flat d-vector: its log q term does not depend on the model."""
    with pm.Model() as model:
        pm.Flat("z", shape=d)
    return _Compiled(model, family)


def _check_logp(target, compiled, family):
    """PyMC's energy loss at U = 0 is -log p(m): compare it with ``target.logp`` at two points."""
    rng = np.random.default_rng(0)
    d = target.dim
    fn = compiled.fn("energy", 1)
    for z in (np.zeros(d), 0.5 * rng.standard_normal(d)):
        ref = float(target.logp(z))
        got = -float(fn(np.zeros((1, d)), *to_pymc(z, np.eye(d), family))[0])
        if not abs(got - ref) <= 1e-9 * (1.0 + abs(ref)):
            raise ValueError(f"PyMC model of {target!r}: log p is {got!r} at z = {z}, target.logp says {ref!r}")


IMPL = PyMCImplementation()
