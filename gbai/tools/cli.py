"""Command line interface: ``gbai hardness``, ``gbai run``, ``gbai benchmark`` and ``gbai compile``.

Examples::

    gbai hardness exp1 --x 0.31
    gbai hardness --means my_instance.csv --threshold 0.4 --json
    gbai run exp3 --x 0.3 --algorithm css-lucb --runs 200 --delta 0.1 --seed 1
    gbai run exp1 --x 0.31 --algorithm css-lucb-plus   # delta 0.1, seed 0, 100 runs
    gbai run --means one_column.csv --threshold 0.05 --algorithm top-two:stopping=gk

Bad arguments print one line on stderr and exit with status 2; a warning is one line
``gbai: warning: ...`` on stderr, and so is the notice of a command that has to compile
numba's kernels first (``make install`` compiles them all ahead, by ``gbai compile``).
When the reader of the output goes away (``gbai run ... | head -1``) the command stops
quietly with status 141, as a Unix tool killed by SIGPIPE does.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings

from numba.core import event

from ..algorithms import ALGORITHMS, REFERENCES, resolve
from ..asrun.instances import PUBLISHED_EXPERIMENTS
from ..experiments import get_experiment, paper_instance
from ..limits.characteristic_time import characteristic_time
from ..limits.divergences import kl_bernoulli_scalar
from ..paper.engine import DEFAULT_MAX_SAMPLES
from ..paper.instances import EXPERIMENTS, PAPER_DELTA
from ..paper.model import Instance, check_delta, load_instance
from ..paper.rewards import REWARD_MODELS
from ..paper.theorem1 import theorem1_bound, theorem1_constants

__all__ = ["main"]


#: The certified relative gap asked of T* (characteristic_time's default).
_TSTAR_TOL = 1e-5
#: The most arms for which ``gbai hardness`` computes T* by the structured solver: its time
#: grows with N (about a minute at 2000 arms, whatever M; the runtimes table of the results page).
MAX_TSTAR_ARMS = 2000
#: The share of the available memory that the result table of ``gbai run`` may take.
MEMORY_FRACTION = 0.5
#: Bytes a run takes in the result table besides its N x M counts: the scalar columns
#: in the chunk arrays, the per-chunk frames and the joined table, and one array object
#: per run in the counts column (measured with tracemalloc, rounded up).
RUN_OVERHEAD_BYTES = 1024


class _UsageError(Exception):
    """A command line mistake: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line instead of usage + message
        raise _UsageError(message)


def _integer(minimum: int, description: str):
    """An argparse type for integers of at least ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {description}, got {text!r}")
        return value

    return parse


_positive_int = _integer(1, "a positive integer")
_nonnegative_int = _integer(0, "a non-negative integer")


def _algorithm(text: str) -> str:
    try:
        return resolve(text).spec
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _add_instance_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "experiment",
        nargs="?",
        choices=sorted(EXPERIMENTS) + sorted(PUBLISHED_EXPERIMENTS),
        metavar="EXP",
        help=f"a paper instance: {', '.join(EXPERIMENTS)}; or one of the published figures as the "
             f"authors ran them: {', '.join(PUBLISHED_EXPERIMENTS)}",
    )
    parser.add_argument("--x", type=_number, help="the experiment's free attribute mean")
    parser.add_argument("--n", type=int, help="number of arms for vary-n and fig2a (4, 5 or 6)")
    parser.add_argument("--m", type=int, help="number of attributes for vary-m and fig2b (2, 3 or 4)")
    parser.add_argument("--means", metavar="FILE.csv", help="your own instance: N rows, M columns")
    parser.add_argument("--threshold", type=_number, help="threshold for --means")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _instance_from(args: argparse.Namespace) -> Instance:
    if args.means is not None:
        if args.experiment is not None:
            raise _UsageError("give either EXP or --means FILE, not both")
        if args.threshold is None:
            raise _UsageError("--means needs --threshold")
        for flag in ("x", "n", "m"):
            if getattr(args, flag) is not None:
                raise _UsageError(f"--{flag} applies to paper experiments, not to --means")
        return load_instance(args.means, args.threshold)
    if args.experiment is None:
        raise _UsageError("give an experiment (EXP) or --means FILE --threshold TH")
    if args.threshold is not None:
        raise _UsageError("--threshold applies only to --means; paper experiments fix their own")
    experiment = get_experiment(args.experiment)
    size = None
    for flag, parameter in (("n", "N"), ("m", "M")):
        value = getattr(args, flag)
        if value is None:
            continue
        if experiment.size_parameter != parameter:
            raise _UsageError(f"--{flag} applies only to vary-{flag} and fig2{'a' if flag == 'n' else 'b'}")
        size = value
    if experiment.x_grid and args.x is None:
        grid = ", ".join(f"{x:g}" for x in experiment.x_grid)
        raise _UsageError(f"{args.experiment} needs --x (the paper's grid: {grid})")
    return paper_instance(args.experiment, args.x, size)


def hardness_report(instance: Instance, delta: float) -> dict:
    """The lower-bound quantities of an instance, JSON-ready (used by ``gbai hardness``).

    Keys: ``T_star`` and ``w_star`` (Bernoulli divergence), ``T_star_gap`` (the
    certified relative gap), ``lower_bound_tstar`` (``T* kl(delta, 1 - delta)``),
    ``lower_bound_theorem1`` (Theorem 1 as stated), ``theorem1_C`` and
    ``theorem1_case``. Infinite or undefined numbers are reported as None.
    """
    delta = check_delta(delta)
    with warnings.catch_warnings():
        # Said below in the command's own words, with the bounds the gap gives.
        warnings.filterwarnings("ignore", message=".*certified relative gap", category=RuntimeWarning)
        result = characteristic_time(instance, tol=_TSTAR_TOL)
    if result.gap > _TSTAR_TOL:
        warnings.warn(f"T* is certified only to a relative gap of {result.gap:.3g} (the target is {_TSTAR_TOL:g}): "
                      f"the true T* lies between {result.T_star / (1.0 + result.gap):.6g} and {result.T_star:.6g}",
                      RuntimeWarning, stacklevel=2)
    constants = theorem1_constants(instance)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theorem1 = theorem1_bound(instance, delta)

    def number(value):
        return float(value) if value is not None and math.isfinite(value) else None

    return {
        "T_star": number(result.T_star),
        "w_star": result.w_star.tolist(),
        "T_star_gap": number(result.gap),
        "lower_bound_tstar": number(result.T_star * kl_bernoulli_scalar(delta, 1.0 - delta)),
        "lower_bound_theorem1": number(theorem1),
        "theorem1_C": number(constants["C"]),
        "theorem1_case": constants["case"],
    }


def _hardness(args: argparse.Namespace) -> dict:
    instance = _instance_from(args)
    # Infeasible and tied instances have T* in closed form, at any size.
    if instance.n_arms > MAX_TSTAR_ARMS and instance.is_feasible and instance.has_unique_answer:
        raise _UsageError(f"T* is computed for at most {MAX_TSTAR_ARMS} arms with a feasible answer (about a minute "
                          f"at that size); this instance has {instance.n_arms}")
    summary = instance.describe()
    summary["delta"] = args.delta
    summary.update(hardness_report(instance, check_delta(args.delta)))
    if args.json:
        print(json.dumps(summary, indent=2))
        return summary
    answer = "infeasible (no feasible arm)" if summary["answer"] is None else f"arm {summary['answer']}"
    print(f"instance:     {instance.label or 'custom'} (N={instance.n_arms}, M={instance.n_attributes}, "
          f"threshold {instance.threshold:g})")
    print(f"answer:       {answer}")
    print("arm means:    " + "  ".join(f"{v:.4f}" for v in summary["arm_means"]))
    print(f"feasible set: {summary['feasible_set']}")
    if summary["H_id"] is None:
        print("H_id:         infinite (" + instance.infinite_reason().split(": ", 1)[1] + ")")
    else:
        print(f"H_id:         {summary['H_id']:.6g}")
    def show(value):
        return "infinite" if value is None else f"{value:.6g}"

    print(f"T*(mu):       {show(summary['T_star'])} (Bernoulli divergence)")
    print(f"T*·kl(δ,1-δ): {show(summary['lower_bound_tstar'])} at δ = {args.delta:g}")
    print(f"Theorem 1:    {show(summary['lower_bound_theorem1'])} at δ = {args.delta:g} "
          f"(C = {show(summary['theorem1_C'])}, {summary['theorem1_case']})")
    print("w* (arms x attributes):")
    for row in summary["w_star"]:
        print("    " + "  ".join(f"{value:.4f}" for value in row))
    return summary


def available_memory() -> int:
    """Bytes of memory available to new allocations: MemAvailable of /proc/meminfo, else free pages."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _bytes_per_run(instance: Instance) -> int:
    return 8 * instance.means.size + RUN_OVERHEAD_BYTES  # the int64 counts, N x M, and the rest


def largest_runs(instance: Instance) -> int:
    """The most runs of ``instance`` whose result table fits in :data:`MEMORY_FRACTION` of the available memory."""
    return int(MEMORY_FRACTION * available_memory()) // _bytes_per_run(instance)


def _run(args: argparse.Namespace) -> dict:
    from ..experiments import summarize
    from ..simulation import sweep

    instance = _instance_from(args)
    # Refused before the sweep: even its list of chunks would not fit for a huge count.
    largest = largest_runs(instance)
    if args.runs > largest:
        raise _UsageError(f"--runs {args.runs}: the results would not fit in memory (about "
                          f"{_bytes_per_run(instance)} bytes a run, "
                          f"{MEMORY_FRACTION:.0%} of {available_memory() / 2**30:.1f} GiB available); "
                          f"the largest --runs that fits is {largest}")
    table = sweep(
        {instance.label or "custom": instance},
        [args.algorithm],
        n_runs=args.runs,
        delta=args.delta,
        seed=args.seed,
        reward=args.reward,
        max_samples=args.max_samples,
        workers=args.workers,
        cache_dir=None if args.no_cache else "default",
        progress=not args.no_progress,
    )
    row = summarize(table).iloc[0]
    error_rate = float(row["error_rate"])
    result = {
        "instance": instance.label or "custom",
        "algorithm": args.algorithm,
        "delta": args.delta,
        "reward": args.reward,
        "seed": args.seed,
        "max_samples": args.max_samples,
        "runs": int(row["runs"]),
        "mean_samples": float(row["mean_samples"]),
        "median_samples": float(row["median_samples"]),
        "sem_samples": float(row["sem_samples"]),
        # Among the runs that stopped; None (JSON null) when no run stopped.
        "error_rate": None if math.isnan(error_rate) else error_rate,
        "unstopped_runs": int(row["unstopped_runs"]),
        "unstopped": float(row["unstopped"]),
        "crashed": float(row["crashed"]),
        "true_answer": instance.best_arm,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return result
    print(f"{args.algorithm} on {result['instance']}: delta={args.delta:g}, reward={args.reward}, "
          f"{result['runs']} runs, seed {args.seed}")
    print(f"mean samples:   {result['mean_samples']:.6g} (standard error {result['sem_samples']:.3g})")
    print(f"median samples: {result['median_samples']:.6g}")
    stopped = result["runs"] - result["unstopped_runs"]
    if result["error_rate"] is None:
        print("error rate:     undefined (no run stopped)")
    else:
        print(f"error rate:     {result['error_rate']:.4f} among the {stopped} stopped runs")
    print(f"not stopped:    {result['unstopped_runs']} of {result['runs']} runs hit the budget of "
          f"{args.max_samples:.3g} samples ({result['unstopped']:.4f})")
    if result["unstopped_runs"]:
        warnings.warn("runs that hit the budget gave no answer; the error rate ignores them", RuntimeWarning,
                      stacklevel=2)
    if result["crashed"]:
        print(f"crashed:        {result['crashed']:.4f} (where the authors' code raises an error)")
    return result


def _benchmark(args: argparse.Namespace) -> None:
    import pandas as pd

    from . import benchmark

    if args.scaling:
        benchmark.benchmark_scaling()
        return
    print(f"{'workload':<32} {'mean samples':>13} {'fast [samples/s]':>17} {'step [samples/s]':>17} "
          f"{'ratio':>7}  agree")
    for row in benchmark.benchmark(args.runs, args.fast_repeat):
        print(f"{row['workload']:<32} {row['mean_samples']:>13,.0f} {row['fast_samples_per_s']:>17.3e} "
              f"{row['step_samples_per_s']:>17.3e} {row['ratio']:>7.0f}  {row['engines_agree']}")
    if args.beyond is not None:
        per_run, sweeps = benchmark.benchmark_beyond(tuple(args.beyond) or benchmark.BEYOND_ALGORITHMS)
        print()
        table = pd.DataFrame(per_run)
        print(table.to_string(index=False, float_format=lambda value: f"{value:.4g}"))
        # One number per algorithm: a sample's cost relative to CSS-LUCB's, over the workloads it ran.
        ratios = table[table["algorithm"] != "css-lucb"].groupby("algorithm", sort=False)["sample_over_css_lucb"]
        print("\ncost of a sample over CSS-LUCB's, geometric mean over the workloads:")
        print(ratios.apply(lambda values: math.exp(values.apply(math.log).mean())).to_string(
            float_format=lambda value: f"{value:.3g}"))
        for row in sweeps:
            print(f"{row['runs']}-run sweep of exp1 x=0.35, {row['algorithm']}, {row['workers']} workers: "
                  f"{row['seconds']:.1f} s")
    if args.lower_bounds:
        print()
        benchmark.benchmark_lower_bounds()


def _compile(args: argparse.Namespace) -> None:
    from .precompile import precompile

    specs, seconds = precompile()
    print(f"gbai: every kernel is in numba's cache ({specs} algorithm specs run, {seconds:.0f} s)")


class _CompileNotice(event.Listener):
    """Says once, on stderr, that numba compiles: the kernels of an edited or freshly cloned package are not cached."""

    def __init__(self) -> None:
        self.said = False

    def on_start(self, event) -> None:
        if not self.said:
            self.said = True
            print("gbai: compiling the engines once, into numba's cache (a minute or two)...", file=sys.stderr,
                  flush=True)

    def on_end(self, event) -> None:
        pass


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gbai", description="Constrained best arm identification in grouped bandits.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    hardness = commands.add_parser("hardness", help="answer, feasible set, H_id and lower bounds of an instance")
    _add_instance_arguments(hardness)
    hardness.add_argument("--delta", type=_number, default=PAPER_DELTA,
                          help=f"confidence for the lower bounds (default {PAPER_DELTA:g}, the paper's value)")
    hardness.set_defaults(handler=_hardness)

    run = commands.add_parser("run", help="simulate an algorithm many times and summarise")
    _add_instance_arguments(run)
    run.add_argument("--algorithm", required=True, type=_algorithm, metavar="ALGORITHM",
                     help=f"one of {', '.join(ALGORITHMS)}, optionally with options, e.g. "
                          "css-lucb-plus:sampling=all; or, for an instance with one attribute, a plain "
                          f"best-arm reference: {' or '.join(REFERENCES)}, e.g. track-and-stop:stopping=bets")
    run.add_argument("--runs", type=_positive_int, default=100, help="number of runs (default 100)")
    run.add_argument("--delta", type=_number, default=PAPER_DELTA,
                     help=f"confidence parameter in (0, 1) (default {PAPER_DELTA:g}, the paper's value)")
    run.add_argument("--seed", type=_nonnegative_int, default=0, help="non-negative integer seed (default 0)")
    run.add_argument("--workers", type=_positive_int, default=1, help="processes (default 1)")
    run.add_argument("--reward", choices=sorted(REWARD_MODELS), default="beta", help="reward model (default beta)")
    run.add_argument("--max-samples", type=_positive_int, default=DEFAULT_MAX_SAMPLES,
                     help=f"sample budget per run (default {DEFAULT_MAX_SAMPLES:.0e})")
    run.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    run.set_defaults(handler=_run)

    bench = commands.add_parser("benchmark", help="samples per second of the fast and the step engine, and more")
    bench.add_argument("--runs", type=_positive_int, default=2, help="seeds per workload (default 2)")
    bench.add_argument("--fast-repeat", type=_positive_int, default=20,
                       help="repetitions of the fast engine's runs (default 20)")
    bench.add_argument("--beyond", nargs="*", type=_algorithm, metavar="ALGORITHM",
                       help="also time these algorithms against CSS-LUCB, per run and per sample (default: "
                            "every algorithm the notebooks run, the best-arm references on notebook 13's mu1 "
                            "and mu2)")
    bench.add_argument("--lower-bounds", action="store_true",
                       help="also time the best response and the characteristic time")
    bench.add_argument("--scaling", action="store_true",
                       help="only time the certified T* on random instances from 5 x 5 to 500 x 20")
    bench.set_defaults(handler=_benchmark)

    compiled = commands.add_parser("compile", help="compile every kernel into numba's cache, so that no command "
                                                   "compiles on first use (make install runs it)")
    compiled.set_defaults(handler=_compile)
    return parser


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Show a warning as ``gbai: warning: ...``, without the source path and code line."""
    text = str(message).splitlines()[0] if str(message) else category.__name__
    print(f"gbai: warning: {text}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gbai`` command; returns the exit status."""
    parser = _parser()
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        try:
            args = parser.parse_args(argv)
            if args.command is None:
                raise _UsageError("choose a command: hardness, run, benchmark or compile (see gbai --help)")
            with event.install_listener("numba:compile", _CompileNotice()):
                args.handler(args)
            sys.stdout.flush()  # a closed pipe shows up here, not at exit
        except BrokenPipeError:
            # The reader left (| head -1). Point stdout at /dev/null so the flush at exit
            # cannot fail again, and end with 141 = 128 + SIGPIPE, the status the shell
            # gives any tool stopped this way (yes | head -1), which set -o pipefail sees.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141
        except (_UsageError, ValueError) as error:
            message = str(error).splitlines()[0] if str(error) else type(error).__name__
            print(f"gbai: error: {message}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
