"""``python -m gbai.tools.near_limit``: the near-limit study (:mod:`gbai.studies.near_limit`) from the command line.

Runs the study's five parts (or those named with ``--only``), prints each table as
Markdown and writes it as a CSV file to ``--out``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..algorithms import resolve
from ..studies.near_limit import (
    ALGORITHM,
    BAI_DELTAS,
    DELTAS,
    bai_comparison,
    bai_summary,
    bernoulli_ratios,
    beta_comparison,
    cost,
    error_rates,
)
from ..studies.near_limit import __doc__ as STUDY_DOC

__all__ = ["main"]


def _formats(table) -> list[str]:
    """Sample counts as integers with thousands separators, every other number to 3 significant digits."""
    return [",.0f" if name in ("mean_samples", "se", "its mean samples", "its se", "paired se of the difference")
            else ".3g" for name in table.columns]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gbai.tools.near_limit", description=STUDY_DOC.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs per point (default 200)")
    parser.add_argument("--error-runs", type=int, default=2000, help="runs per adversarial instance (default 2000)")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    parser.add_argument("--out", type=Path, default=Path("build/near_limit"), help="folder for the CSV files")
    parser.add_argument("--only", choices=["bernoulli", "beta", "errors", "cost", "bai"], action="append",
                        help="run only these parts (repeatable; default: all five)")
    parser.add_argument("--algorithm", default=ALGORITHM, help=f"the algorithm spec measured (default {ALGORITHM})")
    parser.add_argument("--deltas", type=float, nargs="+", default=None,
                        help="the deltas of the Bernoulli, Beta and best-arm tables (defaults: theirs)")
    parser.add_argument("--suffix", default="", help="appended to the CSV file names")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.error_runs < 1 or (args.workers is not None and args.workers < 1):
        parser.error("--runs, --error-runs and --workers must be positive")
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        algorithm = resolve(args.algorithm).spec  # named before any run starts
    except ValueError as error:
        parser.error(str(error))
    parts = {
        "bernoulli": ("bernoulli_ratios", lambda: bernoulli_ratios(args.runs, args.deltas or DELTAS,
                                                                   workers=args.workers, algorithm=algorithm)),
        "beta": ("beta_comparison", lambda: beta_comparison(args.runs, args.deltas or (1e-1, 1e-6),
                                                            workers=args.workers, algorithm=algorithm)),
        "errors": ("error_rates", lambda: error_rates(args.error_runs, workers=args.workers, algorithm=algorithm)),
        "cost": ("cost", lambda: cost(algorithm=algorithm, baseline=ALGORITHM if algorithm != ALGORITHM
                                      else "css-lucb")),
        "bai": ("bai_comparison", lambda: bai_comparison(args.runs, args.deltas or BAI_DELTAS, workers=args.workers,
                                                         algorithms=list(dict.fromkeys([ALGORITHM, algorithm])))),
    }
    for key in args.only or list(parts):
        name, compute = parts[key]
        tables = {name: compute()}
        if key == "bai":
            tables["bai_summary"] = bai_summary(tables[name])
        for title, table in tables.items():
            table.to_csv(args.out / f"{title}{args.suffix}.csv", index=False)
            print(f"\n## {title}\n\n{table.to_markdown(index=False, floatfmt=_formats(table))}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
