"""The ``refvi`` console script."""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="refvi", description="refvi: verified black-box variational inference")
    sub = p.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verify", help="run the verification statements (same as python -m refvi.verification)")
    v.add_argument("args", nargs=argparse.REMAINDER)
    sub.add_parser("datasets", help="list the bundled real data sets")
    args = p.parse_args(argv)
    if args.cmd == "verify":
        from refvi.verification.__main__ import main as vmain
        return vmain(args.args)
    if args.cmd == "datasets":
        from refvi.targets.datasets import DATASETS, load_dataset
        for name in DATASETS:
            ds = load_dataset(name)
            print(f"{name:<14} {ds.X.shape[0]:>5} x {ds.X.shape[1]:<3} {ds.task:<15} {ds.description}")
        return 0
    return 2  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
