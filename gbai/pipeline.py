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

* ``book`` renders the executed notebooks of ``notebooks/`` (without running them
  again) into a static HTML site under ``build/book/`` with Sphinx and MyST-NB; the
  site's sources are ``notebooks/_book/``. MathJax 3 comes from the PyPI package
  ``django-static-mathjax`` and is copied into the site, so equations render offline.
* ``assignments`` writes an nbgrader course under ``build/assignments/``: the
  instructor version of every notebook in ``source/``, the student versions in
  ``release/`` and the gradebook. ``autograde`` scores every notebook found under
  ``submitted/<student>/<assignment>/`` and writes ``grades.csv``; ``feedback`` writes
  HTML feedback for each graded submission.

It needs the ``notebooks`` extra (jupytext, papermill, ipykernel); ``book`` needs the
``book`` extra and the three classroom commands the ``classroom`` extra (nbgrader).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["autograde", "build_book", "execute_notebook", "generate_feedback", "make_assignments", "merge_streams",
           "notebook_scripts", "score_table"]

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
    merge_streams(result)
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


class MissingPrerequisite(RuntimeError):
    """A tool a command needs is not installed; the message says how to install it."""


def _require(modules: dict[str, str], extra: str, command: str) -> None:
    missing = [package for module, package in modules.items() if importlib.util.find_spec(module) is None]
    if missing:
        raise MissingPrerequisite(
            f"{command} needs {', '.join(missing)}: run `make install` or pip install -e '.[{extra}]'")


# --- the book ---------------------------------------------------------------------

#: What the site needs from MathJax 3's es5 build: the combined TeX/MathML -> HTML
#: component, its fonts, the TeX extensions it loads on demand (ams, ...), and the
#: context menu with its accessibility parts.
_MATHJAX_PARTS = ("tex-mml-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions", "ui", "a11y", "sre")


def _mathjax_folder() -> Path:
    spec = importlib.util.find_spec("mathjax")
    folder = Path(spec.origin).parent / "static" / "mathjax" if spec and spec.origin else None
    if folder is None or not (folder / "es5" / "tex-mml-chtml.js").exists():
        raise MissingPrerequisite("make book needs MathJax 3 from the package django-static-mathjax: "
                                  "run `make install` or pip install -e '.[book]'")
    return folder


def build_book(notebooks: Path, output: Path, work: Path | None = None) -> Path:
    """Render the executed ``notebooks/NN_*.ipynb`` into a static site in ``output``.

    Nothing is executed: the pages show the outputs stored by ``make figures``. The
    Sphinx sources (``conf.py``, the landing page) live in ``notebooks/_book``; they
    and the notebooks are copied into ``work`` (default ``output`` + ``-src``) with
    MathJax, and ``sphinx-build -W`` turns every warning into a failure. Returns
    the landing page.
    """
    _require({"sphinx": "sphinx", "myst_nb": "myst-nb", "sphinx_book_theme": "sphinx-book-theme",
              "sphinx_togglebutton": "sphinx-togglebutton"}, "book", "make book")
    mathjax = _mathjax_folder()
    sources = notebooks / "_book"
    if not (sources / "conf.py").exists():
        raise FileNotFoundError(f"no book sources: {sources / 'conf.py'} is missing")
    pages = [script.with_suffix(".ipynb") for script in notebook_scripts(notebooks)]
    unexecuted = [page.name for page in pages if not page.exists()]
    if unexecuted:
        raise FileNotFoundError(f"notebooks without an executed .ipynb (run `make figures`): {unexecuted}")
    output = output.resolve()
    work = (work or output.with_name(output.name + "-src")).resolve()
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(sources, work, ignore=shutil.ignore_patterns("__pycache__"))
    for page in pages:
        shutil.copy2(page, work / page.name)
    target = work / "_mathjax" / "mathjax"
    for part in _MATHJAX_PARTS:
        source = mathjax / "es5" / part
        if source.is_dir():
            shutil.copytree(source, target / part)
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / part)
    shutil.copy2(mathjax / "LICENSE", target / "LICENSE")
    # MyST-NB writes a jupyter_execute/ folder beside the HTML folder: keep it in `work`.
    html = work / "_build" / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
               "-d", str(work / "_build" / "doctrees"), str(work), str(html)]
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError("sphinx-build failed:\n" + (completed.stderr or completed.stdout).strip())
    if output.exists():
        shutil.rmtree(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(html, output)
    return output / "index.html"


# --- assignments (nbgrader) -------------------------------------------------------

#: nbgrader metadata that makes the parameters cell read-only: autograding restores it
#: from the gradebook, so a submission is always graded with ``quick = True``.
_LOCKED_PARAMETERS = {"grade": False, "locked": True, "schema_version": 3, "solution": False, "task": False}

_NBGRADER_CONFIG = """\
# nbgrader configuration of the gbai course, written by `make assignments`.
# Run nbgrader from this folder (make autograde / make feedback do it for you).
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "gbai"
# A graded notebook runs in its quick configuration, but some cells still simulate
# for a few seconds; nbgrader's default of 30 s per cell is too tight on a busy machine.
c.Execute.timeout = 300
"""


def _grading_environment(course: Path) -> None:
    """Environment of the kernels that run submissions.

    The venv's ``bin`` first on PATH (nbgrader calls ``alembic`` for the gradebook and
    the kernel must be the venv's), figures and simulation cache kept inside the
    course folder (never the repository's ``figures/``), no progress bars.
    """
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    os.environ["JUPYTER_PREFER_ENV_PATH"] = "1"
    os.environ["TQDM_DISABLE"] = "1"
    os.environ["GBAI_FIGURES_DIR"] = str(course / ".grading" / "figures")
    os.environ["GBAI_CACHE_DIR"] = str(course / ".grading" / "cache")


def _api(course: Path):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    config = Config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.course_id = "gbai"
    config.Execute.timeout = 300
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def _check(result: dict, what: str) -> None:
    if not result.get("success"):
        detail = (result.get("error") or result.get("log") or "").strip()
        raise RuntimeError(f"nbgrader {what} failed:\n{detail}")


def instructor_notebook(script: Path):
    """The instructor version of a notebook: its script, set to the quick configuration.

    The parameters cell gets ``quick = True`` and is locked; the exercise cells carry
    their nbgrader metadata in the script itself.
    """
    import jupytext

    notebook = jupytext.read(script)
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index}"
    parameters = [cell for cell in notebook.cells if "parameters" in cell.metadata.get("tags", [])]
    if len(parameters) != 1:
        raise ValueError(f"{script.name}: expected one parameters cell, found {len(parameters)}")
    cell = parameters[0]
    source, count = re.subn(r"^quick = False\b.*$",
                            "quick = True  # graded in the quick configuration (this cell is read-only)",
                            cell.source, flags=re.MULTILINE)
    if count != 1:
        raise ValueError(f"{script.name}: the parameters cell has no line `quick = False`")
    cell.source = source
    cell.metadata["nbgrader"] = dict(_LOCKED_PARAMETERS, grade_id=f"{script.stem}_parameters")
    graded = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")]
    if not graded:
        raise ValueError(f"{script.name}: no graded exercise (nbgrader metadata) found")
    return notebook


def make_assignments(notebooks: Path, course: Path, names: list[str] | None = None) -> list[str]:
    """Write the nbgrader course: one assignment per notebook; returns the assignment names.

    ``course/source/NN_name/NN_name.ipynb`` is the instructor version, ``release/`` the
    student version (solutions replaced by ``raise NotImplementedError()``, tests kept
    and locked) and ``gradebook.db`` the exercises with their points.
    """
    _require({"nbgrader": "nbgrader"}, "classroom", "make assignments")
    import nbformat

    course = course.resolve()
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(_NBGRADER_CONFIG)
    _grading_environment(course)
    api = _api(course)
    made = []
    for script in notebook_scripts(notebooks, names):
        name = script.stem
        folder = course / "source" / name
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(instructor_notebook(script), folder / f"{name}.ipynb")
        _check(api.generate_assignment(name, force=True, create=True), f"generate_assignment {name}")
        made.append(name)
    return made


def autograde(course: Path, assignments: list[str] | None = None) -> list[tuple[str, str]]:
    """Autograde every submission ``submitted/<student>/<assignment>/``; returns (student, assignment) pairs.

    ``assignments`` (name prefixes) limits grading to some assignments.
    Each notebook runs again from top to bottom in nbgrader's kernel with the locked
    cells (parameters and tests) restored from the gradebook. Writes ``grades.csv``.
    """
    _require({"nbgrader": "nbgrader"}, "classroom", "make autograde")
    course = course.resolve()
    if not (course / "gradebook.db").exists():
        raise FileNotFoundError(f"no gradebook in {course}: run `make assignments` first")
    submitted = sorted(path for path in (course / "submitted").glob("*/*") if path.is_dir()
                       and (not assignments or any(path.name.startswith(name) for name in assignments)))
    if not submitted:
        raise FileNotFoundError(f"nothing to grade: put each student's notebook at "
                                f"{course}/submitted/<student>/<assignment>/<assignment>.ipynb")
    _grading_environment(course)
    api = _api(course)
    graded = []
    for path in submitted:
        student, assignment = path.parent.name, path.name
        _check(api.autograde(assignment, student, force=True, create=True), f"autograde {student}/{assignment}")
        graded.append((student, assignment))
    score_table(course).to_csv(course / "grades.csv", index=False)
    return graded


def generate_feedback(course: Path) -> list[Path]:
    """HTML feedback for every autograded submission, under ``feedback/``."""
    _require({"nbgrader": "nbgrader"}, "classroom", "make feedback")
    course = course.resolve()
    graded = sorted(path for path in (course / "autograded").glob("*/*") if path.is_dir())
    if not graded:
        raise FileNotFoundError(f"nothing autograded in {course}: run `make autograde` first")
    _grading_environment(course)
    api = _api(course)
    for path in graded:
        _check(api.generate_feedback(path.name, path.parent.name, force=True), f"feedback {path}")
    return sorted((course / "feedback").glob("*/*/*.html"))


def score_table(course: Path):
    """One row per graded exercise of every submission: student, assignment, exercise, score, points."""
    import pandas as pd
    from nbgrader.api import Gradebook

    rows = []
    with Gradebook(f"sqlite:///{Path(course).resolve() / 'gradebook.db'}") as gradebook:
        for assignment in gradebook.assignments:
            for submission in gradebook.assignment_submissions(assignment.name):
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        rows.append({"student": submission.student.id, "assignment": assignment.name,
                                     "exercise": grade.cell.name, "score": float(grade.score),
                                     "points": float(grade.max_score)})
    columns = ["student", "assignment", "exercise", "score", "points"]
    return pd.DataFrame(rows, columns=columns).sort_values(columns[:3], ignore_index=True)


def _execute(args: argparse.Namespace) -> int:
    folder = Path(args.notebooks)
    scripts = notebook_scripts(folder, args.names)
    if not scripts:
        raise ValueError(f"no notebooks in {folder}")
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


def _classroom(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    course = Path(args.output)
    if args.mode == "book":
        index = build_book(Path(args.notebooks), course)
        print(f"book written to {index} ({time.perf_counter() - start:.1f} s)")
    elif args.mode == "assignments":
        made = make_assignments(Path(args.notebooks), course, args.names)
        print(f"{len(made)} assignment(s) in {course}: student versions in {course / 'release'} "
              f"({time.perf_counter() - start:.1f} s)")
    elif args.mode == "autograde":
        graded = autograde(course, args.names or None)
        scores = score_table(course)
        totals = scores.groupby(["student", "assignment"])[["score", "points"]].sum()
        for (student, assignment), row in totals.iterrows():
            if (student, assignment) in graded:
                print(f"{student:<20} {assignment:<28} {row['score']:g} / {row['points']:g}")
        print(f"grades of {len(graded)} submission(s) in {course / 'grades.csv'} ({time.perf_counter() - start:.1f} s)")
    else:
        pages = generate_feedback(course)
        print(f"{len(pages)} feedback page(s) under {course / 'feedback'}")
    return 0


_DEFAULT_OUTPUT = {"quick": "build/quick", "book": "build/book", "assignments": "build/assignments",
                   "autograde": "build/assignments", "feedback": "build/assignments"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gbai.pipeline",
        description="Run the notebooks headless, render them as a book, or make and grade assignments.")
    parser.add_argument("mode", choices=["figures", "quick", "book", "assignments", "autograde", "feedback"],
                        help="figures: full run into notebooks/; quick: tests; book: HTML site; "
                             "assignments, autograde, feedback: the nbgrader course")
    parser.add_argument("names", nargs="*", help="notebook name prefixes (default: all)")
    parser.add_argument("--notebooks", default="notebooks", help="folder of the percent scripts")
    parser.add_argument("--output", help="output folder (default: build/quick, build/book or build/assignments)")
    args = parser.parse_args(argv)
    if args.output is None:
        args.output = _DEFAULT_OUTPUT.get(args.mode, "build/quick")
    try:
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
