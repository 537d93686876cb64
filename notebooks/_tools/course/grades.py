"""The grades as grading left them: the cells that did not count as usual, the notebooks not graded, the tables.

:func:`cell_issues` lists the cells of a graded submission stopped at the time limit, killed
with the kernel, deleted, or read-only and edited; :func:`not_graded` the notebooks handed in
that have no grades (refused, or nbgrader failed: :func:`failures`); then the grade tables.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..common import nbgrader_meta
from .base import TIMEOUT_ERROR, course_folder, open_gradebook, quiet
from .sandbox import KERNEL_DIED
from .submissions import EXERCISE, exercise_of, find_submissions, notebook_cell_ids, read_notebook, shown_path

__all__ = ["CellIssue", "NotGraded", "assignment_cells", "cell_issues", "export_command", "export_grades", "failures",
           "not_graded", "score_table", "totals_table"]


def _describe(cell, index: int) -> str:
    """A cell as a student finds it: "exercise 2, your answer", or "cell 17 (`time.sleep(9)`...)"."""
    meta = nbgrader_meta(cell)
    number = exercise_of(cell)
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
    kernel died in it: grading went on in a new kernel), ``limit`` (the kernel reached a
    cap of processes, memory or output in it: :mod:`.sandbox`), ``deleted`` (a graded
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


def cell_issues(course: Path, student: str, assignment: str) -> list[CellIssue]:
    """The cells of a graded submission that timed out, reached a cap, were deleted, or were read-only and edited.

    Read from the autograded notebook (timeouts, cells present), the instructor
    version (graded cells) and the copy that was graded (``.grading/submitted``,
    edits of read-only cells, which nbgrader undoes before running).
    """
    from nbgrader.utils import compute_checksum

    course = Path(course)
    graded = read_notebook(course / "autograded" / student / assignment / f"{assignment}.ipynb")
    source = read_notebook(course / "source" / assignment / f"{assignment}.ipynb")
    if graded is None or source is None:
        return []
    issues = []
    for index, cell in enumerate(graded.cells):
        for note in cell.get("metadata", {}).get("gbai_limits", []):
            exercise = exercise_of(cell) or next((exercise_of(later) for later in graded.cells[index + 1:]
                                                  if exercise_of(later)), None)
            issues.append(CellIssue("limit", nbgrader_meta(cell).get("grade_id") or f"cell {index + 1}",
                                    _describe(cell, index), exercise, f"{_describe(cell, index)}: {note}"))
        stops = [output for output in cell.get("outputs", [])
                 if output.get("output_type") == "error" and output.get("ename") in (TIMEOUT_ERROR, KERNEL_DIED)]
        if not stops:
            continue
        exercise = exercise_of(cell)
        if exercise is None:
            exercise = next((exercise_of(later) for later in graded.cells[index + 1:] if exercise_of(later)), None)
        where = _describe(cell, index)
        if stops[0]["ename"] == KERNEL_DIED:
            kind, what = "kernel died", stops[0].get("evalue")
        else:  # nbgrader's own message (a notebook graded outside make autograde) names no limit
            kind, what = "timeout", stops[0].get("evalue") or "timed out: stopped at the time limit per cell"
        issues.append(CellIssue(kind, nbgrader_meta(cell).get("grade_id") or f"cell {index + 1}", where, exercise,
                                f"{where}: {what}"))
    present = {nbgrader_meta(cell).get("grade_id") for cell in graded.cells}
    for index, cell in enumerate(source.cells):
        meta = nbgrader_meta(cell)
        if (meta.get("grade") or meta.get("locked")) and meta["grade_id"] not in present:
            scored = bool(meta.get("grade"))
            # nbgrader restores an edited read-only cell, not a deleted one.
            where = _describe(cell, index) if scored else f"read-only cell {meta['grade_id']}"
            outcome = "not run: 0 points" if scored else "so the cells after it ran without it"
            issues.append(CellIssue("deleted", meta["grade_id"], where, exercise_of(cell),
                                    f"{where}: deleted from the notebook handed in, {outcome}",
                                    float(meta.get("points", 0)) if scored else None))
    handed_in = read_notebook(course / ".grading" / "submitted" / student / assignment / f"{assignment}.ipynb")
    for index, cell in enumerate(handed_in.cells if handed_in is not None else []):
        meta = nbgrader_meta(cell)
        if meta.get("locked") and meta.get("checksum") and meta["checksum"] != compute_checksum(cell):
            where = _describe(cell, index) if exercise_of(cell) else f"read-only cell {meta.get('grade_id')}"
            issues.append(CellIssue("edited", meta.get("grade_id", ""), where, exercise_of(cell),
                                    f"{where}: edited, graded with the original"))
    return issues


def assignment_cells(course: Path) -> dict[str, set[str]]:
    """Each assignment of the gradebook with the cell ids of its notebook (from its source version)."""
    with open_gradebook(course) as gradebook:
        names = sorted(assignment.name for assignment in gradebook.assignments)
    return {name: notebook_cell_ids(course / "source" / name / f"{name}.ipynb") or set() for name in names}


def failures(course: Path) -> tuple[Path, dict]:
    """The file that remembers what nbgrader failed to grade (the gradebook holds only graded work), and its content."""
    path = course / ".grading" / "failed.json"
    return path, json.loads(path.read_text()) if path.exists() else {}


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
    found, problems = find_submissions(course / "submitted", assignment_cells(course))
    refused = [NotGraded(problem.student, problem.assignment, problem.path, problem.reason) for problem in problems
               if not problem.spare and problem.student != "?"]
    _, failed = failures(course)
    with open_gradebook(course) as gradebook:
        graded = {(submission.student.id, assignment.name) for assignment in gradebook.assignments
                  for submission in gradebook.assignment_submissions(assignment.name)}
    handed_in = {(submission.student, submission.assignment): submission.path for submission in found}
    for failure in failed.values():
        key = (failure["student"], failure["assignment"])
        if key in handed_in and key not in graded:
            refused.append(NotGraded(*key, handed_in[key], failure["reason"]))
    return sorted(refused, key=lambda item: (item.student, item.assignment or "", str(item.path)))



def _submission_rows(course: Path, assignment: str, submission) -> list[dict]:
    """The rows of ``score_table`` for one submission of the gradebook."""
    issues = cell_issues(course, submission.student.id, assignment)
    deleted = {issue.cell: issue for issue in issues if issue.kind == "deleted"}
    stopped: dict[int, CellIssue] = {}
    for issue in issues:
        if issue.kind in ("timeout", "kernel died", "limit") and issue.exercise is not None:
            stopped.setdefault(issue.exercise, issue)
    rows = []
    for notebook in submission.notebooks:
        for grade in notebook.grades:
            manual = grade.cell.cell_type == "markdown"
            number = EXERCISE.search(grade.cell.name + "_")
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

    columns = ["student", "assignment", "exercise", "cell", "kind", "score", "points", "status", "reason"]
    table = pd.DataFrame(rows, columns=columns).astype({"exercise": "Int64", "score": "float", "points": "float"})
    return table.sort_values(["student", "assignment", "exercise", "kind"], ignore_index=True)


def score_table(course: Path, only: tuple[str, str] | None = None):
    """One row per graded item of every submission, and one per notebook handed in but not graded.

    With ``only``, a (student, assignment), the graded items of that submission alone.
    ``exercise`` is the exercise number (from the cell id ``nbNN_exK_...``), ``cell``
    the nbgrader cell id, ``kind`` ``auto`` (a test cell) or ``manual`` (a written
    answer), and ``status`` ``graded``, ``to grade`` (a written answer awaiting the
    teacher: its score is empty), ``no answer`` (left as handed out: 0 points),
    ``timeout`` (a cell of the exercise was stopped at the time limit), ``kernel died``
    (the kernel died in a cell of the exercise), ``limit`` (a cell of the exercise reached a
    cap of processes, memory or output), ``deleted``
    (the graded cell is missing from the notebook: 0 points) or ``not graded`` (the
    notebook was refused or nbgrader failed: no score, the points it would carry).
    ``reason`` says why for the last three.
    """
    course = Path(course).resolve()
    rows = []
    points: dict[str, float] = {}
    with quiet(), open_gradebook(course) as gradebook:
        for assignment in gradebook.assignments:
            points[assignment.name] = float(sum(cell.max_score for notebook in assignment.notebooks
                                                for cell in notebook.grade_cells))
            for submission in gradebook.assignment_submissions(assignment.name):
                if only in (None, (submission.student.id, assignment.name)):
                    rows += _submission_rows(course, assignment.name, submission)
    for item in not_graded(course) if only is None else []:
        rows.append({"student": item.student, "assignment": item.assignment, "exercise": None, "cell": None,
                     "kind": None, "score": None, "points": points.get(item.assignment), "status": "not graded",
                     "reason": f"{shown_path(course, item.path)} {item.reason}"})
    return _table(rows)


def totals_table(course: Path, scores):
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
    with quiet(), open_gradebook(course) as gradebook:
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
    course = course_folder(course, "make export")
    scores = score_table(course)
    paths = course / "grades.csv", course / "grades-totals.csv"
    scores.to_csv(paths[0], index=False, float_format="%g")
    totals_table(course, scores).to_csv(paths[1], index=False, float_format="%g")
    return paths


def export_command(course: Path) -> int:
    """make export: :func:`export_grades`, and where the tables are."""
    per_item, per_student = export_grades(course)
    print(f"grades per item in {per_item}, per student in {per_student}")
    return 0
