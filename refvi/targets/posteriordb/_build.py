"""Rebuild the shipped files from a posteriordb copy (run once; not imported by refvi):

    python -m refvi.targets.posteriordb._build /path/to/shared/data/posteriordb

Copies the data files the models need (diamonds gzipped) and ``LICENCE.md``, and writes ``reference_moments.json``:
per posterior, for the constrained parameters of the reference draws (``names``): ``mean``, ``sd``, ``mcse_mean``
(sd / sqrt(ess_bulk) from the draws' diagnostics), ``ess_bulk``; and for the unconstrained coordinates
(``u_names``, the target's ``param_names``): ``u_mean``, ``u_sd``, ``u_cov`` (the draws mapped back through the
inverse transform: log of the scales, theta_trans = (theta - mu) / tau, f_tilde = chol(K)^{-1} f).
"""

from __future__ import annotations

import gzip
import json
import pathlib
import shutil
import sys

import numpy as np

from refvi.targets.posteriordb.models import DATA, HERE, POSTERIORS

_FILES = {
    "sblrc": "sblrc.json",
    "kidiq": "kidiq.json",
    "mesquite": "mesquite.json",
    "earnings": "earnings.json",
    "nes1972": "nes1972.json",
    "arK": "arK.json",
    "eight_schools": "eight_schools.json",
    "gp_pois_regr": "gp_pois_regr.json",
}


def _unconstrain(name, names, D, data_dir):
    """Unconstrained draws (n x d) from the constrained draw matrix D (n x p, columns in ``names`` order)."""
    if name.startswith("eight_schools"):
        theta, mu, tau = D[:, :8], D[:, 8], D[:, 9]
        return np.column_stack([(theta - mu[:, None]) / tau[:, None], mu, np.log(tau)])
    if name.startswith("gp_pois"):
        with open(data_dir / "gp_pois_regr.json") as fh:
            x = np.array(json.load(fh)["x"], dtype=float)
        rho, alpha, F = D[:, 0], D[:, 1], D[:, 2:]
        out = np.empty((D.shape[0], 2 + F.shape[1]))
        out[:, 0], out[:, 1] = np.log(rho), np.log(alpha)
        for i in range(D.shape[0]):
            Kc = alpha[i] ** 2 * np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / rho[i] ** 2) + 1e-10 * np.eye(x.size)
            out[i, 2:] = np.linalg.solve(np.linalg.cholesky(Kc), F[i])
        return out
    out = D.copy()
    out[:, -1] = np.log(D[:, -1])
    return out


def main(src: str) -> None:
    from refvi.targets.posteriordb.models import load

    root = pathlib.Path(src)
    DATA.mkdir(exist_ok=True)
    for f in _FILES.values():
        shutil.copyfile(root / "data" / f, DATA / f)
    with open(root / "data" / "diamonds.json", "rb") as fh, gzip.open(DATA / "diamonds.json.gz", "wb", 9) as out:
        out.write(fh.read())
    shutil.copyfile(root / "LICENCE.md", HERE / "LICENCE.md")
    table = {}
    for name in POSTERIORS:
        with open(root / "reference_draws" / f"{name}.json") as fh:
            chains = json.load(fh)
        with open(root / "reference_draws" / f"{name}.info.json") as fh:
            info = json.load(fh)["diagnostics"]
        target = load(name)
        names = list(target.draw_names)
        if list(chains[0].keys()) != names:
            raise ValueError(f"{name}: draw names {list(chains[0])} differ from the model's {names}")
        D = np.array([[v for c in chains for v in c[k]] for k in names]).T
        ess = np.array(info["effective_sample_size_bulk"], dtype=float)
        U = _unconstrain(name, names, D, root / "data")
        sd = D.std(axis=0, ddof=1)
        table[name] = {
            "names": names,
            "mean": D.mean(axis=0).tolist(),
            "sd": sd.tolist(),
            "mcse_mean": (sd / np.sqrt(ess)).tolist(),
            "ess_bulk": ess.tolist(),
            "u_names": list(target.param_names),
            "u_mean": U.mean(axis=0).tolist(),
            "u_sd": U.std(axis=0, ddof=1).tolist(),
            "u_cov": np.cov(U.T).tolist(),
            "draws": int(D.shape[0]),
        }
    from refvi import _atomic

    _atomic.write_json(HERE / "reference_moments.json", table, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/posteriordb")
