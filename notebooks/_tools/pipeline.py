"""Run the notebooks headless, and dispatch the book and course commands: ``python notebooks/_tools/pipeline.py MODE``.

The Jupytext percent scripts ``notebooks/NN_name.py`` are the source of truth.
``figures`` runs each with its default parameters and stores the executed notebook
as ``notebooks/NN_name.ipynb`` (Jupytext's rendering of the script with the outputs
filled in, in the form JupyterLab saves it, so the pair converts back to the same
script and opening and saving it in Lab changes neither file); ``quick OUTDIR`` runs
each with ``quick=True`` for ``make test``'s nbval check. A notebook is replaced only
when every cell succeeded. Both start the longest notebooks first, by the seconds a
full run of each took (:data:`RUNTIMES`), so that the last to finish is a short one.
``book`` is :mod:`book`, the course commands are the course tools :mod:`course` lists
(the student kit is :mod:`kit`, a script of its own; :mod:`common` says what the tools
share). This is tooling: the ``gbai`` library never imports it.
"""

from __future__ import annotations

import argparse
import csv
import functools
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

import book
import feedback
import grading
import release
import tables
from common import MissingPrerequisite, ipc_prefix, notebook_scripts

__all__ = ["execute_notebook", "main", "merge_streams", "read_runtimes", "results_pages", "store_pair", "write_results"]

KERNEL = "python3"
#: The seconds each notebook took in a full run, as ``figures`` prints them.
RUNTIMES = Path(__file__).with_name("runtimes.csv")
#: The exit status of ``autograde`` when it graded what it could but some notebook handed
#: in was not graded (2 is a command that could not run at all: a selection that matches
#: nothing, no gradebook; 1 a tool that failed).
NOT_ALL_GRADED = 3


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


def execute_notebook(script: Path, target: Path, parameters: dict | None = None, paired: bool = True) -> float:
    """Run ``script`` and write the executed notebook to ``target``; returns the seconds taken.

    With ``paired=True`` the stored notebook is Jupytext's rendering of ``script`` with
    the executed outputs copied in (no Papermill metadata, no injected cell), so it
    stays the exact pair of the script. ``target`` is only replaced on success.
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
        _replace_atomically(nbformat.writes(result) + "\n", target)
    return elapsed


def store_pair(text: str, target: Path, script: Path) -> None:
    """Write the executed notebook ``text`` of ``script`` to ``target``, the script staying the newer file.

    Jupytext's contents manager (``make lab``) warns about, and may refuse to pair, a
    notebook that is more recent than its script by over a second: it takes the script
    for an outdated copy. A notebook run from the script is its output, so the script's
    time is moved up to the notebook's (content untouched), as ``jupytext --sync`` does.
    """
    _replace_atomically(text, target)
    written = target.stat().st_mtime_ns
    status = script.stat()
    if status.st_mtime_ns < written:
        os.utime(script, ns=(status.st_atime_ns, written))


def _execute(args: argparse.Namespace) -> int:
    from concurrent.futures import ThreadPoolExecutor, as_completed

    folder = Path(args.notebooks).resolve()
    scripts = notebook_scripts(folder, args.names)
    if not scripts:
        raise ValueError(f"no notebooks in {folder}")
    if args.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {args.jobs}")
    runtimes = read_runtimes(RUNTIMES)
    # Unmeasured notebooks last, in name order (sorted is stable).
    scripts = sorted(scripts, key=lambda script: -runtimes.get(script.stem, 0.0))

    def run(script: Path) -> tuple[float, Path]:
        if args.mode == "figures":
            os.environ["GBAI_FIGURES_DIR"] = str(folder.parent / "figures")  # the committed ones, for every kernel
            target, parameters, paired = script.with_suffix(".ipynb"), None, True
        else:
            target, parameters, paired = Path(args.output) / f"{script.stem}.ipynb", {"quick": True}, False
        return execute_notebook(script, target, parameters, paired), target

    total, start = 0.0, time.perf_counter()
    failed = []
    # Each notebook has its own kernel and results are seeded, so running two at once
    # changes no output; it overlaps one notebook's serial parts with another's work.
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run, script): script for script in scripts}
        for future in as_completed(futures):
            script = futures[future]
            try:
                seconds, target = future.result()
            except Exception as error:  # report every failing notebook, keep the others
                first_line = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
                print(f"FAILED {script.name}: {first_line}", file=sys.stderr)
                failed.append(script.name)
                continue
            total += seconds
            print(f"ran {script.name:<36} {seconds:7.1f} s -> {target}", flush=True)
    print(f"{len(scripts) - len(failed)} notebook(s) in {time.perf_counter() - start:.1f} s "
          f"({total:.1f} s of notebook time, {args.jobs} at once)")
    if failed:
        print(f"pipeline: {len(failed)} notebook(s) failed: {', '.join(sorted(failed))}", file=sys.stderr)
        return 1
    if args.mode == "figures":
        written = write_results(folder, folder.parent)
        print(f"{written['results']} results gathered into {written['table']}; "
              f"{written['quotes']} quoted number(s) rewritten in {written['pages']} page(s)")
    return 0


def read_runtimes(table: Path) -> dict[str, float]:
    """The seconds per notebook stem of the runtimes table (none when it does not exist)."""
    if not table.exists():
        return {}
    try:
        return {row["notebook"]: float(row["seconds"])
                for row in csv.DictReader(table.read_text(encoding="utf-8").splitlines())}
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{table} is not a table of notebook,seconds rows") from None


def results_pages(root: Path) -> list[Path]:
    """The Markdown pages that quote results: the README and the book's own pages."""
    return [root / "README.md", *sorted((root / "notebooks" / "_book").glob("*.md"))]


def write_results(notebooks: Path, root: Path) -> dict:
    """Gather the results recorded in the stored notebooks and write everything quoted from them.

    ``figures/results.csv`` (the one table), ``paper/results.tex`` (the report's
    ``\\result`` macros) and the quoted numbers of :func:`results_pages`. Every stored
    notebook is read, including those this run did not execute, so the table always
    covers all of them.
    """
    from publish import collect, latex_macros, quote, quoted_keys

    table = collect(sorted(notebooks.glob("[0-9][0-9]_*.ipynb")))
    target = root / "figures" / "results.csv"
    _replace_atomically(table.to_csv(index=False, lineterminator="\n"), target)
    _replace_atomically(latex_macros(table), root / "paper" / "results.tex")
    quotes = pages = 0
    for page in results_pages(root):
        text = page.read_text(encoding="utf-8")
        if quoted_keys(text):
            quotes += len(quoted_keys(text))
            pages += 1
            rewritten = quote(text, table)
            if rewritten != text:
                _replace_atomically(rewritten, page)
    return {"results": len(table), "table": target, "quotes": quotes, "pages": pages}


def _grading_line(folder: Path, student: str, assignment: str) -> str:
    """The console line of one graded notebook: its tests' and written answers' points."""
    rows = tables.submission_table(folder, student, assignment)
    auto, manual = rows[rows["kind"] == "auto"], rows[rows["kind"] == "manual"]
    line = f"{student:<16} {assignment:<28} tests {auto['score'].sum():g} / {auto['points'].sum():g}"
    if len(manual):
        waiting = manual[manual["status"] == "to grade"]
        line += f", written {manual['score'].sum():g} / {manual['points'].sum():g}"
        if len(waiting):
            line += f" ({len(waiting)} to grade)"
    return line


def _autograde(args: argparse.Namespace, folder: Path, start: float) -> int:
    timeout = grading.CELL_TIMEOUT if args.timeout is None else args.timeout
    shown = functools.partial(tables.shown_path, folder)

    def warn(text: str) -> None:
        print(f"autograde: {text}", file=sys.stderr, flush=True)

    def started(report) -> None:
        print(report.sandbox.describe(), flush=True)
        for problem in report.problems:
            warn(f"{shown(problem.path)}: {problem.reason}" + ("" if problem.spare else "; not graded"))
        for student, assignment in report.removed:
            print(f"removed the grades of {student}/{assignment}: no longer in {folder / 'submitted'}", flush=True)
        print(f"grading {len(report.todo)} notebook(s), each cell stopped after {timeout} s", flush=True)

    def graded(report, submission) -> None:
        failed = dict(report.failed)
        if submission in failed:
            warn(f"{shown(submission.path)}: not graded, nbgrader failed: {failed[submission]}")
            return
        if submission.note:
            warn(f"{shown(submission.path)}: {submission.note} (name the file {submission.assignment}.ipynb)")
        issues = report.issues.get((submission.student, submission.assignment), [])
        line = _grading_line(folder, submission.student, submission.assignment)
        for kind in ("timeout", "kernel died"):
            stopped = sorted({issue.exercise for issue in issues if issue.kind == kind and issue.exercise})
            if any(issue.kind == kind for issue in issues):
                line += f"; {kind}" + (f" in exercise {', '.join(map(str, stopped))}" if stopped else "")
        deleted = [issue.cell for issue in issues if issue.kind == "deleted"]
        if deleted:
            line += f"; deleted {', '.join(deleted)}"
        print(line, flush=True)
        for issue in issues:
            if issue.kind in ("timeout", "kernel died"):
                named = "" if issue.cell.startswith("cell ") else f" (cell {issue.cell})"
                after = "; the cells after it ran without its results" if issue.kind == "timeout" else ""
                warn(f"{shown(submission.path)}: {issue.reason}{named}{after}")
            elif issue.kind == "deleted" and issue.points is not None:
                warn(f"{shown(submission.path)}: cell {issue.cell} ({issue.where}, {issue.points:g} points) "
                     f"was deleted from the notebook: 0 points")
            else:
                warn(f"{shown(submission.path)}: {issue.reason}")

    memory = grading.DEFAULT_MEMORY_GB if args.memory is None else args.memory
    report = grading.autograde(folder, args.names or None, args.student or None, timeout=timeout, memory_gb=memory,
                               on_start=started, on_graded=graded)
    print(f"graded {len(report.graded)} submission(s) in {time.perf_counter() - start:.1f} s; "
          f"grades per item in {folder / 'grades.csv'}, per student in {folder / 'grades-totals.csv'}")
    if report.unattributed:
        print(f"autograde: {report.unattributed} file(s) of these students match no assignment: listed in "
              f"grades.csv, reported by a run without an assignment selection")
    if not report.complete:
        skipped = [p for p in report.problems if not p.spare]
        print(f"autograde: {len(report.failed) + len(skipped)} notebook(s) not graded (see above)", file=sys.stderr)
        return NOT_ALL_GRADED
    return 0


def _grade_answer(args: argparse.Namespace, folder: Path) -> int:
    """make grade-answer: grade one written answer, or list those awaiting the teacher."""
    if args.answer is None and args.score is None:
        answers = grading.answers_to_grade(folder, args.names or None, args.student or None)
        for answer in answers:
            print(f"{answer['student']} {answer['assignment']} {answer['cell']} "
                  f"(exercise {answer['exercise']}, {answer['points']:g} points):")
            print("\n".join(f"    {line}" for line in (answer["text"].strip() or "(empty)").splitlines()))
        print(f"{len(answers)} written answer(s) to grade: make grade-answer STUDENT=<student> ANSWER=<cell> "
              f"SCORE=<points> [COMMENT=<text>]")
        return 0
    if args.answer is None or args.score is None or len(args.student) != 1:
        raise ValueError("grading an answer needs one STUDENT=, ANSWER= (the cell id) and SCORE=")
    try:
        score = float(args.score)
    except ValueError:
        raise ValueError(f"SCORE must be a number, got {args.score!r}") from None
    grade = grading.grade_answer(folder, args.student[0], args.answer, score, args.comment, args.names or None)
    waiting = len(grading.answers_to_grade(folder))
    print(f"{grade['student']} {grade['assignment']} {grade['name']}: {grade['manual_score']:g} / "
          f"{grade['max_score']:g}; {waiting} written answer(s) still to grade; tables rewritten in {folder}")
    return 0


def _classroom(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    folder = Path(args.output)
    if args.mode == "book":
        index = book.build_book(Path(args.notebooks), folder)
        print(f"book written to {index} ({time.perf_counter() - start:.1f} s)")
    elif args.mode == "assignments":
        made = release.make_assignments(Path(args.notebooks), folder, args.names)
        print(f"{len(made)} assignment(s) in {folder}: student versions in {folder / 'release'} "
              f"({time.perf_counter() - start:.1f} s)")
    elif args.mode == "autograde":
        return _autograde(args, folder, start)
    elif args.mode == "grade-answer":
        return _grade_answer(args, folder)
    elif args.mode == "export":
        per_item, per_student = tables.export_grades(folder)
        print(f"grades per item in {per_item}, per student in {per_student}")
    else:
        pages = feedback.generate_feedback(folder, args.names or None, args.student or None)
        # The written answers of these submissions that still await the teacher.
        submissions = {(page.parent.parent.name, page.parent.name) for page in pages}
        scores = tables.score_table(folder.resolve())
        mine = scores[[key in submissions for key in zip(scores["student"], scores["assignment"])]]
        waiting = int((mine["status"] == "to grade").sum())
        print(f"{len(pages)} feedback page(s) under {folder / 'feedback'} ({time.perf_counter() - start:.1f} s)")
        if waiting:
            print(f"feedback: {waiting} written answer(s) not graded yet show as such; grade them "
                  f"(make grade-answer, or nbgrader's formgrader) and run make feedback again", file=sys.stderr)
    return 0


_DEFAULT_OUTPUT = {"quick": "build/quick", "book": "build/book", "assignments": "build/assignments",
                   "autograde": "build/assignments", "feedback": "build/assignments", "export": "build/assignments",
                   "grade-answer": "build/assignments"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python notebooks/_tools/pipeline.py",
        description="Run the notebooks headless, render them as a book, or make and grade assignments.")
    parser.add_argument("mode", choices=["figures", "quick", "book", "assignments", "autograde", "feedback", "export",
                                         "grade-answer"],
                        help="figures: full run into notebooks/; quick: tests; book: HTML site; "
                             "assignments, autograde, feedback, export, grade-answer: the nbgrader course")
    parser.add_argument("names", nargs="*", help="notebook (assignment) name prefixes (default: all)")
    parser.add_argument("--jobs", type=int, default=2,
                        help="figures, quick: notebooks run at once (default 2)")
    parser.add_argument("--student", action="append", default=[],
                        help="autograde, feedback, grade-answer: only this student (repeat for several)")
    parser.add_argument("--students", default=None,
                        help="as --student, several ids in one string split as a shell does (make's STUDENT): "
                             "\"'mia chen' bob\"")
    parser.add_argument("--timeout", type=int, default=None,
                        help="autograde: seconds a cell may run before it is stopped (default 300)")
    parser.add_argument("--memory", type=float, default=None,
                        help="autograde: GB of memory a confined kernel may use (default 4)")
    parser.add_argument("--answer", help="grade-answer: the nbgrader id of the cell to grade (nbNN_exK_answer)")
    parser.add_argument("--score", help="grade-answer: the points given")
    parser.add_argument("--comment", help="grade-answer: a comment for the student")
    parser.add_argument("--notebooks", default="notebooks", help="folder of the percent scripts")
    parser.add_argument("--output", help="output folder (default: build/quick, build/book or build/assignments)")
    args = parser.parse_intermixed_args(argv)
    if args.output is None:
        args.output = _DEFAULT_OUTPUT.get(args.mode, "build/quick")
    try:
        if args.students is not None:
            try:
                args.student += shlex.split(args.students)
            except ValueError as error:
                raise ValueError(f"STUDENT={args.students!r} cannot be split into ids ({error}); "
                                 f"quote an id with a space: STUDENT=\"'mia chen' bob\"") from None
        if args.student and args.mode not in ("autograde", "feedback", "grade-answer"):
            raise ValueError(f"--student applies to autograde, feedback and grade-answer, not {args.mode}")
        if args.timeout is not None and args.mode != "autograde":
            raise ValueError(f"--timeout applies to autograde, not {args.mode}")
        if args.memory is not None and args.mode != "autograde":
            raise ValueError(f"--memory applies to autograde, not {args.mode}")
        if args.mode != "grade-answer" and (args.answer, args.score, args.comment) != (None, None, None):
            raise ValueError(f"--answer, --score and --comment apply to grade-answer, not {args.mode}")

        if args.mode in ("figures", "quick"):
            return _execute(args)
        return _classroom(args)
    except (ValueError, FileNotFoundError, MissingPrerequisite) as error:
        print(f"pipeline: error: {error}", file=sys.stderr)
        return 2
    except RuntimeError as error:
        print(f"pipeline: {args.mode} failed: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
