"""Grading: submissions by nbgrader (``make autograde``), written answers by the teacher (``make grade-answer``).

Grading works on a copy of each submission under ``.grading/submitted/`` (the file given
the name nbgrader expects), so ``submitted/`` is never changed. The two commands as the teacher
runs them, what they print and their exit status, are :func:`autograde_command` and :func:`grade_answer_command`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..common import nbgrader_meta, select, select_students
from .base import CELL_TIMEOUT, course_folder, failure_reason, grading_environment, nbgrader_api, open_gradebook, quiet
from .grades import assignment_cells, cell_issues, export_grades, failures, score_table
from .sandbox import DEFAULT_MEMORY_GB, Confinement, confinement, grading_execute
from .submissions import Problem, Submission, find_submissions, read_notebook, shown_path

__all__ = ["NOT_ALL_GRADED", "GradingReport", "answers_to_grade", "autograde", "autograde_command", "grade_answer",
           "grade_answer_command"]

#: The exit status of ``autograde`` when it graded what it could but some notebook handed
#: in was not graded (2 is a command that could not run at all: a selection that matches
#: nothing, no gradebook; 1 a tool that failed).
NOT_ALL_GRADED = 3


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
    #: Files of the selected students that no assignment claims, left out of an assignment selection.
    unattributed: int = 0

    @property
    def complete(self) -> bool:
        """Every notebook handed in was graded (spare copies beside a graded notebook aside)."""
        return not self.failed and all(problem.spare for problem in self.problems)


def _stage(submission: Submission, staging: Path) -> None:
    """Copy a submission to ``staging/<student>/<assignment>/<assignment>.ipynb`` with its timestamp."""
    folder = staging / submission.student / submission.assignment
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shutil.copy2(submission.path, folder / f"{submission.assignment}.ipynb")
    timestamp = submission.path.parent / "timestamp.txt"
    if timestamp.is_file() and not timestamp.is_symlink():  # a link could point at any file the teacher can read
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


def _record_failure(course: Path, submission: Submission, reason: str | None) -> None:
    """Remember (or, with ``reason=None``, forget) that nbgrader could not grade a submission."""
    path, failed = failures(course)
    key = f"{submission.student}/{submission.assignment}"
    if reason is None:
        if key not in failed:
            return
        del failed[key]
    else:
        failed[key] = {"student": submission.student, "assignment": submission.assignment,
                       "path": str(submission.path), "reason": f"not graded, nbgrader failed: {reason}"}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(failed, indent=1, sort_keys=True) + "\n")


def _prune(course: Path, present: set[tuple[str, str]], students: set[str]) -> list[tuple[str, str]]:
    """Forget every graded submission whose notebook is no longer handed in, and keep ``students`` (those
    with a folder in ``submitted/``) as the gradebook's students; returns the forgotten (student, assignment).

    A student who handed in only refused files stays, with no submission, so formgrader
    shows the same total as ``grades-totals.csv`` (0 of the course's points). Formgrader
    names students "last name, first name": one without names gets the id as last
    name, so its list does not read "None, None".
    """
    removed = []
    with open_gradebook(course) as gradebook:
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


def autograde(course: Path, assignments: list[str] | None = None, students: list[str] | None = None,
              timeout: int = CELL_TIMEOUT, memory_gb: float = DEFAULT_MEMORY_GB,
              on_start: Callable[[GradingReport], None] | None = None,
              on_graded: Callable[[GradingReport, Submission], None] | None = None) -> GradingReport:
    """Autograde the submissions under ``submitted/``, then write ``grades.csv`` and ``grades-totals.csv``.

    ``assignments`` (name prefixes) and ``students`` (ids) restrict what is graded
    and reported; by default everything is graded again. Each notebook runs from top
    to bottom in nbgrader's kernel with the locked cells (parameters, tests with
    their hidden part) restored from the gradebook; a cell still running after
    ``timeout`` seconds is stopped. The kernel runs in a sandbox (:mod:`.sandbox`)
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
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1:
        raise ValueError(f"the time limit per cell must be a whole number of seconds, at least 1; got {timeout!r}")
    course = course_folder(course, "make autograde")
    grading_environment(course)
    sandbox = confinement(memory_gb)
    with quiet():
        cells = assignment_cells(course)
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
        api = nbgrader_api(course, staging, timeout, grading_execute(), sandbox)
        try:
            for submission in report.todo:
                _stage(submission, staging)
                result = api.autograde(submission.assignment, submission.student, force=True, create=True)
                if result.get("success"):
                    report.graded.append(submission)
                    _record_failure(course, submission, None)
                else:
                    reason = failure_reason(result)
                    report.failed.append((submission, reason))
                    with open_gradebook(course) as gradebook:
                        _forget(course, gradebook, submission.student, submission.assignment)
                    _record_failure(course, submission, reason)
                if on_graded is not None:
                    on_graded(report, submission)
        finally:
            export_grades(course)
    return report


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
        notebook = read_notebook(course / "autograded" / row.student / row.assignment / f"{row.assignment}.ipynb")
        text = next((cell.source for cell in (notebook.cells if notebook else [])
                     if nbgrader_meta(cell).get("grade_id") == row.cell), "")
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

    course = course_folder(course, "make grade-answer")
    from nbgrader.api import MissingEntry

    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise ValueError(f"the score must be a number, got {score!r}")
    with quiet(), open_gradebook(course) as gradebook:
        names = select(assignments, sorted(assignment.name for assignment in gradebook.assignments), "assignment")
        every = [(name, notebook.name, grade_cell) for name in names
                 for notebook in gradebook.find_assignment(name).notebooks for grade_cell in notebook.grade_cells]
        cells = [(name, notebook, grade_cell) for name, notebook, grade_cell in every if grade_cell.name == cell]
        if not cells:
            written = sorted(grade_cell.name for _, _, grade_cell in every if grade_cell.cell_type == "markdown")
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


def _grading_line(folder: Path, student: str, assignment: str) -> str:
    """The console line of one graded notebook: its tests' and written answers' points."""
    rows = score_table(folder, (student, assignment))
    auto, manual = rows[rows["kind"] == "auto"], rows[rows["kind"] == "manual"]
    line = f"{student:<16} {assignment:<28} tests {auto['score'].sum():g} / {auto['points'].sum():g}"
    if len(manual):
        waiting = manual[manual["status"] == "to grade"]
        line += f", written {manual['score'].sum():g} / {manual['points'].sum():g}"
        if len(waiting):
            line += f" ({len(waiting)} to grade)"
    return line


def autograde_command(folder: Path, assignments: list[str] | None, students: list[str] | None, timeout: int,
                      memory_gb: float) -> int:
    """make autograde: :func:`autograde`, a line per notebook; :data:`NOT_ALL_GRADED` if one was not graded."""
    start = time.perf_counter()
    shown = functools.partial(shown_path, folder)

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
        issues = cell_issues(folder.resolve(), submission.student, submission.assignment)
        line = _grading_line(folder, submission.student, submission.assignment)
        for kind in ("timeout", "kernel died", "limit"):
            stopped = sorted({issue.exercise for issue in issues if issue.kind == kind and issue.exercise})
            if any(issue.kind == kind for issue in issues):
                line += f"; {kind}" + (f" in exercise {', '.join(map(str, stopped))}" if stopped else "")
        deleted = [issue.cell for issue in issues if issue.kind == "deleted"]
        if deleted:
            line += f"; deleted {', '.join(deleted)}"
        print(line, flush=True)
        for issue in issues:
            if issue.kind in ("timeout", "kernel died", "limit"):
                named = "" if issue.cell.startswith("cell ") else f" (cell {issue.cell})"
                after = "; the cells after it ran without its results" if issue.kind == "timeout" else ""
                warn(f"{shown(submission.path)}: {issue.reason}{named}{after}")
            elif issue.kind == "deleted" and issue.points is not None:
                warn(f"{shown(submission.path)}: cell {issue.cell} ({issue.where}, {issue.points:g} points) "
                     f"was deleted from the notebook: 0 points")
            else:
                warn(f"{shown(submission.path)}: {issue.reason}")

    report = autograde(folder, assignments, students, timeout=timeout, memory_gb=memory_gb, on_start=started,
                       on_graded=graded)
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


def grade_answer_command(folder: Path, assignments: list[str] | None, students: list[str] | None, answer: str | None,
                         score: str | None, comment: str | None) -> int:
    """make grade-answer: grade one written answer (:func:`grade_answer`), or list those awaiting the teacher."""
    if answer is None and score is None:
        answers = answers_to_grade(folder, assignments, students)
        for item in answers:
            print(f"{item['student']} {item['assignment']} {item['cell']} "
                  f"(exercise {item['exercise']}, {item['points']:g} points):")
            print("\n".join(f"    {line}" for line in (item["text"].strip() or "(empty)").splitlines()))
        print(f"{len(answers)} written answer(s) to grade: make grade-answer STUDENT=<student> ANSWER=<cell> "
              f"SCORE=<points> [COMMENT=<text>]")
        return 0
    if answer is None or score is None or len(students or []) != 1:
        raise ValueError("grading an answer needs one STUDENT=, ANSWER= (the cell id) and SCORE=")
    try:
        points = float(score)
    except ValueError:
        raise ValueError(f"SCORE must be a number, got {score!r}") from None
    grade = grade_answer(folder, students[0], answer, points, comment, assignments)
    waiting = len(answers_to_grade(folder))
    print(f"{grade['student']} {grade['assignment']} {grade['name']}: {grade['manual_score']:g} / "
          f"{grade['max_score']:g}; {waiting} written answer(s) still to grade; tables rewritten in {folder}")
    return 0
