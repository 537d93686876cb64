"""Execute the notebooks headless: ``python -m gbai.pipeline figures|quick``.

The Jupytext percent scripts ``notebooks/NN_name.py`` are the source of truth. This
module converts one to a notebook, runs it with Papermill, and only when every cell
succeeded moves the result into place, so a failing notebook never overwrites the
committed one (Papermill itself writes its output even on failure).

* ``figures`` runs every notebook with its default parameters and stores the
  executed notebook as ``notebooks/NN_name.ipynb``: Jupytext's own rendering of the
  script with the outputs filled in, so the pair converts back to the same script.
  The notebooks write the figures into ``figures/``.
* ``quick OUTDIR`` runs every notebook with ``quick=True`` into ``OUTDIR`` (the
  Papermill output, injected parameters included); ``make test`` then checks those
  executions with nbval.

It needs the ``notebooks`` extra (jupytext, papermill, ipykernel).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["execute_notebook", "notebook_scripts"]

KERNEL = "python3"


def notebook_scripts(folder: Path, names: list[str] | None = None) -> list[Path]:
    """The numbered percent scripts of ``folder`` (optionally those whose stem starts with a name)."""
    scripts = sorted(path for path in folder.glob("[0-9][0-9]_*.py"))
    if names:
        chosen = [path for path in scripts if any(path.stem.startswith(name) for name in names)]
        unknown = [name for name in names if not any(path.stem.startswith(name) for path in scripts)]
        if unknown:
            raise ValueError(f"no notebook matches {unknown}; available: {[path.stem for path in scripts]}")
        return chosen
    return scripts


def _replace_atomically(text: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def execute_notebook(script: Path, target: Path, parameters: dict | None = None, paired: bool = True) -> float:
    """Run ``script`` and write the executed notebook to ``target``; returns the seconds taken.

    With ``paired=True`` the stored notebook is Jupytext's rendering of ``script`` with
    the executed outputs copied in (no Papermill metadata, no injected cell), so it
    stays the exact pair of the script. ``target`` is only replaced on success.
    """
    import jupytext
    import nbformat
    import papermill

    os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")  # the venv's kernel first
    os.environ.setdefault("TQDM_DISABLE", "1")  # no progress bars (and their timings) in stored outputs
    source = jupytext.read(script)
    for index, cell in enumerate(source.cells):
        cell.id = f"cell-{index}"  # nbformat would draw random ids: keep reruns byte-identical
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
            cwd=str(script.parent),
        )
        result = nbformat.read(executed, as_version=4)
    elapsed = time.perf_counter() - start
    if paired:
        code_cells = [cell for cell in source.cells if cell.cell_type == "code"]
        ran = [cell for cell in result.cells if cell.cell_type == "code"]
        if len(code_cells) != len(ran):
            raise RuntimeError(f"{script.name}: executed notebook has {len(ran)} code cells, expected {len(code_cells)}")
        for original, done in zip(code_cells, ran):
            original.outputs = done.outputs
            original.execution_count = done.execution_count
        result = source
    else:
        result.metadata.pop("papermill", None)
        for cell in result.cells:
            cell.metadata.pop("papermill", None)
            cell.metadata.pop("execution", None)
    _replace_atomically(nbformat.writes(result) + "\n", target)
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gbai.pipeline", description="Run the notebooks headless.")
    parser.add_argument("mode", choices=["figures", "quick"], help="figures: full run into notebooks/; quick: tests")
    parser.add_argument("names", nargs="*", help="notebook name prefixes (default: all)")
    parser.add_argument("--notebooks", default="notebooks", help="folder of the percent scripts")
    parser.add_argument("--output", default="build/quick", help="output folder of the quick mode")
    args = parser.parse_args(argv)
    folder = Path(args.notebooks)
    try:
        scripts = notebook_scripts(folder, args.names)
    except ValueError as error:
        print(f"pipeline: error: {error}", file=sys.stderr)
        return 2
    if not scripts:
        print(f"pipeline: error: no notebooks in {folder}", file=sys.stderr)
        return 2
    total = 0.0
    failed = []
    for script in scripts:
        if args.mode == "figures":
            target, parameters, paired = script.with_suffix(".ipynb"), None, True
        else:
            target, parameters, paired = Path(args.output) / f"{script.stem}.ipynb", {"quick": True}, False
        try:
            seconds = execute_notebook(script, target, parameters, paired)
        except Exception as error:  # report every failing notebook, keep the others
            first_line = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
            print(f"FAILED {script.name}: {first_line}", file=sys.stderr)
            failed.append(script.name)
            continue
        total += seconds
        print(f"ran {script.name:<36} {seconds:7.1f} s -> {target}", flush=True)
    print(f"total {total:.1f} s for {len(scripts) - len(failed)} notebook(s)")
    if failed:
        print(f"pipeline: {len(failed)} notebook(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
