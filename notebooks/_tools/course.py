"""The nbgrader course: student versions, autograding and the grade tables (``make assignments``, ``autograde``, ``export``).

``build/assignments/source/NN_name/NN_name.ipynb`` is the instructor version of a
notebook, ``release/`` the student version and ``gradebook.db`` the exercises and
their points; submissions go in ``submitted/<student>/<assignment>/``. Grading
works on a copy of each submission under ``.grading/submitted/`` (the file given
the name nbgrader expects), so ``submitted/`` is never changed, and each notebook
runs in the sandbox of :mod:`sandbox` when bubblewrap is installed. Feedback pages
are :mod:`feedback`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from common import ipc_prefix, notebook_scripts, require
from sandbox import DEFAULT_MEMORY_GB, KERNEL_DIED, Confinement, confinement, grading_execute
from submissions import Problem, Submission, find_submissions, notebook_cell_ids

__all__ = ["CellIssue", "GradingReport", "NotGraded", "answers_to_grade", "autograde", "cell_issues", "export_grades",
           "grade_answer", "instructor_notebook", "make_assignments", "not_graded", "score_table", "submission_table",
           "totals_table"]

COURSE_ID = "gbai"
#: nbgrader's default of 30 s per cell is too tight on a busy machine for the cells
#: that still simulate for a few seconds in the quick configuration.
CELL_TIMEOUT = 300
#: The error nbgrader records in a cell stopped at the time limit.
TIMEOUT_ERROR = "CellTimeoutError"

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
# Grading from formgrader's buttons runs answers unconfined: grade with `make autograde`,
# which runs each notebook in a bubblewrap sandbox.
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


def _config(course: Path, submitted: Path | None = None, timeout: int = CELL_TIMEOUT,
            sandbox: Confinement | None = None):
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute
    from traitlets.config import Config

    config = Config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.course_id = COURSE_ID
    if submitted is not None:
        config.CourseDirectory.submitted_directory = str(submitted.relative_to(course))
    config.Execute.timeout = timeout
    # The error stored in a cell stopped at the limit says so in words (nbgrader's own
    # says "No reply from kernel"), since it ends up on the student's feedback page.
    stopped = f"timed out: stopped after {timeout} s, the time limit per cell"
    config.Execute.error_on_timeout = {"ename": TIMEOUT_ERROR, "evalue": stopped,
                                       "traceback": [f"{TIMEOUT_ERROR}: {stopped}"]}
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = ipc_prefix()
    # Grading runs each notebook with the preprocessor of sandbox.py: confined, and
    # going on after a kernel that dies.
    preprocessors = Autograde.class_traits()["autograde_preprocessors"].default()
    config.Autograde.autograde_preprocessors = [grading_execute() if step is Execute else step
                                                for step in preprocessors]
    config.GradingExecute.sandbox = sandbox
    return config


def _api(course: Path, submitted: Path | None = None, timeout: int = CELL_TIMEOUT,
         sandbox: Confinement | None = None):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    config = _config(course, submitted, timeout, sandbox)
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

_EXERCISE = re.compile(r"_ex(\d+)_")


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _exercise(cell) -> int | None:
    """The exercise a cell belongs to, from its nbgrader id ``nbNN_exK_...`` (None for other cells)."""
    number = _EXERCISE.search(_meta(cell).get("grade_id", "") + "_")
    return int(number.group(1)) if number else None


def _describe(cell, index: int) -> str:
    """A cell as a student finds it: "exercise 2, your answer", or "cell 17 (`time.sleep(9)`...)"."""
    meta = _meta(cell)
    number = _exercise(cell)
    if number is not None:
        if meta.get("grade") and cell.cell_type == "markdown":
            kind = "written answer"
        elif meta.get("solution"):
            kind = "your answer"
        else:
            kind = "automatic test"
        return f"exercise {number}, {kind}"
    first = next((line.strip() for line in cell.source.splitlines() if line.strip()), "")
    return f"cell {index + 1}" + (f" (`{first[:40]}`)" if first else "")


@dataclass(frozen=True)
class CellIssue:
    """A cell of a graded notebook that did not count as usual.

    ``kind`` is ``timeout`` (stopped at the time limit per cell), ``kernel died`` (the
    kernel died in it: grading went on in a new kernel), ``deleted`` (a graded
    or read-only cell missing from the notebook handed in; a graded one scores 0) or
    ``edited`` (a read-only cell changed by the student: graded with the original).
    ``cell`` is the nbgrader id (``cell N`` for a plain cell), ``where`` names it for
    people, ``exercise`` is the exercise whose items it affects (for a plain cell that
    timed out, the next one), ``points`` those of a graded cell (None for other cells).
    """

    kind: str
    cell: str
    where: str
    exercise: int | None
    reason: str
    points: float | None = None


def _read(path: Path):
    """A notebook without nbformat's validation, which takes longer than reading a class's worth of them."""
    import nbformat

    try:
        notebook = nbformat.v4.reads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, TypeError, AttributeError):  # a notebook nbgrader could not read was never graded
        return None
    return notebook if isinstance(notebook.get("cells"), list) else None


def cell_issues(course: Path, student: str, assignment: str) -> list[CellIssue]:
    """The cells of a graded submission that timed out, were deleted, or were read-only and edited.

    Read from the autograded notebook (timeouts, cells present), the instructor
    version (graded cells) and the copy that was graded (``.grading/submitted``,
    edits of read-only cells, which nbgrader undoes before running).
    """
    from nbgrader.utils import compute_checksum

    course = Path(course)
    graded = _read(course / "autograded" / student / assignment / f"{assignment}.ipynb")
    source = _read(course / "source" / assignment / f"{assignment}.ipynb")
    if graded is None or source is None:
        return []
    issues = []
    for index, cell in enumerate(graded.cells):
        stops = [output for output in cell.get("outputs", [])
                 if output.get("output_type") == "error" and output.get("ename") in (TIMEOUT_ERROR, KERNEL_DIED)]
        if not stops:
            continue
        exercise = _exercise(cell)
        if exercise is None:
            exercise = next((_exercise(later) for later in graded.cells[index + 1:] if _exercise(later)), None)
        where = _describe(cell, index)
        if stops[0]["ename"] == KERNEL_DIED:
            kind, what = "kernel died", stops[0].get("evalue")
        else:  # nbgrader's own message (a notebook graded outside make autograde) names no limit
            kind, what = "timeout", stops[0].get("evalue") or "timed out: stopped at the time limit per cell"
        issues.append(CellIssue(kind, _meta(cell).get("grade_id") or f"cell {index + 1}", where, exercise,
                                f"{where}: {what}"))
    present = {_meta(cell).get("grade_id") for cell in graded.cells}
    for index, cell in enumerate(source.cells):
        meta = _meta(cell)
        if (meta.get("grade") or meta.get("locked")) and meta["grade_id"] not in present:
            if meta.get("grade"):
                where = _describe(cell, index)
                issues.append(CellIssue("deleted", meta["grade_id"], where, _exercise(cell),
                                        f"{where}: deleted from the notebook handed in, not run: 0 points",
                                        float(meta.get("points", 0))))
            else:  # nbgrader restores an edited read-only cell, not a deleted one
                where = f"read-only cell {meta['grade_id']}"
                issues.append(CellIssue("deleted", meta["grade_id"], where, _exercise(cell),
                                        f"{where}: deleted from the notebook handed in, so the cells after it "
                                        f"ran without it"))
    handed_in = _read(course / ".grading" / "submitted" / student / assignment / f"{assignment}.ipynb")
    for index, cell in enumerate(handed_in.cells if handed_in is not None else []):
        meta = _meta(cell)
        if meta.get("locked") and meta.get("checksum") and meta["checksum"] != compute_checksum(cell):
            where = _describe(cell, index) if _exercise(cell) else f"read-only cell {meta.get('grade_id')}"
            issues.append(CellIssue("edited", meta.get("grade_id", ""), where, _exercise(cell),
                                    f"{where}: edited, graded with the original"))
    return issues


@dataclass
class GradingReport:
    """What one ``autograde`` run did, for what it selected."""

    #: How the kernels ran: confined or not.
    sandbox: Confinement | None = None
    #: The submissions selected for grading, in the order they are graded.
    todo: list[Submission] = field(default_factory=list)
    graded: list[Submission] = field(default_factory=list)
    #: Submissions nbgrader could not grade, with the reason in one line.
    failed: list[tuple[Submission, str]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    #: (student, assignment) pairs whose grades were removed: their folder is gone.
    removed: list[tuple[str, str]] = field(default_factory=list)
    #: The cells of each graded (student, assignment) that timed out, were deleted or edited.
    issues: dict[tuple[str, str], list[CellIssue]] = field(default_factory=dict)
    #: Files of the selected students that no assignment claims, left out of an assignment selection.
    unattributed: int = 0

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


def _prune(course: Path, present: set[tuple[str, str]], students: set[str]) -> list[tuple[str, str]]:
    """Forget every graded submission whose notebook is no longer handed in, and keep ``students`` (those
    with a folder in ``submitted/``) as the gradebook's students; returns the forgotten (student, assignment).

    A student who handed in only refused files stays, with no submission, so formgrader
    shows the same total as ``grades-totals.csv`` (0 of the course's points). Formgrader
    names students "last name, first name": one without names gets the id as last
    name, so its list does not read "None, None".
    """
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
            if not student.submissions and student.id not in students:
                gradebook.remove_student(student.id)
        for student in sorted(students):
            record = gradebook.update_or_create_student(student)
            if record.first_name is None and record.last_name is None:
                gradebook.update_or_create_student(student, last_name=student, first_name="")
    return sorted(removed)


def _failures_file(course: Path) -> Path:
    """Where the submissions nbgrader failed to grade are remembered: the gradebook holds only graded ones."""
    return course / ".grading" / "failed.json"


def _record_failure(course: Path, submission: Submission, reason: str | None) -> None:
    """Remember (or, with ``reason=None``, forget) that nbgrader could not grade a submission."""
    path = _failures_file(course)
    failures = json.loads(path.read_text()) if path.exists() else {}
    key = f"{submission.student}/{submission.assignment}"
    if reason is None:
        if key not in failures:
            return
        del failures[key]
    else:
        failures[key] = {"student": submission.student, "assignment": submission.assignment,
                         "path": str(submission.path), "reason": f"not graded, nbgrader failed: {reason}"}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(failures, indent=1, sort_keys=True) + "\n")


@dataclass(frozen=True)
class NotGraded:
    """A notebook handed in that has no grades, and why (``assignment`` is None when no assignment claims it)."""

    student: str
    assignment: str | None
    path: Path
    reason: str


def not_graded(course: Path) -> list[NotGraded]:
    """Every notebook now under ``submitted/`` that is not graded: refused files and nbgrader failures.

    Files in ``submitted/`` itself (no student) and spare copies beside a graded
    notebook are left out.
    """
    course = Path(course).resolve()
    found, problems = find_submissions(course / "submitted", _assignment_cells(course))
    refused = [NotGraded(problem.student, problem.assignment, problem.path, problem.reason) for problem in problems
               if not problem.spare and problem.student != "?"]
    path = _failures_file(course)
    failures = json.loads(path.read_text()) if path.exists() else {}
    with _gradebook(course) as gradebook:
        graded = {(submission.student.id, assignment.name) for assignment in gradebook.assignments
                  for submission in gradebook.assignment_submissions(assignment.name)}
    handed_in = {(submission.student, submission.assignment): submission.path for submission in found}
    for failure in failures.values():
        key = (failure["student"], failure["assignment"])
        if key in handed_in and key not in graded:
            refused.append(NotGraded(*key, handed_in[key], failure["reason"]))
    return sorted(refused, key=lambda item: (item.student, item.assignment or "", str(item.path)))


def autograde(course: Path, assignments: list[str] | None = None, students: list[str] | None = None,
              timeout: int = CELL_TIMEOUT, memory_gb: float = DEFAULT_MEMORY_GB,
              on_start: Callable[[GradingReport], None] | None = None,
              on_graded: Callable[[GradingReport, Submission], None] | None = None) -> GradingReport:
    """Autograde the submissions under ``submitted/``, then write ``grades.csv`` and ``grades-totals.csv``.

    ``assignments`` (name prefixes) and ``students`` (ids) restrict what is graded
    and reported; by default everything is graded again. Each notebook runs from top
    to bottom in nbgrader's kernel with the locked cells (parameters, tests with
    their hidden part) restored from the gradebook; a cell still running after
    ``timeout`` seconds is stopped. The kernel runs in a sandbox (:mod:`sandbox`)
    with an address space of ``memory_gb`` GB when bubblewrap is available, else
    unconfined (``report.sandbox`` says which); a kernel that dies costs the cell it
    died in, and the rest is graded in a new one. A notebook under another name than
    ``<assignment>.ipynb`` is graded as that assignment's when it matches one
    unambiguously; other files are reported and left out, and one submission that
    nbgrader cannot grade does not stop the others. Grades of submissions that are
    no longer in ``submitted/`` are removed, whatever the selection, so the tables
    never hold stale rows. ``on_start`` is called once what will be graded is known,
    ``on_graded`` after each submission (graded or failed); the tables are written
    even when the run is interrupted.
    """
    require({"nbgrader": "nbgrader"}, "classroom", "make autograde")
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1:
        raise ValueError(f"the time limit per cell must be a whole number of seconds, at least 1; got {timeout!r}")
    course = course.resolve()
    if not (course / "gradebook.db").exists():
        raise FileNotFoundError(f"no gradebook in {course}: run `make assignments` first")
    _grading_environment(course)
    sandbox = confinement(course, memory_gb)
    with quiet():
        cells = _assignment_cells(course)
        found, problems = find_submissions(course / "submitted", cells)
        chosen_assignments = select(assignments, sorted(cells), "assignment")
        handed_in = sorted({submission.student for submission in found} | {problem.student for problem in problems
                                                                           if problem.student != "?"})
        chosen_students = select_students(students, handed_in, course / "submitted")
        if not found and not problems:
            # Nothing handed in at all (or the wrong folder): keep every grade the gradebook holds.
            raise FileNotFoundError(f"nothing to grade: put each student's notebook at "
                                    f"{course}/submitted/<student>/<assignment>/<assignment>.ipynb")
        report = GradingReport(sandbox=sandbox)
        for problem in problems:
            if students and problem.student not in chosen_students:
                continue
            if assignments and problem.assignment not in chosen_assignments:
                if problem.assignment is None:  # it could be any assignment's: counted, and listed in the tables
                    report.unattributed += 1
                continue
            report.problems.append(problem)
        report.removed = _prune(course, {(submission.student, submission.assignment) for submission in found},
                                set(handed_in))
        report.todo = [submission for submission in found
                       if submission.student in chosen_students and submission.assignment in chosen_assignments]
        if not report.todo and not report.problems and (students or assignments):
            raise ValueError(f"no submission of {', '.join(chosen_students)} for {', '.join(chosen_assignments)}")
        if on_start is not None:
            on_start(report)
        staging = course / ".grading" / "submitted"
        api = _api(course, staging, timeout, sandbox)
        try:
            for submission in report.todo:
                _stage(submission, staging)
                result = api.autograde(submission.assignment, submission.student, force=True, create=True)
                if result.get("success"):
                    report.graded.append(submission)
                    report.issues[(submission.student, submission.assignment)] = cell_issues(
                        course, submission.student, submission.assignment)
                    _record_failure(course, submission, None)
                else:
                    reason = failure_reason(result)
                    report.failed.append((submission, reason))
                    with _gradebook(course) as gradebook:
                        _forget(course, gradebook, submission.student, submission.assignment)
                    _record_failure(course, submission, reason)
                if on_graded is not None:
                    on_graded(report, submission)
        finally:
            export_grades(course)
    return report


# --- written answers ------------------------------------------------------------------


def answers_to_grade(course: Path, assignments: list[str] | None = None,
                    students: list[str] | None = None) -> list[dict]:
    """The written answers awaiting the teacher, with the student's text from the autograded notebook."""
    course = Path(course).resolve()
    scores = score_table(course)
    waiting = scores[scores["status"] == "to grade"]
    if assignments:
        waiting = waiting[waiting["assignment"].isin(select(assignments, sorted(set(scores["assignment"].dropna())),
                                                            "graded assignment"))]
    if students:
        waiting = waiting[waiting["student"].isin(select_students(students, sorted(set(scores["student"])),
                                                                  course / "autograded"))]
    answers = []
    for row in waiting.itertuples():
        notebook = _read(course / "autograded" / row.student / row.assignment / f"{row.assignment}.ipynb")
        text = next((cell.source for cell in (notebook.cells if notebook else [])
                     if _meta(cell).get("grade_id") == row.cell), "")
        answers.append({"student": row.student, "assignment": row.assignment, "cell": row.cell,
                        "exercise": row.exercise, "points": row.points, "text": text})
    return answers


def grade_answer(course: Path, student: str, cell: str, score: float, comment: str | None = None,
                 assignments: list[str] | None = None) -> dict:
    """Give ``score`` points to the graded cell ``cell`` of ``student``, as formgrader's grading does.

    The gradebook ends as formgrader's grade and comment handlers (nbgrader 0.9,
    ``formgrader/apihandlers.py``) leave it: the manual score set, the "needs manual
    grade" flag cleared, the comment (if given) stored as the teacher's; extra credit
    is kept. Then the tables are rewritten. Returns nbgrader's record of the grade.
    """
    import math

    from nbgrader.api import MissingEntry

    require({"nbgrader": "nbgrader"}, "classroom", "make grade-answer")
    course = Path(course).resolve()
    if not (course / "gradebook.db").exists():
        raise FileNotFoundError(f"no gradebook in {course}: run `make assignments` first")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise ValueError(f"the score must be a number, got {score!r}")
    with quiet(), _gradebook(course) as gradebook:
        names = select(assignments, sorted(assignment.name for assignment in gradebook.assignments), "assignment")
        cells = [(name, notebook.name, grade_cell) for name in names
                 for notebook in gradebook.find_assignment(name).notebooks
                 for grade_cell in notebook.grade_cells if grade_cell.name == cell]
        if not cells:
            written = sorted(grade_cell.name for name in names for notebook in gradebook.find_assignment(name).notebooks
                             for grade_cell in notebook.grade_cells if grade_cell.cell_type == "markdown")
            raise ValueError(f"no graded cell {cell!r}; the written answers are {', '.join(written) or 'none'}")
        if len(cells) > 1:
            raise ValueError(f"{cell} is a cell of {', '.join(name for name, _, _ in cells)}: name the assignment")
        name, notebook, grade_cell = cells[0]
        try:
            grade = gradebook.find_grade(cell, notebook, name, student)
        except MissingEntry:
            raise ValueError(f"{student} has no graded submission of {name}") from None
        if not 0 <= score <= grade.max_score:
            worth = f"{grade.max_score:g} point" + ("" if grade.max_score == 1 else "s")
            raise ValueError(f"{cell} is worth {worth}: the score must be between 0 and {grade.max_score:g}, "
                             f"got {score:g}")
        if comment is not None:
            try:
                gradebook.find_comment(cell, notebook, name, student).manual_comment = comment
            except MissingEntry:
                raise ValueError(f"{cell} is a test, not an answer: comments go on answer cells") from None
        grade.manual_score = float(score)
        grade.needs_manual_grade = grade.manual_score is None and grade.auto_score is None
        gradebook.db.commit()
        record = grade.to_dict()
    export_grades(course)
    return record


# --- the grade tables -----------------------------------------------------------------

TABLE_COLUMNS = ["student", "assignment", "exercise", "cell", "kind", "score", "points", "status", "reason"]


def _shown(course: Path, path: Path) -> str:
    """A path under ``submitted/`` as the console and the tables show it: ``bob/01_name/file.ipynb``."""
    with contextlib.suppress(ValueError):
        return Path(path).resolve().relative_to((course / "submitted").resolve()).as_posix()
    return str(path)


def _submission_rows(course: Path, assignment: str, submission) -> list[dict]:
    """The rows of ``score_table`` for one submission of the gradebook."""
    issues = cell_issues(course, submission.student.id, assignment)
    deleted = {issue.cell: issue for issue in issues if issue.kind == "deleted"}
    stopped: dict[int, CellIssue] = {}
    for issue in issues:
        if issue.kind in ("timeout", "kernel died") and issue.exercise is not None:
            stopped.setdefault(issue.exercise, issue)
    rows = []
    for notebook in submission.notebooks:
        for grade in notebook.grades:
            manual = grade.cell.cell_type == "markdown"
            number = _EXERCISE.search(grade.cell.name + "_")
            exercise = int(number.group(1)) if number else None
            reason = None
            if grade.cell.name in deleted and grade.manual_score is None:
                status, score, reason = "deleted", float(grade.score), deleted[grade.cell.name].reason
            elif manual and grade.manual_score is None and grade.auto_score is None:
                status, score = "to grade", None
            elif manual and grade.manual_score is None:
                status, score = "no answer", float(grade.score)
            elif not manual and grade.manual_score is None and exercise in stopped:
                status, score, reason = stopped[exercise].kind, float(grade.score), stopped[exercise].reason
            else:
                status, score = "graded", float(grade.score)
            rows.append({"student": submission.student.id, "assignment": assignment, "exercise": exercise,
                         "cell": grade.cell.name, "kind": "manual" if manual else "auto", "score": score,
                         "points": float(grade.max_score), "status": status, "reason": reason})
    return rows


def _table(rows: list[dict]):
    import pandas as pd

    table = pd.DataFrame(rows, columns=TABLE_COLUMNS).astype({"exercise": "Int64", "score": "float",
                                                              "points": "float"})
    return table.sort_values(["student", "assignment", "exercise", "kind"], ignore_index=True)


def submission_table(course: Path, student: str, assignment: str):
    """The rows of ``score_table`` for one graded submission (empty if it is not in the gradebook)."""
    from nbgrader.api import MissingEntry

    course = Path(course).resolve()
    with quiet(), _gradebook(course) as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            return _table([])
        return _table(_submission_rows(course, assignment, submission))


def score_table(course: Path):
    """One row per graded item of every submission, and one per notebook handed in but not graded.

    ``exercise`` is the exercise number (from the cell id ``nbNN_exK_...``), ``cell``
    the nbgrader cell id, ``kind`` ``auto`` (a test cell) or ``manual`` (a written
    answer), and ``status`` ``graded``, ``to grade`` (a written answer awaiting the
    teacher: its score is empty), ``no answer`` (left as handed out: 0 points),
    ``timeout`` (a cell of the exercise was stopped at the time limit), ``kernel died``
    (the kernel died in a cell of the exercise), ``deleted``
    (the graded cell is missing from the notebook: 0 points) or ``not graded`` (the
    notebook was refused or nbgrader failed: no score, the points it would carry).
    ``reason`` says why for the last three.
    """
    course = Path(course).resolve()
    rows = []
    points: dict[str, float] = {}
    with quiet(), _gradebook(course) as gradebook:
        for assignment in gradebook.assignments:
            points[assignment.name] = float(sum(cell.max_score for notebook in assignment.notebooks
                                                for cell in notebook.grade_cells))
            for submission in gradebook.assignment_submissions(assignment.name):
                rows += _submission_rows(course, assignment.name, submission)
    for item in not_graded(course):
        rows.append({"student": item.student, "assignment": item.assignment, "exercise": None, "cell": None,
                     "kind": None, "score": None, "points": points.get(item.assignment), "status": "not graded",
                     "reason": f"{_shown(course, item.path)} {item.reason}"})
    return _table(rows)


def totals_table(course: Path, scores=None):
    """One row per student: the score of each assignment handed in, then the course totals.

    An assignment handed in but not graded is empty and listed, with the reason, in
    ``not_graded``; ``submitted`` counts the assignments handed in, graded or not.
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
        refused = mine[mine["status"] == "not graded"]
        graded = mine[mine["status"] != "not graded"]
        row = {"student": student}
        per_assignment = graded.groupby("assignment")["score"].sum(min_count=0)
        for name in names:
            row[name] = float(per_assignment[name]) if name in per_assignment else None
        auto, manual = graded[graded["kind"] == "auto"], graded[graded["kind"] == "manual"]
        row.update({"submitted": int(mine["assignment"].nunique()),
                    "auto": float(auto["score"].sum()), "auto_points": course_points["auto"],
                    "manual": float(manual["score"].sum()), "manual_points": course_points["manual"],
                    "to_grade": int((graded["status"] == "to grade").sum()),
                    "score": float(graded["score"].sum()),
                    "points": course_points["auto"] + course_points["manual"],
                    "not_graded": "; ".join(refused["reason"]) or None})
        rows.append(row)
    columns = ["student", *names, "submitted", "auto", "auto_points", "manual", "manual_points", "to_grade",
               "score", "points", "not_graded"]
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
