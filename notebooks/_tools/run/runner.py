"""Run the notebooks headless: ``figures`` into ``notebooks/``, ``quick`` for ``make test``'s nbval check.

The Jupytext percent scripts ``notebooks/NN_name.py`` are the source of truth.
``figures`` runs each with its default parameters and stores the executed notebook
as ``notebooks/NN_name.ipynb`` (Jupytext's rendering of the script with the outputs
filled in, in the form JupyterLab saves it, so the pair converts back to the same
script and opening and saving it in Lab changes neither file), then publishes the
results they record (:mod:`.publish`); ``quick`` runs each with ``quick=True`` into
an output folder. A notebook is replaced only when every cell succeeded. Both start
the notebooks in their numbered order, as many at once as ``jobs``: a notebook reads
the runs of the notebooks before it from the result cache (notebooks 10 to 12 use
CSS-LUCB's runs of notebooks 5 to 8, and 11 and 12 CSS-LUCB+'s of notebook 10), so
each run is computed by the first notebook that needs it, while the others are still
to start.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
import time
from pathlib import Path

from ..common import ipc_prefix, notebook_scripts, replace_atomically
from .publish import write_results

__all__ = ["cell_seconds", "execute_notebook", "merge_streams", "run_notebooks", "slowest_cells", "store_pair"]

KERNEL = "python3"
#: A notebook that takes longer is shown with its slowest cells (the profile of the results page).
PROFILED = 60.0


def merge_streams(notebook) -> None:
    """Join consecutive stream outputs of the same name (stdout, stderr) in every code cell.

    A kernel flushes ``print`` output whenever its buffer fills or a timer fires, so
    one print can arrive as one or as two stream messages depending on timing; joined,
    the stored notebook no longer depends on it (reruns stay byte-identical).
    """
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        merged = []
        for output in cell.outputs:
            previous = merged[-1] if merged else None
            if (output.output_type == "stream" and previous is not None and previous.output_type == "stream"
                    and previous.name == output.name):
                previous.text = "".join(previous.text) + "".join(output.text)
            else:
                merged.append(output)
        cell.outputs = merged


@functools.cache
def quiet_kernel_manager() -> type:
    """Papermill's kernel manager, without the interrupt it sends a kernel it shuts down.

    jupyter_client interrupts every kernel before asking it to stop, in case a cell is
    still running. An idle kernel that receives that SIGINT while it handles a message
    logs "KeyboardInterrupt caught in kernel" (now and then, depending on timing), a
    spurious error on the console of every run. A notebook run here has finished its
    cells when its kernel stops, and a kernel that does not stop when asked is still
    killed once the manager's shutdown wait has passed.
    """
    from jupyter_client import AsyncKernelManager

    class QuietShutdownKernelManager(AsyncKernelManager):
        async def _async_interrupt_kernel(self) -> None:
            if not self.shutting_down:
                await super()._async_interrupt_kernel()

    return QuietShutdownKernelManager


def execute_notebook(script: Path, target: Path, parameters: dict | None = None, paired: bool = True,
                     profile: list | None = None) -> float:
    """Run ``script`` and write the executed notebook to ``target``; returns the seconds taken.

    With ``paired=True`` the stored notebook is Jupytext's rendering of ``script`` with
    the executed outputs copied in (no Papermill metadata, no injected cell), so it
    stays the exact pair of the script. ``target`` is only replaced on success. A list
    passed as ``profile`` receives the :func:`cell_seconds` of the run.
    """
    import jupytext
    import nbformat
    import papermill
    from traitlets.config import Config

    os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")  # the venv's kernel first
    os.environ.setdefault("TQDM_DISABLE", "1")  # no progress bars (and their timings) in stored outputs
    source = jupytext.read(script)
    for index, cell in enumerate(source.cells):
        cell.id = f"cell-{index}"  # nbformat would draw random ids: keep reruns byte-identical
    # Sockets instead of TCP ports: nothing to encrypt, so the kernel prints no warning.
    kernel_config = Config()
    kernel_config.KernelManager.transport = "ipc"
    kernel_config.KernelManager.ip = ipc_prefix()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gbai-notebook-") as scratch:
        unexecuted = Path(scratch) / f"{script.stem}.ipynb"
        executed = Path(scratch) / f"{script.stem}.out.ipynb"
        nbformat.write(source, unexecuted)
        papermill.execute_notebook(
            str(unexecuted),
            str(executed),
            parameters=parameters or {},
            kernel_name=KERNEL,
            language="python",
            progress_bar=False,
            start_timeout=300,  # two kernels importing numba on a loaded 2-core machine; still bounded
            # The kernel starts in the notebook's folder. Papermill's own ``cwd=`` would
            # chdir the whole process for the run, which breaks every other notebook
            # running at once in this process (``--jobs``) that resolves a relative path;
            # nbclient gives this folder to the kernel alone.
            resources={"metadata": {"path": str(script.resolve().parent)}},
            config=kernel_config,
            kernel_manager_class=quiet_kernel_manager(),
        )
        result = nbformat.read(executed, as_version=4)
    if profile is not None:
        profile.extend(cell_seconds(result))
    merge_streams(result)
    elapsed = time.perf_counter() - start
    if paired:
        code_cells = [cell for cell in source.cells if cell.cell_type == "code"]
        ran = [cell for cell in result.cells if cell.cell_type == "code"]
        if len(code_cells) != len(ran):
            raise RuntimeError(f"{script.name}: executed notebook has {len(ran)} code cells, "
                               f"expected {len(code_cells)}")
        for original, done in zip(code_cells, ran):
            original.outputs = done.outputs
            original.execution_count = done.execution_count
        # As JupyterLab's Jupytext writes the .ipynb of a pair: without ``text_representation``, a block
        # describing the text file that Jupytext keeps in the .py header only (a stored notebook that has
        # it would be rewritten by the first save in Lab).
        source.metadata.get("jupytext", {}).pop("text_representation", None)
        store_pair(nbformat.writes(source) + "\n", target, script)
    else:
        result.metadata.pop("papermill", None)
        for cell in result.cells:
            cell.metadata.pop("papermill", None)
            cell.metadata.pop("execution", None)
        replace_atomically(nbformat.writes(result) + "\n", target)
    return elapsed


def cell_seconds(executed) -> list[tuple[int, float, str]]:
    """(number, seconds, first line) of each code cell of a notebook Papermill ran, by its timings.

    Code cells are numbered from 1 in the script's order, Papermill's injected
    parameters cell left out, so a number names the same cell in ``NN_name.py``.
    """
    cells = [cell for cell in executed.cells
             if cell.cell_type == "code" and "injected-parameters" not in cell.metadata.get("tags", [])]
    return [(number, float(cell.metadata.get("papermill", {}).get("duration") or 0.0),
             next((line for line in cell.source.splitlines() if line.strip()), ""))
            for number, cell in enumerate(cells, start=1)]


def slowest_cells(name: str, seconds: float, cells: list[tuple[int, float, str]], share: float = 0.05) -> str:
    """The lines ``figures`` prints under a notebook over :data:`PROFILED` seconds: its cells of at least ``share``."""
    if seconds < PROFILED:
        return ""
    lines = [f"    {took:7.1f} s  {name} cell {number:>2}: {first[:70]}"
             for number, took, first in sorted(cells, key=lambda cell: -cell[1]) if took >= share * seconds]
    return "".join(line + "\n" for line in lines)


def store_pair(text: str, target: Path, script: Path) -> None:
    """Write the executed notebook ``text`` of ``script`` to ``target``, the script staying the newer file.

    Jupytext's contents manager (``make lab``) warns about, and may refuse to pair, a
    notebook that is more recent than its script by over a second: it takes the script
    for an outdated copy. A notebook run from the script is its output, so the script's
    time is moved up to the notebook's (content untouched), as ``jupytext --sync`` does.
    """
    replace_atomically(text, target)
    written = target.stat().st_mtime_ns
    status = script.stat()
    if status.st_mtime_ns < written:
        os.utime(script, ns=(status.st_atime_ns, written))


def run_notebooks(mode: str, notebooks: Path, names: list[str], jobs: int, output: Path) -> int:
    """``figures`` or ``quick`` (into ``output``) for the notebooks chosen by ``names``; returns the exit status."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    folder = Path(notebooks).resolve()
    scripts = notebook_scripts(folder, names)
    if not scripts:
        raise ValueError(f"no notebooks in {folder}")
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {jobs}")

    def run(script: Path) -> tuple[float, Path, list]:
        if mode == "figures":
            os.environ["GBAI_FIGURES_DIR"] = str(folder.parent / "figures")  # the committed ones, for every kernel
            target, parameters, paired = script.with_suffix(".ipynb"), None, True
        else:
            target, parameters, paired = Path(output) / f"{script.stem}.ipynb", {"quick": True}, False
        cells: list = []
        return execute_notebook(script, target, parameters, paired, profile=cells), target, cells

    total, start = 0.0, time.perf_counter()
    failed = []
    # Each notebook has its own kernel and results are seeded, so running two at once
    # changes no output; it overlaps one notebook's serial parts with another's work.
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run, script): script for script in scripts}
        for future in as_completed(futures):
            script = futures[future]
            try:
                seconds, target, cells = future.result()
            except Exception as error:  # report every failing notebook, keep the others
                first_line = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
                print(f"FAILED {script.name}: {first_line}", file=sys.stderr)
                failed.append(script.name)
                continue
            total += seconds
            print(f"ran {script.name:<36} {seconds:7.1f} s -> {target}\n"
                  + slowest_cells(script.stem, seconds, cells), end="", flush=True)
    print(f"{len(scripts) - len(failed)} notebook(s) in {time.perf_counter() - start:.1f} s "
          f"({total:.1f} s of notebook time, {jobs} at once)")
    if failed:
        print(f"pipeline: {len(failed)} notebook(s) failed: {', '.join(sorted(failed))}", file=sys.stderr)
        return 1
    if mode == "figures":
        written = write_results(folder, folder.parent)
        print(f"{written['results']} results gathered into {written['table']}; "
              f"{written['quotes']} quoted number(s) rewritten in {written['pages']} page(s)")
    return 0
