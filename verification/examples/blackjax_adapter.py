"""Conformance adapter around BlackJAX's Gaussian VI (``blackjax.vi.fullrank_vi`` and ``blackjax.vi.meanfield_vi``).

Run the statements against it with::

    python -m refvi.verification --impl refvi.verification.examples.blackjax_adapter:IMPL --select '000.*' '002.*'

BlackJAX parameterises q = N(mu, L L^T) by ``(mu, chol_params)`` (full rank: ``chol_params`` = the log of L's
diagonal, then L's strictly-lower entries in row-major order, unpacked by ``fullrank_vi._unflatten_cholesky``) or by
``(mu, rho)`` (mean field: sigma = exp(rho)).  It can therefore only represent lower-triangular C with a positive
diagonal (structure "tril") and diagonal C with a positive diagonal ("diag"): ``capabilities`` and ``supports``
declare exactly that, so the statements skip the "full" / "sym" instances (and any C outside that set) and run the
rest.

The gradients are BlackJAX's own: one call of ``blackjax.vi._gaussian_vi._elbo_step`` (the optimisation step that
``fullrank_vi.step`` / ``meanfield_vi.step`` run), with

* ``sample_fn`` drawing z = mu + L u from refvi's base samples ``U`` instead of ``jax.random.normal`` (L from
  BlackJAX's ``_unflatten_cholesky``, or sigma = exp(rho)), exactly the formula of BlackJAX's ``_sample``;
* ``logq_fn`` = BlackJAX's ``generate_fullrank_logdensity`` / ``generate_meanfield_logdensity``;
* an optax ``GradientTransformation`` that returns zero updates and keeps the gradient as its state, so the
  gradient BlackJAX's ``jax.value_and_grad`` computed comes back unchanged (no subtraction of iterates).

The protocol's estimators are then BlackJAX's objective (-ELBO = mean of log q - log p) under its switches:

==================  ==========================================================================================
``stl``             ``stl_estimator=True`` (BlackJAX's default): sticking the landing
``entropy``         ``stl_estimator=False``: the full reparameterisation gradient, log q(z(w); w) =
                    -log det L - |u|^2/2 + const, i.e. g_energy + grad h (seed 000 Eq. 8)
``energy``          the same step with ``logq_fn`` returning 0 (the energy part of BlackJAX's objective)
``grad_neg_entropy`` the same step with ``logdensity_fn`` returning 0 and ``stl_estimator=False``
``score``           not an option of BlackJAX's step: ``jax.grad`` of BlackJAX's variational log density
                    ``generate_*_logdensity`` at the fixed point z = mu + L u, times -log p(z)
==================  ==========================================================================================

Chain rule to the protocol's (m, C): m = mu; C_ii = exp(theta_i) so dF/dC_ii = (dF/dtheta_i) / C_ii; the
strictly-lower entries are C's own, dF/dC_ij = dF/dtheta_ij.  Since BlackJAX's C lives on V (tril or diag), that
*is* the projected gradient proj_V dF/dC the protocol asks for.  The target's ``logdensity_fn`` is the plain
``jax.numpy`` log joint of :func:`refvi.verification.examples.jax_adapter.jax_logdensity` (what a BlackJAX user
writes), checked once per target against ``target.logp``.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402
from blackjax.vi import fullrank_vi, meanfield_vi  # noqa: E402
from blackjax.vi._gaussian_vi import KL, _elbo_step  # noqa: E402

from ._validate import positive_triangular_scale  # noqa: E402
from .jax_adapter import (  # noqa: E402
    EstimatorsByName,
    callback_logp,
    check_logp,
    jax_logdensity,
    jit,
    static_key,
    target_params,
)

#: protocol structure -> BlackJAX family
FAMILIES = {"tril": "fullrank", "diag": "meanfield"}


def _capture_gradient() -> optax.GradientTransformation:
    """An optax transformation whose update is zero and whose new state is the gradient it was given."""
    return optax.GradientTransformation(
        lambda params: jax.tree.map(jnp.zeros_like, params),
        lambda grads, state, params=None: (jax.tree.map(jnp.zeros_like, grads), grads),
    )


def to_blackjax(m, C, family):
    """(m, C) -> BlackJAX's (mu, chol_params) or (mu, rho)."""
    m, C = np.asarray(m, dtype=np.float64), np.asarray(C, dtype=np.float64)
    if family == "meanfield":
        return m, np.log(np.diag(C))
    d = C.shape[0]
    return m, np.concatenate([np.log(np.diag(C)), C[np.tril_indices(d, k=-1)]])


def from_blackjax_gradient(g_mu, g_cov, C, family):
    """Chain rule: BlackJAX's gradient in (mu, log-Cholesky / log-sd) -> (gm, gC) with respect to (m, C) on V."""
    C = np.asarray(C, dtype=np.float64)
    d = C.shape[0]
    g_cov = np.asarray(g_cov, dtype=np.float64)
    gC = np.zeros((d, d))
    gC[np.diag_indices(d)] = g_cov[:d] / np.diag(C)  # d exp(theta)/d theta = C_ii
    if family == "fullrank":
        gC[np.tril_indices(d, k=-1)] = g_cov[d:]
    return np.asarray(g_mu, dtype=np.float64), gC


def _family_functions(family):
    if family == "fullrank":

        def draw(parameters, U):  # fullrank_vi._sample with eps = U
            mu, chol_params = parameters
            L = fullrank_vi._unflatten_cholesky(chol_params, mu.shape[0])
            return U @ L.T + mu

        def logq(parameters):
            return fullrank_vi.generate_fullrank_logdensity(parameters[0], parameters[1])
    else:

        def draw(parameters, U):  # meanfield_vi._sample with eps = U
            mu, rho = parameters
            return U * jnp.exp(rho) + mu

        def logq(parameters):
            return meanfield_vi.generate_meanfield_logdensity(parameters[0], parameters[1])

    return draw, logq


def _build(key, family, callback=None):
    """Jitted ``f(params, mu, cov_params, U) -> (g_mu, g_cov)`` per estimator, for one target kind and family."""
    logp = jax_logdensity(key, callback)
    draw, logq = _family_functions(family)
    opt = _capture_gradient()
    rng_key = jax.random.PRNGKey(0)  # unused: sample_fn reads the base samples U

    def blackjax_gradient(params, mu, cov, U, *, energy=True, entropy=True, stl=True):
        parameters = (mu, cov)
        _, grads, _ = _elbo_step(
            rng_key,
            parameters,
            opt.init(parameters),
            (lambda z: logp(params, z)) if energy else (lambda z: jnp.zeros(())),
            opt,
            lambda key, parameters, n: draw(parameters, U),
            logq if entropy else (lambda parameters: lambda z: jnp.zeros(())),
            U.shape[0],
            objective=KL(),
            stl_estimator=stl,
        )
        return grads

    def score(params, mu, cov, U):  # REINFORCE on BlackJAX's log q: mean of -log p(z) grad_w log q_w(z)
        Z = jax.lax.stop_gradient(draw((mu, cov), U))
        f = jax.lax.stop_gradient(-jax.vmap(lambda z: logp(params, z))(Z))
        return jax.grad(lambda w: jnp.mean(f * jax.vmap(logq(w))(Z)))((mu, cov))

    return {
        "energy": jit(functools.partial(blackjax_gradient, entropy=False, stl=False)),
        "entropy": jit(functools.partial(blackjax_gradient, stl=False)),
        "stl": jit(functools.partial(blackjax_gradient, stl=True)),
        "neg_entropy": jit(functools.partial(blackjax_gradient, energy=False, stl=False)),
        "score": jit(score),
        "logp": jit(logp),
    }


@functools.cache
def _kind_fns(key, family):
    return _build(key, family)


class BlackJAXImplementation(EstimatorsByName):
    """BlackJAX's full-rank (tril) and mean-field (diag) Gaussian VI gradients (see the module docstring)."""

    name = "blackjax"
    capabilities = {"structure": tuple(FAMILIES)}

    def __init__(self):
        self._cache: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

    def supports(self, method, arguments):
        """Only C that BlackJAX can represent: lower triangular (tril) or diagonal (diag), positive diagonal."""
        return positive_triangular_scale(
            arguments,
            "mean-field VI",
            "full-rank VI",
            "BlackJAX parameterises C's diagonal by its log: it must be positive",
        )

    def _fns(self, target, family):
        entry = self._cache.get(target)
        if entry is None:
            key = static_key(target)
            params = target_params(target)
            callback = callback_logp(target) if key[0] == "callable" else None
            entry = self._cache[target] = {"params": params, "key": key, "callback": callback, "checked": False}
        if family not in entry:
            entry[family] = (
                _build(entry["key"], family, entry["callback"])
                if entry["key"][0] == "callable"
                else _kind_fns(entry["key"], family)
            )
            if not entry["checked"]:
                check_logp(target, entry[family]["logp"], entry["params"], "BlackJAX logdensity_fn")
                entry["checked"] = True
        return entry["params"], entry[family]

    def _call(self, which, target, m, C, U, structure):
        family = FAMILIES[structure]
        params, fns = self._fns(target, family)
        mu, cov = to_blackjax(m, C, family)
        U = np.atleast_2d(np.asarray(U, dtype=np.float64))
        g_mu, g_cov = fns[which](params, mu, cov, U)
        return from_blackjax_gradient(g_mu, g_cov, C, family)

    def grad_neg_entropy(self, C, structure="tril"):
        family = FAMILIES[structure]
        fns = _neg_entropy_fns(family)
        C = np.asarray(C, dtype=np.float64)
        d = C.shape[0]
        mu, cov = to_blackjax(np.zeros(d), C, family)
        g_mu, g_cov = fns(mu, cov, np.zeros((1, d)))
        return from_blackjax_gradient(g_mu, g_cov, C, family)[1]


@functools.cache
def _neg_entropy_fns(family):
    """grad h from BlackJAX's step with a zero log p: the gradient of log q(z(w); w) = -log det C + const."""
    fns = _build(("cosine",), family)  # the kind is irrelevant: log p is switched off
    return functools.partial(fns["neg_entropy"], None)


IMPL = BlackJAXImplementation()
