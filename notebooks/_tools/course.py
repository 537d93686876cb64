"""The nbgrader course: student versions, autograding and feedback (``make assignments``, ``autograde``, ``feedback``).

``build/assignments/source/NN_name/NN_name.ipynb`` is the instructor version of a
notebook, ``release/`` the student version and ``gradebook.db`` the exercises and
their points; submissions go in ``submitted/<student>/<assignment>/``.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from pipeline import notebook_scripts, require

__all__ = ["autograde", "generate_feedback", "instructor_notebook", "make_assignments", "score_table"]

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
    require({"nbgrader": "nbgrader"}, "classroom", "make assignments")
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
    require({"nbgrader": "nbgrader"}, "classroom", "make autograde")
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
    require({"nbgrader": "nbgrader"}, "classroom", "make feedback")
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
