"""The notebook runner (``notebooks/_tools/run/runner.py``) when it runs notebooks side by side, each kernel on its own
sockets."""

import os
import threading
import time
from pathlib import Path

from notebooks._tools import __main__ as tools
from notebooks._tools import common
from notebooks._tools.run import runner

ROOT = Path(__file__).resolve().parents[1]

# A notebook that reports the folder its kernel runs in, then holds the kernel for a while,
# long enough for the test to look at the runner's own working directory meanwhile.
SCRIPT = """# %%
import os, pathlib, time
print(os.getcwd())
pathlib.Path("started").touch()
time.sleep({hold})
"""


def _write(folder: Path, hold: float) -> Path:
    folder.mkdir()
    script = folder / "01_where.py"
    script.write_text(SCRIPT.format(hold=hold))
    return script


def _printed(notebook: Path) -> str:
    import nbformat

    cell = nbformat.read(notebook, as_version=4).cells[0]
    return "".join(output.text for output in cell.outputs if output.output_type == "stream").strip()


def test_notebooks_run_side_by_side_leave_the_runner_where_it_was(tmp_path, monkeypatch):
    # `--jobs 2` runs two notebooks in threads of one process, with relative paths (as
    # `make test` gives them). The kernel must start in the notebook's folder without
    # moving the process: a process-wide chdir made every notebook started meanwhile
    # fail with "No such file or directory".
    monkeypatch.chdir(tmp_path)
    first, second = _write(tmp_path / "first", hold=4.0), _write(tmp_path / "second", hold=0.0)
    errors = []

    def run_first():
        try:
            runner.execute_notebook(Path("first/01_where.py"), Path("out/first.ipynb"), paired=False)
        except Exception as error:  # reported by the assertion below
            errors.append(error)

    thread = threading.Thread(target=run_first)
    thread.start()
    deadline = time.monotonic() + 120  # kernel start-up on a loaded 2-core machine; never hang
    while not (first.parent / "started").exists() and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (first.parent / "started").exists(), f"the first notebook never started: {errors}"
    assert os.getcwd() == str(tmp_path), "running a notebook moved the whole process"
    runner.execute_notebook(Path("second/01_where.py"), Path("out/second.ipynb"), paired=False)
    thread.join(timeout=120)
    assert not thread.is_alive() and not errors, errors
    assert _printed(tmp_path / "out" / "first.ipynb") == str(first.parent.resolve())
    assert _printed(tmp_path / "out" / "second.ipynb") == str(second.parent.resolve())


def test_every_kernel_gets_its_own_socket_folder():
    # jupyter_client names IPC sockets after the first free file names of the prefix:
    # two kernels started together under one prefix would bind the same sockets.
    first, second = common.ipc_prefix(), common.ipc_prefix()
    assert first != second
    assert os.path.isdir(os.path.dirname(first)) and os.path.isdir(os.path.dirname(second))
    assert len(first) < 90  # Unix socket paths are limited to about 100 bytes; "-N" is appended


def test_a_kernel_being_shut_down_is_not_interrupted(monkeypatch):
    # jupyter_client sends SIGINT before its shutdown request; an idle kernel then logs
    # "KeyboardInterrupt caught in kernel" on the console of make test and make figures.
    import asyncio

    from jupyter_client import AsyncKernelManager

    interrupts = []

    async def interrupt(self):
        interrupts.append(self.shutting_down)

    def interrupt_in_a_thread_of_its_own(manager):
        # Another test of the session (the browser's) may leave an event loop running here.
        thread = threading.Thread(target=asyncio.run, args=(manager._async_interrupt_kernel(),))
        thread.start()
        thread.join(timeout=60)

    monkeypatch.setattr(AsyncKernelManager, "_async_interrupt_kernel", interrupt)
    manager = runner.quiet_kernel_manager()()
    manager.shutting_down = True
    interrupt_in_a_thread_of_its_own(manager)
    assert interrupts == [], "the kernel was interrupted while it was being shut down"
    manager.shutting_down = False
    interrupt_in_a_thread_of_its_own(manager)
    assert interrupts == [False], "an interrupt asked for outside a shutdown must still reach the kernel"


def _scheduled(tmp_path, monkeypatch, took: dict[str, float]):
    """Notebooks named as ``took``'s keys, run by ``tools.main`` with a fake runner that records the order."""
    folder = tmp_path / "notebooks"
    folder.mkdir(exist_ok=True)
    for stem in took:
        (folder / f"{stem}.py").write_text("# %%\n")
    monkeypatch.setenv("GBAI_FIGURES_DIR", str(tmp_path / "elsewhere"))  # figures mode sets it: undone after the test
    started = []

    def run(script, target, parameters=None, paired=True, profile=None):
        started.append(script.stem)
        return took[script.stem]

    monkeypatch.setattr(runner, "execute_notebook", run)
    monkeypatch.setattr(runner, "write_results", lambda notebooks, root: {"results": 0, "table": root, "quotes": 0,
                                                                           "pages": 0})
    return folder, started


def test_figures_and_quick_runs_start_the_notebooks_in_their_numbered_order(tmp_path, monkeypatch):
    # A notebook reads the runs of those before it from the cache (notebook 11 CSS-LUCB's of 5-8),
    # so they start first, whatever their length.
    took = {"04_d": 400.0, "01_a": 6.0, "03_c": 250.0, "02_b": 50.0}
    folder, started = _scheduled(tmp_path, monkeypatch, took)
    # One at a time, so the order they start in is the order they were submitted in.
    assert tools.main(["figures", "--notebooks", str(folder), "--jobs", "1"]) == 0
    assert started == ["01_a", "02_b", "03_c", "04_d"]
    assert os.environ["GBAI_FIGURES_DIR"] == str(tmp_path / "figures"), "make figures writes the committed figures"
    started.clear()
    assert tools.main(["quick", "--notebooks", str(folder), "--output", str(tmp_path / "quick"), "--jobs", "1"]) == 0
    assert started == ["01_a", "02_b", "03_c", "04_d"]


def test_as_many_notebooks_run_at_once_as_this_process_has_cores(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 5}, raising=False)
    for mode in ("figures", "quick"):
        assert tools.parser().parse_args([mode]).jobs == 4, "the cores it may run on, not the machine's"
        assert tools.parser().parse_args([mode, "--jobs", "3"]).jobs == 3
    monkeypatch.delattr(os, "sched_getaffinity")  # macOS
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert tools.parser().parse_args(["figures"]).jobs == 6


def test_a_run_times_each_code_cell_and_names_the_slowest(tmp_path, monkeypatch):
    # The profile of the results page comes from these timings: each code cell of the
    # script, numbered as in the script (the injected parameters cell left out).
    script = tmp_path / "01_slow.py"
    script.write_text('# %% tags=["parameters"]\nhold = 0.0\n\n# %%\nimport time\ntime.sleep(hold)\n\n'
                      '# %% [markdown]\n# words\n\n# %%\nx = 1\n')
    cells: list = []
    seconds = runner.execute_notebook(script, tmp_path / "out.ipynb", {"hold": 1.5}, paired=False, profile=cells)
    assert [(number, first) for number, _, first in cells] == [(1, "hold = 0.0"), (2, "import time"), (3, "x = 1")]
    took = {number: value for number, value, _ in cells}
    assert 1.5 <= took[2] < seconds, "the sleeping cell holds the 1.5 s it slept, within the notebook's time"
    assert took[1] < 1.0 and took[3] < 1.0
    assert runner.slowest_cells("01_slow", runner.PROFILED - 1, cells) == "", "a short notebook is not profiled"
    shown = runner.slowest_cells("01_slow", runner.PROFILED, cells, share=0.02)
    assert shown.splitlines()[0].split() == [f"{took[2]:.1f}", "s", "01_slow", "cell", "2:", "import", "time"]
    assert len(shown.splitlines()) == 1, "cells under 2 % of the notebook are left out"
