"""PyMC models as refvi targets: ``from_pymc(model)`` (needs the optional ``[pymc]`` extra).

The model's joint log density on PyMC's unconstrained space (its value variables, transforms' log-Jacobians
included: ``model.logp()``) and its gradient (``pytensor.grad``) are compiled with PyTensor's Numba backend into one
``numba.njit`` function, wrapped as ``numba.njit`` ``logp(z)`` / ``grad_logp(z)``, so the target is a
:class:`~refvi.targets.custom.CallableTarget` whose kernels run inside refvi's compiled estimators.  The model's data
are frozen into constants when the target is built (``pymc.model.transform.optimization.freeze_dims_and_data``).

The unconstrained coordinates follow the order of ``model.value_vars`` (``param_names``).  ``constrain(Z)`` maps
unconstrained rows to the model's free variables and deterministics on their own scale (from PyMC's
``model.unobserved_value_vars``), ``pushforward_moments(m, C)`` gives their mean and sd under z ~ N(m, C C^T), and
``inference_data(m, C, draws)`` (or ``FitResult.to_inference_data(draws, target=...)``) an ArviZ ``InferenceData``.
"""

from __future__ import annotations

import numpy as np

from refvi._checks import as_generator, as_vector, check_scale
from refvi.targets.custom import CallableTarget


def _import_pymc():
    try:
        import pymc
        import pytensor
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError("refvi.targets.from_pymc needs PyMC: pip install 'refvi[pymc]'") from exc
    return pymc, pytensor


class PyMCTarget(CallableTarget):
    """A PyMC model on its unconstrained space (see the module docstring).

    ``param_names``: the unconstrained coordinates (``"sigma_log__"``, ``"beta[0]"``, ...); ``var_names``: the
    constrained variables ``constrain`` returns; ``shapes``: their shapes.
    """

    name = "pymc"

    def __init__(self, model, *, smoothness=None, strong_convexity=0.0):
        pm, pytensor = _import_pymc()
        import numba
        import pytensor.tensor as pt
        from pymc.model.transform.optimization import freeze_dims_and_data
        from pytensor.graph.replace import graph_replace

        if not isinstance(model, pm.Model):
            raise TypeError(f"from_pymc needs a pymc.Model, got {type(model).__name__}")
        if not model.free_RVs:
            raise ValueError("the PyMC model has no free random variables: nothing to fit")
        discrete = [rv.name for rv in model.free_RVs if rv.type.dtype.startswith(("int", "uint", "bool"))]
        if discrete:
            raise ValueError(f"Gaussian VI needs continuous parameters; discrete free variables: {discrete}")
        order = [v.name for v in model.value_vars]  # the user's order (freezing may permute it)
        keep = [v.name for v in model.free_RVs] + [v.name for v in model.deterministics]
        model = freeze_dims_and_data(model)
        point = model.initial_point()
        values = {v.name: v for v in model.value_vars}
        x = pt.vector("z", dtype="float64")
        replace, names, start = {}, [], 0
        for v in (values[n] for n in order):
            shape = np.shape(point[v.name])
            size = int(np.prod(shape, dtype=np.int64))
            replace[v] = x[start : start + size].reshape(shape)
            names += [v.name] if shape == () else [f"{v.name}[{i}]" for i in range(size)]
            start += size
        logp = graph_replace(model.logp(), replace, strict=False)
        fn = pytensor.function([x], [logp, pytensor.grad(logp, x)], mode="NUMBA")
        joint = fn.vm.jit_fn  # PyTensor's numba_funcify of the whole graph

        @numba.njit
        def logp_fn(z):
            return joint(z)[0].item()

        @numba.njit
        def grad_logp_fn(z):
            return joint(z)[1].copy()

        super().__init__(logp_fn, grad_logp_fn, start, smoothness=smoothness, strong_convexity=strong_convexity)
        self.model, self.param_names = model, tuple(names)
        by_name = {o.name: o for o in model.unobserved_value_vars}
        outs = [by_name[n] for n in keep]  # free variables on their own scale, deterministics
        self.var_names = tuple(keep)
        self.shapes = {}
        self._constrain_fn = pytensor.function([x], graph_replace(outs, replace, strict=False))
        for name, value in zip(self.var_names, self._constrain_fn(np.zeros(self.dim)), strict=True):
            self.shapes[name] = np.shape(value)

    def _kernel_plan(self):
        """The compiled kernels of :class:`CallableTarget` around the model's njit log p and gradient: the density is
        the parent's (this class adds only the constrained-space helpers), so the fused loop applies."""
        return CallableTarget._kernel_plan(self)

    def constrain(self, Z) -> dict:
        """``{name: (S, *shape)}``: the constrained values of the free variables and deterministics at the rows of Z."""
        Z = np.atleast_2d(np.asarray(Z, dtype=np.float64))
        if Z.ndim != 2 or Z.shape[1] != self.dim:
            raise ValueError(f"Z must have shape (S, {self.dim}), got {np.shape(Z)}")
        rows = [self._constrain_fn(z) for z in Z]
        return {name: np.stack([r[i] for r in rows]) for i, name in enumerate(self.var_names)}

    def draws(self, m, C, draws: int = 1000, seed=0) -> dict:
        """``draws`` constrained draws under z ~ N(m, C C^T) (the same dict as :meth:`constrain`)."""
        m = as_vector(m, "m", self.dim)
        C = check_scale(C, self.dim, "full", "C")
        if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 2:
            raise ValueError(f"draws must be an integer >= 2, got {draws!r}")
        U = as_generator(seed, "seed").standard_normal((int(draws), self.dim))
        return self.constrain(U @ C.T + m)

    def pushforward_moments(self, m, C, *, samples: int = 20_000, seed=0) -> dict:
        """{name: (mean, sd)} of the constrained variables under z ~ N(m, C C^T), Monte Carlo with ``samples``
        draws (error of the mean about sd / sqrt(samples))."""
        return {k: (v.mean(axis=0), v.std(axis=0, ddof=1)) for k, v in self.draws(m, C, samples, seed).items()}

    def inference_data(self, m, C, draws: int = 1000, seed=0, chains: int = 1):
        """An ArviZ ``InferenceData`` of ``draws`` independent constrained draws from N(m, C C^T), split into
        ``chains`` equal chains (ArviZ's R-hat and ESS need at least 2; the draws are iid either way)."""
        import arviz as az

        if isinstance(chains, bool) or not isinstance(chains, (int, np.integer)) or chains < 1 or draws % chains:
            raise ValueError(f"chains must be a positive integer dividing draws = {draws!r}, got {chains!r}")
        out = self.draws(m, C, draws, seed)
        return az.from_dict(posterior={k: v.reshape((chains, -1) + v.shape[1:]) for k, v in out.items()})

    def __repr__(self) -> str:
        return f"PyMCTarget(dim={self.dim}, vars={list(self.var_names)})"


def from_pymc(model, *, smoothness=None, strong_convexity=0.0) -> PyMCTarget:
    """The PyMC ``model`` as a refvi target on its unconstrained space (see :class:`PyMCTarget`)."""
    return PyMCTarget(model, smoothness=smoothness, strong_convexity=strong_convexity)
