"""The nbgrader course: student versions, autograding and the grade tables (``make assignments``, ``autograde``, ``export``).

``build/assignments/source/NN_name/NN_name.ipynb`` is the instructor version of a
notebook, ``release/`` the student version and ``gradebook.db`` the exercises and
their points; submissions go in ``submitted/<student>/<assignment>/``. Grading
works on a copy of each submission under ``.grading/submitted/`` (the file given
the name nbgrader expects), so ``submitted/`` is never changed. Feedback pages are
:mod:`feedback`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from pipeline import ipc_prefix, notebook_scripts, require
from submissions import Problem, Submission, find_submissions, notebook_cell_ids

__all__ = ["GradingReport", "autograde", "export_grades", "instructor_notebook", "make_assignments",
           "score_table", "totals_table"]

COURSE_ID = "gbai"
#: nbgrader's default of 30 s per cell is too tight on a busy machine for the cells
#: that still simulate for a few seconds in the quick configuration.
CELL_TIMEOUT = 300

#: nbgrader metadata of a read-only cell without points: autograding restores it from
#: the gradebook, so a submission is always graded with the original.
_LOCKED = {"grade": False, "locked": True, "schema_version": 3, "solution": False, "task": False}

_NBGRADER_CONFIG = f"""\
# nbgrader configuration of the gbai course, written by `make assignments`.
# Run nbgrader from this folder (make autograde / make feedback do it for you).
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "{COURSE_ID}"
# A graded notebook runs in its quick configuration, but some cells still simulate
# for a few seconds; nbgrader's default of 30 s per cell is too tight on a busy machine.
c.Execute.timeout = {CELL_TIMEOUT}
# Kernels talk to nbgrader over local sockets, not unencrypted TCP; the sockets need
# an absolute path, since a kernel runs in its notebook's folder.
c.KernelManager.transport = "ipc"
c.KernelManager.ip = "/tmp/gbai-nbgrader-kernel"
"""

_HEADER = """\
**Assignment `{name}`**: {points} points, {auto} checked automatically{written}.

Before you hand in:

1. Write your name in the cell below.
2. Restart the kernel and run every cell (*Kernel → Restart Kernel and Run All Cells*),
   and check that each cell ran.
3. Save, and hand in this file under its own name, `{name}.ipynb`: grading looks for
   it by that name (not `{name}-Copy1.ipynb` or another copy).

Answer where a cell says `YOUR CODE HERE` (delete the `raise NotImplementedError()`
line) or `YOUR ANSWER HERE`. The cell after each answer checks its form; passing it
does not mean full marks, since grading runs further checks. Read-only cells, such
as those checks and the parameters (`quick = True`, the configuration you are graded
in), are restored when your notebook is graded. The figures this notebook saves go
to a folder `figures` next to it."""

_NAME_CELL = 'NAME = ""  # your name\nCOLLABORATORS = ""  # anyone you worked with'

#: The locked set-up cell: figures go next to the notebook, never into the gbai
#: repository's figures/ (an editable install would resolve there). Grading sets the
#: variable itself beforehand, and the cell keeps the grading folder.
_SETUP_CELL = """\
# Figures this notebook saves go to ./figures, next to the notebook.
import os

if not os.environ.get("GBAI_FIGURES_DIR"):
    os.environ["GBAI_FIGURES_DIR"] = os.path.abspath("figures")"""


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


@contextlib.contextmanager
def quiet():
    """Silence what nbgrader 0.9.6 says on every run and a teacher cannot act on.

    Its gradebook code adds objects to SQLAlchemy 2 sessions in a way that warns
    ("Object of type <SubmittedAssignment> not in session"); the grades are stored
    correctly all the same.
    """
    from sqlalchemy.exc import SAWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=SAWarning, message=r"Object of type .* not in session")
        yield


def _config(course: Path, submitted: Path | None = None):
    from traitlets.config import Config

    config = Config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.course_id = COURSE_ID
    if submitted is not None:
        config.CourseDirectory.submitted_directory = str(submitted.relative_to(course))
    config.Execute.timeout = CELL_TIMEOUT
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = ipc_prefix()
    return config


def _api(course: Path, submitted: Path | None = None):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    config = _config(course, submitted)
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def _check(result: dict, what: str) -> None:
    if not result.get("success"):
        raise RuntimeError(f"nbgrader {what} failed: {failure_reason(result)}")


def failure_reason(result: dict) -> str:
    """One line saying why nbgrader failed: the last exception it logged, else its last error line."""
    text = "\n".join(str(result.get(key) or "") for key in ("log", "error"))
    exceptions = [line.strip() for line in text.splitlines()
                  if re.match(r"^\s*[\w.]*(Error|Exception|Interrupt|Exit)\b.*:", line)
                  and "NbGraderException" not in line]
    if exceptions:
        return exceptions[-1]
    errors = [line.strip() for line in text.splitlines() if "ERROR" in line and line.strip()]
    return errors[-1] if errors else "no reason given"


def _points(notebook) -> tuple[float, float]:
    """Points of the automatic tests and of the written answers of a notebook."""
    auto = written = 0.0
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            if cell.cell_type == "code" and not meta.get("solution"):
                auto += float(meta.get("points", 0))
            else:
                written += float(meta.get("points", 0))
    return auto, written


def student_header(name: str, notebook) -> list:
    """The cells put at the top of every student version: instructions, name, figure folder."""
    import nbformat

    auto, written = _points(notebook)
    text = _HEADER.format(name=name, points=f"{auto + written:g}", auto=f"{auto:g}",
                          written=f", {written:g} for written answers your teacher grades" if written else "")
    setup = nbformat.v4.new_code_cell(_SETUP_CELL)
    setup.metadata["nbgrader"] = dict(_LOCKED, grade_id=f"{name}_setup")
    return [nbformat.v4.new_markdown_cell(text), nbformat.v4.new_code_cell(_NAME_CELL), setup]


def instructor_notebook(script: Path):
    """The instructor version of a notebook: the student header, then its script in the quick configuration.

    The parameters cell gets ``quick = True`` and is locked; the exercise cells carry
    their nbgrader metadata in the script itself.
    """
    import jupytext

    notebook = jupytext.read(script)
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
    cell.metadata["nbgrader"] = dict(_LOCKED, grade_id=f"{script.stem}_parameters")
    graded = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")]
    if not graded:
        raise ValueError(f"{script.name}: no graded exercise (nbgrader metadata) found")
    notebook.cells = student_header(script.stem, notebook) + notebook.cells
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index}"
    return notebook


def make_assignments(notebooks: Path, course: Path, names: list[str] | None = None) -> list[str]:
    """Write the nbgrader course: one assignment per notebook; returns the assignment names.

    ``course/source/NN_name/NN_name.ipynb`` is the instructor version, ``release/`` the
    student version (solutions replaced by ``raise NotImplementedError()`` or ``YOUR
    ANSWER HERE``, hidden tests removed, the visible ones kept and locked) and
    ``gradebook.db`` the exercises with their points.
    """
    require({"nbgrader": "nbgrader"}, "classroom", "make assignments")
    import nbformat

    course = course.resolve()
    scripts = notebook_scripts(notebooks, names)
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(_NBGRADER_CONFIG)
    _grading_environment(course)
    api = _api(course)
    made = []
    with quiet():
        for script in scripts:
            name = script.stem
            folder = course / "source" / name
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(instructor_notebook(script), folder / f"{name}.ipynb")
            _check(api.generate_assignment(name, force=True, create=True), f"generate_assignment {name}")
            made.append(name)
    return made


# --- grading ------------------------------------------------------------------------


@dataclass
class GradingReport:
    """What one ``autograde`` run did."""

    graded: list[Submission] = field(default_factory=list)
    #: Submissions nbgrader could not grade, with the reason in one line.
    failed: list[tuple[Submission, str]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    #: (student, assignment) pairs whose grades were removed: their folder is gone.
    removed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every notebook handed in was graded (spare copies beside a graded notebook aside)."""
        return not self.failed and all(problem.spare for problem in self.problems)


def _gradebook(course: Path):
    from nbgrader.api import Gradebook

    return Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID)


def _assignment_cells(course: Path) -> dict[str, set[str]]:
    """Each assignment of the gradebook with the cell ids of its notebook (from its source version)."""
    with _gradebook(course) as gradebook:
        names = sorted(assignment.name for assignment in gradebook.assignments)
    cells = {}
    for name in names:
        ids = notebook_cell_ids(course / "source" / name / f"{name}.ipynb")
        cells[name] = ids or set()
    return cells


def select(names: list[str] | None, known: list[str], what: str) -> list[str]:
    """The ``known`` names starting with one of ``names`` (all of them without ``names``)."""
    if not names:
        return known
    chosen = [item for item in known if any(item.startswith(name) for name in names)]
    unknown = [name for name in names if not any(item.startswith(name) for item in known)]
    if unknown:
        raise ValueError(f"no {what} matches {', '.join(unknown)}; known: {', '.join(known) or 'none'}")
    return chosen


def select_students(students: list[str] | None, known: list[str], where: Path) -> list[str]:
    """The students asked for (exact ids), all ``known`` ones without a request."""
    missing = [student for student in students or [] if student not in known]
    if missing:
        raise ValueError(f"no submission of {', '.join(missing)} in {where}; students: {', '.join(known) or 'none'}")
    return list(students) if students else known


def _stage(submission: Submission, staging: Path) -> None:
    """Copy a submission to ``staging/<student>/<assignment>/<assignment>.ipynb`` with its timestamp."""
    folder = staging / submission.student / submission.assignment
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shutil.copy2(submission.path, folder / f"{submission.assignment}.ipynb")
    timestamp = submission.path.parent / "timestamp.txt"
    if timestamp.exists():
        shutil.copy2(timestamp, folder / "timestamp.txt")


def _forget(course: Path, gradebook, student: str, assignment: str) -> None:
    """Remove a submission from the gradebook and its autograded notebook and feedback."""
    from nbgrader.api import MissingEntry

    with contextlib.suppress(MissingEntry):
        gradebook.remove_submission(assignment, student)
    for folder in ("autograded", "feedback", ".grading/submitted"):
        path = course / folder / student / assignment
        if path.exists():
            shutil.rmtree(path)
        if path.parent.is_dir() and not any(path.parent.iterdir()):
            path.parent.rmdir()


def _prune(course: Path, present: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """Forget every graded submission whose notebook is no longer handed in; drop students left with none."""
    removed = []
    with _gradebook(course) as gradebook:
        for assignment in gradebook.assignments:
            for submission in list(gradebook.assignment_submissions(assignment.name)):
                key = (submission.student.id, assignment.name)
                if key not in present:
                    removed.append(key)
        for student, assignment in removed:
            _forget(course, gradebook, student, assignment)
        for student in list(gradebook.students):
            if not student.submissions:
                gradebook.remove_student(student.id)
    return sorted(removed)


def autograde(course: Path, assignments: list[str] | None = None,
              students: list[str] | None = None) -> GradingReport:
    """Autograde the submissions under ``submitted/``, then write ``grades.csv`` and ``grades-totals.csv``.

    ``assignments`` (name prefixes) and ``students`` (ids) restrict what is graded;
    by default everything is graded again. Each notebook runs from top to bottom in
    nbgrader's kernel with the locked cells (parameters, tests with their hidden
    part) restored from the gradebook. A notebook under another name than
    ``<assignment>.ipynb`` is graded as that assignment's when it matches one
    unambiguously; other files are reported and left out, and one submission that
    nbgrader cannot grade does not stop the others. Grades of submissions that are
    no longer in ``submitted/`` are removed, whatever the selection, so the tables
    never hold stale rows.
    """
    require({"nbgrader": "nbgrader"}, "classroom", "make autograde")
    course = course.resolve()
    if not (course / "gradebook.db").exists():
        raise FileNotFoundError(f"no gradebook in {course}: run `make assignments` first")
    _grading_environment(course)
    with quiet():
        cells = _assignment_cells(course)
        found, problems = find_submissions(course / "submitted", cells)
        chosen_assignments = select(assignments, sorted(cells), "assignment")
        handed_in = sorted({submission.student for submission in found} | {problem.student for problem in problems
                                                                           if problem.student != "?"})
        chosen_students = select_students(students, handed_in, course / "submitted")
        report = GradingReport()
        report.problems = [problem for problem in problems if problem.student in chosen_students
                           or problem.student == "?"]
        if not found and not problems:
            # Nothing handed in at all (or the wrong folder): keep every grade the gradebook holds.
            raise FileNotFoundError(f"nothing to grade: put each student's notebook at "
                                    f"{course}/submitted/<student>/<assignment>/<assignment>.ipynb")
        report.removed = _prune(course, {(submission.student, submission.assignment) for submission in found})
        todo = [submission for submission in found
                if submission.student in chosen_students and submission.assignment in chosen_assignments]
        if not todo and (students or assignments):
            raise ValueError(f"no submission of {', '.join(chosen_students)} for {', '.join(chosen_assignments)}")
        staging = course / ".grading" / "submitted"
        api = _api(course, staging)
        for submission in todo:
            _stage(submission, staging)
            result = api.autograde(submission.assignment, submission.student, force=True, create=True)
            if result.get("success"):
                report.graded.append(submission)
            else:
                report.failed.append((submission, failure_reason(result)))
                with _gradebook(course) as gradebook:
                    _forget(course, gradebook, submission.student, submission.assignment)
        export_grades(course)
    return report


# --- the grade tables -----------------------------------------------------------------

_EXERCISE = re.compile(r"_ex(\d+)_")


def score_table(course: Path):
    """One row per graded item of every submission.

    ``exercise`` is the exercise number (from the cell id ``nbNN_exK_...``), ``cell``
    the nbgrader cell id, ``kind`` ``auto`` (a test cell) or ``manual`` (a written
    answer), and ``status`` ``graded``, ``to grade`` (a written answer awaiting the
    teacher: its score is empty) or ``no answer`` (left as handed out: 0 points).
    """
    import pandas as pd

    rows = []
    with quiet(), _gradebook(Path(course).resolve()) as gradebook:
        for assignment in gradebook.assignments:
            for submission in gradebook.assignment_submissions(assignment.name):
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        manual = grade.cell.cell_type == "markdown"
                        if manual and grade.manual_score is None and grade.auto_score is None:
                            status, score = "to grade", None
                        elif manual and grade.manual_score is None:
                            status, score = "no answer", float(grade.score)
                        else:
                            status, score = "graded", float(grade.score)
                        number = _EXERCISE.search(grade.cell.name + "_")
                        rows.append({"student": submission.student.id, "assignment": assignment.name,
                                     "exercise": int(number.group(1)) if number else None,
                                     "cell": grade.cell.name, "kind": "manual" if manual else "auto",
                                     "score": score, "points": float(grade.max_score), "status": status})
    columns = ["student", "assignment", "exercise", "cell", "kind", "score", "points", "status"]
    table = pd.DataFrame(rows, columns=columns).astype({"exercise": "Int64", "score": "float"})
    return table.sort_values(["student", "assignment", "exercise", "kind"], ignore_index=True)


def totals_table(course: Path, scores=None):
    """One row per student: the score of each assignment handed in, then the course totals.

    ``auto`` and ``manual`` split the score between the tests and the written answers
    graded so far; ``to_grade`` counts the written answers still awaiting the teacher
    (the total does not include them yet); ``points`` is the whole course's, every
    assignment in the gradebook, handed in or not.
    """
    import pandas as pd

    course = Path(course).resolve()
    scores = score_table(course) if scores is None else scores
    with quiet(), _gradebook(course) as gradebook:
        names = sorted(assignment.name for assignment in gradebook.assignments)
        course_points = {"auto": 0.0, "manual": 0.0}
        for assignment in gradebook.assignments:
            for notebook in assignment.notebooks:
                for cell in notebook.grade_cells:
                    course_points["manual" if cell.cell_type == "markdown" else "auto"] += float(cell.max_score)
    rows = []
    for student, mine in scores.groupby("student", sort=True):
        row = {"student": student}
        per_assignment = mine.groupby("assignment")["score"].sum(min_count=0)
        for name in names:
            row[name] = float(per_assignment[name]) if name in per_assignment else None
        auto, manual = mine[mine["kind"] == "auto"], mine[mine["kind"] == "manual"]
        row.update({"submitted": int(mine["assignment"].nunique()),
                    "auto": float(auto["score"].sum()), "auto_points": course_points["auto"],
                    "manual": float(manual["score"].sum()), "manual_points": course_points["manual"],
                    "to_grade": int((mine["status"] == "to grade").sum()),
                    "score": float(mine["score"].sum()),
                    "points": course_points["auto"] + course_points["manual"]})
        rows.append(row)
    columns = ["student", *names, "submitted", "auto", "auto_points", "manual", "manual_points", "to_grade",
               "score", "points"]
    return pd.DataFrame(rows, columns=columns)


def export_grades(course: Path) -> tuple[Path, Path]:
    """Rewrite ``grades.csv`` (one row per item) and ``grades-totals.csv`` (one row per student) from the gradebook."""
    require({"nbgrader": "nbgrader"}, "classroom", "make export")
    course = Path(course).resolve()
    if not (course / "gradebook.db").exists():
        raise FileNotFoundError(f"no gradebook in {course}: run `make assignments` first")
    scores = score_table(course)
    paths = course / "grades.csv", course / "grades-totals.csv"
    scores.to_csv(paths[0], index=False, float_format="%g")
    totals_table(course, scores).to_csv(paths[1], index=False, float_format="%g")
    return paths
