"""The command line: gbai hardness, gbai run, and one-line errors with exit status 2."""

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from gbai.paper.model import Instance, load_instance
from gbai.tools import cli
from gbai.tools.cli import main


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_hardness_json_for_table1(capsys):
    data = _json(capsys, ["hardness", "example", "--json"])
    assert data["answer"] == 0
    assert data["H_id"] == pytest.approx(900.0)
    assert data["feasible_set"] == [0, 2]
    assert data["arm_means"] == pytest.approx([0.5, 0.6, 0.4])


def test_hardness_lower_bound_keys(capsys):
    data = _json(capsys, ["hardness", "exp1", "--x", "0.31", "--json", "--delta", "0.01"])
    for key in ("T_star", "w_star", "lower_bound_theorem1", "lower_bound_tstar"):
        assert key in data
    assert data["delta"] == 0.01
    # kl(0.01, 0.99) = 0.98 ln 99 = 4.5032 to four digits.
    assert data["lower_bound_tstar"] == pytest.approx(data["T_star"] * 4.5032, rel=1e-4)
    assert sum(map(sum, data["w_star"])) == pytest.approx(1.0)
    assert 0 < data["lower_bound_theorem1"] < data["lower_bound_tstar"]


def test_hardness_paper_experiments(capsys):
    data = _json(capsys, ["hardness", "exp1", "--x", "0.31", "--json"])
    assert data["answer"] == 0 and data["feasible_set"] == [0, 3, 4]
    data = _json(capsys, ["hardness", "vary-n", "--x", "0.4", "--n", "4", "--json"])
    assert data["n_arms"] == 4
    data = _json(capsys, ["hardness", "vary-m", "--x", "0.4", "--m", "3", "--json"])
    assert data["n_attributes"] == 3


def test_hardness_text_output(capsys):
    assert main(["hardness", "exp3", "--x", "0.3"]) == 0
    out = capsys.readouterr().out
    assert "answer:       arm 0" in out and "H_id:" in out and "feasible set: [0, 1]" in out


def test_hardness_own_instance(tmp_path, capsys):
    path = tmp_path / "mine.csv"
    path.write_text("0.2,0.9\n0.1,0.8\n")
    data = _json(capsys, ["hardness", "--means", str(path), "--threshold", "0.3", "--json"])
    assert data["answer"] is None and data["feasible_set"] == []
    assert main(["hardness", "--means", str(path), "--threshold", "0.3"]) == 0
    assert "infeasible" in capsys.readouterr().out


def test_hardness_reports_infinite_index(tmp_path, capsys):
    path = tmp_path / "tie.csv"
    path.write_text("0.5,0.7\n0.7,0.5\n")
    data = _json(capsys, ["hardness", "--means", str(path), "--threshold", "0.3", "--json"])
    assert data["H_id"] is None and data["H_id_infinite"]
    assert main(["hardness", "--means", str(path), "--threshold", "0.3"]) == 0
    assert "infinite" in capsys.readouterr().out


def test_run_json(capsys):
    data = _json(
        capsys,
        ["run", "example", "--algorithm", "css-lucb", "--runs", "8", "--delta", "0.1", "--seed", "3",
         "--json", "--no-cache", "--no-progress"],
    )
    for key in ("mean_samples", "sem_samples", "error_rate", "unstopped", "runs", "median_samples"):
        assert key in data
    assert data["runs"] == 8 and data["error_rate"] == 0.0 and data["unstopped"] == 0.0
    assert data["unstopped_runs"] == 0


def test_run_defaults_to_the_papers_delta_and_seed_zero(capsys):
    explicit = _json(capsys, ["run", "example", "--algorithm", "ae", "--runs", "4", "--delta", "0.1", "--seed", "0",
                              "--json", "--no-cache", "--no-progress"])
    default = _json(capsys, ["run", "example", "--algorithm", "ae", "--runs", "4", "--json", "--no-cache",
                             "--no-progress"])
    assert default == explicit and default["delta"] == 0.1 and default["seed"] == 0
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default 0.1, the paper's value)" in text and "(default 0)" in text and "(default 100)" in text


def test_budget_hits_are_reported_beside_the_error_rate(tmp_path, capsys):
    # Arm 0's first attribute sits exactly on the threshold: no confidence interval ever
    # leaves it, so every run hits the budget and none gives an answer. The old summary
    # printed "error rate 0" here; now the error rate is undefined and all runs are unstopped.
    path = tmp_path / "tie.csv"
    path.write_text("0.3,0.8\n0.2,0.9\n")
    argv = ["run", "--means", str(path), "--threshold", "0.3", "--algorithm", "css-lucb", "--runs", "3",
            "--max-samples", "3000", "--no-cache", "--no-progress"]
    data = _json(capsys, argv + ["--json"])
    assert data["error_rate"] is None
    assert data["unstopped_runs"] == 3 and data["unstopped"] == 1.0 and data["max_samples"] == 3000
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "undefined (no run stopped)" in captured.out and "3 of 3 runs hit the budget" in captured.out
    # One line in the command's words, like every warning of gbai.
    assert captured.err == "gbai: warning: runs that hit the budget gave no answer; the error rate ignores them\n"


def test_run_text_and_bernoulli(capsys):
    argv = ["run", "exp3", "--x", "0.3", "--algorithm", "ae", "--runs", "3", "--delta", "0.1", "--seed", "0",
            "--reward", "bernoulli", "--no-cache", "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "mean samples:" in out and "error rate:" in out and "not stopped:" in out


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["hardness"],
        ["hardness", "exp1"],
        ["hardness", "exp9", "--x", "0.3"],
        ["hardness", "exp1", "--x", "abc"],
        ["hardness", "exp1", "--x", "1.5"],
        ["hardness", "exp1", "--x", "0.31", "--n", "4"],
        ["hardness", "vary-n", "--x", "0.4", "--n", "9"],
        ["hardness", "--means", "missing.csv", "--threshold", "0.3"],
        ["hardness", "--means", "x.csv"],
        ["hardness", "example", "--threshold", "0.3"],
        ["hardness", "example", "--delta", "0"],
        ["run", "example", "--algorithm", "nope", "--runs", "2", "--delta", "0.1", "--seed", "0"],
        ["run", "example", "--algorithm", "ae", "--runs", "0", "--delta", "0.1", "--seed", "0"],
        ["run", "example", "--algorithm", "ae", "--runs", "2", "--delta", "1.5", "--seed", "0"],
        ["run", "example", "--algorithm", "ae", "--runs", "2", "--delta", "0.1", "--seed", "-1"],
        ["run", "example", "--runs", "2"],
        ["run", "example", "--algorithm", "ae", "--runs", "2", "--delta", "0.1", "--seed", "0", "--reward", "x"],
        ["frobnicate"],
        ["benchmark", "--runs", "0"],
        ["benchmark", "--beyond", "betting", "no-such-algorithm"],
        ["benchmark", "--everything"],
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys, argv):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gbai: error:")


def test_benchmark_takes_every_option_its_pages_name():
    # The results page names `gbai benchmark --scaling` and `--beyond`; the command once
    # forwarded only --runs and --fast-repeat, so these failed as unknown arguments.
    parsed = cli._parser().parse_args(["benchmark", "--scaling", "--lower-bounds", "--beyond",
                                       "betting:sampling=level-free"])
    assert parsed.scaling and parsed.lower_bounds and parsed.beyond == ["betting:sampling=level-free"]
    assert cli._parser().parse_args(["benchmark", "--beyond"]).beyond == []  # the default algorithms
    assert cli._parser().parse_args(["benchmark"]).beyond is None


def test_benchmark_times_the_references_on_mu1_and_mu2_against_css_lucb(monkeypatch, capsys):
    from gbai.algorithms import ALGORITHMS, REFERENCES, resolve
    from gbai.tools import benchmark

    # By default every algorithm the notebooks run, the references included.
    assert {resolve(spec).algorithm.name for spec in benchmark.BEYOND_ALGORITHMS} == {*ALGORITHMS, *REFERENCES}
    per_run, sweeps = benchmark.benchmark_beyond(("track-and-stop:stopping=bets", "lma-glr"), runs=1, sweep_runs=2,
                                                 workers=1)
    where = {name: [row["workload"] for row in per_run if row["algorithm"] == name]
             for name in ("css-lucb", "lma-glr", "track-and-stop:stopping=bets")}
    assert where["css-lucb"] == where["lma-glr"] == ["exp1 x=0.35", "exp1 x=0.31", "exp2 x=0.6", "exp3 x=0.3",
                                                     "mu1", "mu2"]
    assert where["track-and-stop:stopping=bets"] == ["mu1", "mu2"], "a reference runs where M = 1 only"
    assert all(row["sample_over_css_lucb"] == row["run_over_css_lucb"] == 1.0 for row in per_run
               if row["algorithm"] == "css-lucb")
    assert all(row["sample_over_css_lucb"] > 0 for row in per_run)
    assert [row["algorithm"] for row in sweeps] == ["lma-glr"]
    monkeypatch.setattr(benchmark, "benchmark", lambda runs, repeat: [])
    monkeypatch.setattr(benchmark, "benchmark_beyond", lambda algorithms: (per_run, sweeps))
    assert main(["benchmark", "--beyond"]) == 0
    summary = capsys.readouterr().out.split("geometric mean over the workloads:\n")[1].splitlines()
    assert [line.split()[0] for line in summary[1:3]] == ["lma-glr", "track-and-stop:stopping=bets"]


def test_a_command_that_compiles_says_so_in_one_line(monkeypatch, capsys):
    from numba import njit

    fresh = [njit(lambda x: x + 1), njit(lambda x: x * 2)]  # not in numba's cache: the first call compiles
    monkeypatch.setattr(cli, "_hardness", lambda args: [kernel(1) for kernel in fresh])
    assert main(["hardness", "example"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "gbai: compiling the engines once, into numba's cache (a minute or two)..."]
    assert main(["hardness", "example"]) == 0
    assert capsys.readouterr().err == "", "compiled already: nothing to say"


def test_compile_leaves_no_kernel_of_the_package_uncompiled():
    # In a process of its own, so that only gbai compile loads kernels there. A kernel loaded from numba's
    # cache does not load the kernels it calls (they are inside it): those count through the names its code
    # reads, transitively.
    script = """if True:
        import importlib, pkgutil, types
        import gbai
        from numba.core.registry import CPUDispatcher
        from gbai.tools.cli import main
        assert main(["compile"]) == 0
        kernels = {}  # id -> (name, dispatcher)
        for info in pkgutil.walk_packages(gbai.__path__, "gbai."):
            if not info.name.endswith("__main__"):
                kernels.update({id(value): (f"{info.name}.{name}", value) for name, value in
                                vars(importlib.import_module(info.name)).items()
                                if isinstance(value, CPUDispatcher) and value.py_func.__module__ == info.name})
        todo = [key for key, (_, kernel) in kernels.items() if kernel.signatures]
        reached = set(todo)
        while todo:
            function = kernels[todo.pop()][1].py_func
            codes = [function.__code__]
            while codes:
                code = codes.pop()
                codes += [const for const in code.co_consts if isinstance(const, types.CodeType)]
                for name in code.co_names:
                    key = id(function.__globals__.get(name))
                    if key in kernels and key not in reached:
                        reached.add(key)
                        todo.append(key)
        print("uncompiled:", sorted(kernels[key][0] for key in set(kernels) - reached))
    """
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=900,
                               env={**os.environ, "TQDM_DISABLE": "1"})
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("gbai: every kernel is in numba's cache"), completed.stdout
    assert completed.stdout.splitlines()[-1] == "uncompiled: []"


def test_python_dash_m_entry_point():
    completed = subprocess.run(
        [sys.executable, "-m", "gbai", "hardness", "example", "--json"], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0
    assert json.loads(completed.stdout)["answer"] == 0
    completed = subprocess.run([sys.executable, "-m", "gbai", "hardness"], capture_output=True, text=True)
    assert completed.returncode == 2 and completed.stderr.count("\n") == 1


# ---------------------------------------------------------------- input we did not foresee (issue 31)
def _write(tmp_path, name, content):
    path = tmp_path / name
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    return str(path)


@pytest.mark.parametrize(
    "name, content, argv, expected",
    [
        # An attribute mean outside [0, 1] is named as the number, not as np.float64(1.5).
        ("wide.csv", "0.5,1.5\n0.6,0.7\n", ["hardness", "--threshold", "0.3"], "attribute 1 has 1.5"),
        # A binary file is named, not reported by a bare codec error.
        ("image.csv", b"\x89PNG\r\n\x1a\n\xff\xfe\x00", ["hardness", "--threshold", "0.3"],
         "image.csv is not a text file (expected a UTF-8 CSV"),
        ("nul.csv", b"0.5,0.6\n\x00\x00\n", ["hardness", "--threshold", "0.3"], "nul.csv is not a text file"),
        # More arms than T* is computed for: refused at once, naming the limit.
        ("big.csv", "0.9,0.8\n" + "0.7,0.6\n" * 2000, ["hardness", "--threshold", "0.3"],
         "T* is computed for at most 2000 arms with a feasible answer (about a minute at that size); "
         "this instance has 2001"),
        # A runs count whose results cannot fit in memory: refused before any run.
        ("small.csv", "0.9,0.8\n0.7,0.6\n",
         ["run", "--threshold", "0.3", "--algorithm", "ae", "--runs", str(10**12), "--no-cache", "--no-progress"],
         "the results would not fit in memory"),
    ],
)
def test_odd_input_exits_2_with_one_clean_line(tmp_path, capsys, name, content, argv, expected):
    path = _write(tmp_path, name, content)
    assert main([argv[0], "--means", path, *argv[1:]]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gbai: error:")
    assert expected in lines[0]
    assert "np." not in lines[0] and "Traceback" not in lines[0]


@pytest.mark.parametrize("command", [["hardness"], ["run", "--algorithm", "ae", "--no-cache", "--no-progress"]])
def test_means_naming_a_directory_says_so(tmp_path, capsys, command):
    assert main([command[0], "--means", str(tmp_path), "--threshold", "0.3", *command[1:]]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"gbai: error: {tmp_path} is a directory, not a CSV file of means\n"


def test_library_input_checks_show_numbers_not_numpy_reprs():
    with pytest.raises(ValueError, match=r"has 1\.5$") as error:
        Instance(np.array([[0.5, 1.5]]), 0.3)
    assert "np." not in str(error.value)
    with pytest.raises(ValueError, match=r"got 1\.5$"):
        Instance([[0.5, 0.6]], np.float64(1.5))


def test_runs_are_refused_above_the_largest_that_fits(tmp_path, capsys, monkeypatch):
    path = _write(tmp_path, "small.csv", "0.9,0.8\n0.7,0.6\n")
    argv = ["run", "--means", path, "--threshold", "0.3", "--algorithm", "ae", "--no-cache", "--no-progress",
            "--json", "--runs"]
    # With the memory the machine has: the count named in the refusal is the one largest_runs gives.
    start = time.perf_counter()
    assert main(argv + [str(10**12)]) == 2
    assert time.perf_counter() - start < 5.0
    largest = cli.largest_runs(load_instance(path, 0.3))
    assert f"the largest --runs that fits is {largest}" in capsys.readouterr().err
    assert 10**5 < largest < 10**12
    # With memory for exactly three runs (counts 2 x 2 int64 and the rest, over the fraction used).
    per_run = 8 * 4 + cli.RUN_OVERHEAD_BYTES
    monkeypatch.setattr(cli, "available_memory", lambda: int(3 * per_run / cli.MEMORY_FRACTION) + 1)
    assert main(argv + ["4"]) == 2
    assert "the largest --runs that fits is 3" in capsys.readouterr().err
    assert main(argv + ["3"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == 3


def test_means_with_zeros_give_tstar(tmp_path, capsys):
    # Two-decimal random means hold exact zeros; an arm with a mean of 0 used to end in a
    # ZeroDivisionError inside the solver (level_point's start on the point mass at 0).
    path = _write(tmp_path, "zero.csv", "0.99,0.96,0.99\n0.00,0.91,0.67\n0.5,0.0,0.0\n")
    data = _json(capsys, ["hardness", "--means", path, "--threshold", "0.5", "--json"])
    assert data["answer"] == 0 and data["T_star"] > 0 and data["T_star_gap"] <= 1e-5


def test_a_warning_is_one_line_in_the_commands_words(tmp_path):
    # The solver stops here with a certified gap of 3.5e-4 > 1e-5: said in one line, no source path.
    path = _write(tmp_path, "gap.csv", "0.99,0.96,0.99\n0.57,0.99,0.29\n")
    completed = subprocess.run([sys.executable, "-m", "gbai", "hardness", "--means", path, "--threshold", "0.5"],
                               capture_output=True, text=True, check=False)
    assert completed.returncode == 0 and "T*(mu):" in completed.stdout
    assert completed.stderr.startswith("gbai: warning: T* is certified only to a relative gap of 0.000352")
    assert completed.stderr.count("\n") == 1 and ".py" not in completed.stderr


def test_a_closed_pipe_ends_quietly(tmp_path):
    # gbai hardness | head -1 with an output larger than the pipe's buffer (65536 bytes): the
    # write after head has left fails. Infeasible, so T* has its closed form at any size.
    path = _write(tmp_path, "wide.csv", "0.1\n" * 20000)
    gbai = [sys.executable, "-m", "gbai"]
    writer = subprocess.Popen(gbai + ["hardness", "--means", path, "--threshold", "0.5"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    head = subprocess.run(["head", "-1"], stdin=writer.stdout, capture_output=True, check=True)
    writer.stdout.close()
    assert head.stdout.startswith(b"instance:")
    assert writer.wait(timeout=120) == 141
    assert writer.stderr.read() == b""
    writer.stderr.close()
    # gbai run writes its few lines at once; a pipe whose reader has already gone makes it fail surely.
    read_end, write_end = os.pipe()
    os.close(read_end)
    completed = subprocess.run(gbai + ["run", "example", "--algorithm", "ae", "--runs", "2", "--no-cache",
                                       "--no-progress"], stdout=write_end, stderr=subprocess.PIPE, check=False)
    os.close(write_end)
    assert completed.returncode == 141 and completed.stderr == b""


def test_a_byte_order_mark_keeps_the_first_row(tmp_path, capsys):
    # A spreadsheet's UTF-8 export may start with a byte-order mark; read as part of the first
    # cell it made the first row look like a header, silently dropped (N = 1 here).
    path = _write(tmp_path, "excel.csv", "\ufeff0.2,0.9\n0.1,0.8\n".encode("utf-8"))
    data = _json(capsys, ["hardness", "--means", path, "--threshold", "0.3", "--json"])
    assert data["n_arms"] == 2 and data["arm_means"] == pytest.approx([0.55, 0.45])
