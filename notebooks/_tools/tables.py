"""The grade tables, read from the gradebook: one row per graded item, one per student (``make export``)."""

from __future__ import annotations

import contextlib
from pathlib import Path

from course import course_folder, open_gradebook, quiet
from submissions import EXERCISE, CellIssue, cell_issues, not_graded

__all__ = ["export_grades", "score_table", "shown_path", "submission_table", "totals_table"]


def shown_path(course: Path, path: Path) -> str:
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


def submission_table(course: Path, student: str, assignment: str):
    """The rows of ``score_table`` for one graded submission (empty if it is not in the gradebook)."""
    from nbgrader.api import MissingEntry

    course = Path(course).resolve()
    with quiet(), open_gradebook(course) as gradebook:
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
    with quiet(), open_gradebook(course) as gradebook:
        for assignment in gradebook.assignments:
            points[assignment.name] = float(sum(cell.max_score for notebook in assignment.notebooks
                                                for cell in notebook.grade_cells))
            for submission in gradebook.assignment_submissions(assignment.name):
                rows += _submission_rows(course, assignment.name, submission)
    for item in not_graded(course):
        rows.append({"student": item.student, "assignment": item.assignment, "exercise": None, "cell": None,
                     "kind": None, "score": None, "points": points.get(item.assignment), "status": "not graded",
                     "reason": f"{shown_path(course, item.path)} {item.reason}"})
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
