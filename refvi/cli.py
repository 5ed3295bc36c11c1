"""The ``refvi`` console script."""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["verify"]:  # a true pass-through: every option of python -m refvi.verification
        from refvi.verification.__main__ import main as vmain

        return vmain(argv[1:])
    p = argparse.ArgumentParser(prog="refvi", description="refvi: verified black-box variational inference")
    p.add_argument("--version", action="version", version=f"refvi {_version()}")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser(
        "verify",
        help="run the verification statements: every option of python -m refvi.verification "
        "(--select, --impl, --json, --list, --profile, --workers, --self-test, ...)",
    )
    sub.add_parser("datasets", help="list the bundled real data sets")
    f = sub.add_parser("fit", help="fit a Gaussian approximation to a bundled data set's Bayesian GLM")
    f.add_argument("dataset", help="breast_cancer, diabetes, digits or wine")
    f.add_argument(
        "--method", default="prox-sgd", choices=("prox-sgd", "proj-sgd", "gd-prox", "gd-projected", "gd-naive")
    )
    f.add_argument("--steps", type=int, default=None, help="steps T (default: fit's budget for the data set's d)")
    f.add_argument(
        "--step-size",
        default=None,
        help="a number, or a rule: '1/(M sqrt T)', '1/sqrt T', thm6, thm9, thm6-switch, thm9-switch, "
        "'A log T / T' (default: Thm 6's / Thm 9's rule in the Laplace frame)",
    )
    f.add_argument("--samples", type=int, default=None, help="base samples per step S (default: fit's budget)")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--average", default=None, help="tail (default), last, uniform or theta (Thms 7 / 10)")
    f.add_argument("--estimator", default=None, help="energy / score (prox-sgd), entropy / stl (proj-sgd)")
    f.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = p.parse_args(argv)
    if args.cmd == "fit":
        return _fit(args)
    if args.cmd == "datasets":
        from refvi.targets.datasets import DATASETS, load_dataset

        for name in DATASETS:
            ds = load_dataset(name)
            print(f"{name:<14} {ds.X.shape[0]:>5} x {ds.X.shape[1]:<3} {ds.task:<15} {ds.description}")
        return 0
    return 2  # pragma: no cover


def _version() -> str:
    import refvi

    return refvi.__version__


def _fit(args) -> int:
    import numpy as np

    from refvi.optim.fit import fit
    from refvi.targets.datasets import DATASETS, target_for

    if args.dataset not in DATASETS:
        print(f"refvi fit: unknown data set {args.dataset!r}; choose one of {', '.join(DATASETS)}", file=sys.stderr)
        return 2
    step = args.step_size
    if step is not None:
        try:
            step = float(step)
        except ValueError:
            pass
    import warnings

    from refvi.optim.fit import ConvergenceWarning

    target = target_for(args.dataset)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # reported below, with the summary
            res = fit(
                target,
                args.method,
                steps=args.steps,
                step_size=step,
                samples=args.samples,
                seed=args.seed,
                average=args.average,
                estimator=args.estimator,
                progress=not args.no_progress,
            )
    except (ValueError, TypeError) as exc:
        print(f"refvi fit: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("refvi fit: interrupted (Ctrl-C); no result", file=sys.stderr)
        return 130
    sd = np.sqrt(np.diag(res.covariance))
    print(
        f"{args.dataset}: {type(target).__name__}, d = {target.dim}, M = {target.smoothness:.6g}, "
        f"mu = {target.strong_convexity:.6g}"
    )
    print(res.summary())
    k = min(5, target.dim)
    print(f"posterior mean (first {k}): {np.array2string(res.m[:k], precision=4)}")
    print(f"posterior sd   (first {k}): {np.array2string(sd[:k], precision=4)}")
    if res.ended_worse:
        print(
            "refvi fit: the run ended worse than it started (see the note above); the result is not a converged "
            "approximation",
            file=sys.stderr,
        )
        return 1
    if res.diagnostics is not None and not res.diagnostics.converged:
        # the warning's text, noted last by fit (with the cause when it is not the checks themselves)
        print(f"refvi fit: {res.notes[-1]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
