"""Feedback pages for the graded submissions (``make feedback``).

nbgrader writes one HTML page per graded notebook, ``feedback/<student>/<assignment>/``.
Its own template loads MathJax 2 from a CDN, lets a wide figure overflow the page
and names every graded item "Test cell"; the template in ``feedback_template/``
extends it: equations are typeset by MathJax 3 from the package
``django-static-mathjax``, copied into each page's folder (hard links where the file
system allows, so a class costs one copy), figures are scaled to the page, and the
contents name each item by exercise with the message of a failed check.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from pathlib import Path

from ..common import copy_mathjax, mathjax_folder, nbgrader_meta, select, select_students
from .base import course_folder, failure_reason, grading_environment, nbgrader_api, quiet
from .grades import cell_issues, not_graded, score_table
from .submissions import exercise_of, read_notebook, shown_path

__all__ = ["feedback_command", "generate_feedback", "not_graded_page"]

TEMPLATES = Path(__file__).resolve().parent / "feedback_template"
#: What a feedback page needs from MathJax 3's es5 build: the TeX input with every
#: extension bundled and the HTML output, and that output's fonts.
_MATHJAX_PARTS = ("tex-chtml-full.js", "output/chtml/fonts/woff-v2")


def _link(source: str, target: str) -> None:
    """Put a hard link to the file ``source`` at ``target`` (a plain copy across file systems)."""
    if os.path.exists(target):
        os.unlink(target)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


#: What a placeholder for a deleted graded cell says where the cell was.
_DELETED = {"code": "# This check was deleted from the notebook you handed in, so it did not run: 0 points.",
            "markdown": "*This answer was deleted from the notebook you handed in: 0 points.*"}


def _placeholder(source_cell):
    """A stand-in for a graded cell missing from a submission, carrying its nbgrader id and points."""
    import nbformat

    make = nbformat.v4.new_code_cell if source_cell.cell_type == "code" else nbformat.v4.new_markdown_cell
    cell = make(_DELETED[source_cell.cell_type])
    meta = source_cell.metadata["nbgrader"]
    cell.metadata["nbgrader"] = {key: meta[key] for key in ("grade", "grade_id", "locked", "points", "schema_version",
                                                             "solution", "task") if key in meta}
    cell.metadata.nbgrader["gbai_deleted"] = True
    return cell


def _unplaced(text: str) -> str:
    """``text`` without the folders of its absolute paths: no path of the teacher's machine on a student's page
    (nbgrader's errors and Python's tracebacks and warnings name files by absolute path)."""
    # A path starts a line or follows a character that cannot end a name, or a colour code of a traceback.
    return re.sub(r"(^|[^\w.]|\x1b\[[0-9;]*m)/(?:[^\s/'\"\x1b]+/)+", r"\1", text, flags=re.MULTILINE)


def _preprocessors(course: Path):
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import GetGrades, NbGraderPreprocessor

    class MarkIssues(NbGraderPreprocessor):
        """Put back a stand-in for each deleted graded cell, mark the items of an exercise with a
        cell stopped at the time limit or killed with its kernel, and list them at the top of the
        page (those first)."""

        def preprocess(self, nb, resources):
            student, assignment = resources["nbgrader"]["student"], resources["nbgrader"]["assignment"]
            issues = cell_issues(course, student, assignment)
            source = read_notebook(course / "source" / assignment / f"{assignment}.ipynb")
            for issue in (issue for issue in issues
                          if issue.kind == "deleted" and issue.points is not None and source is not None):
                ids = [nbgrader_meta(cell).get("grade_id") for cell in source.cells]
                position = ids.index(issue.cell)
                present = [nbgrader_meta(cell).get("grade_id") for cell in nb.cells]
                before = next((present.index(grade_id) for grade_id in reversed(ids[:position])
                               if grade_id and grade_id in present), -1)
                nb.cells.insert(before + 1, _placeholder(source.cells[position]))
            for issue in (issue for issue in issues
                          if issue.kind in ("timeout", "kernel died", "limit") and issue.exercise is not None):
                for cell in nb.cells:
                    meta = nbgrader_meta(cell)
                    if meta.get("grade") and cell.cell_type == "code" and exercise_of(cell) == issue.exercise:
                        meta.setdefault("gbai_notes", []).append(issue.reason)
            for output in (output for cell in nb.cells for output in cell.get("outputs", [])):
                if output.get("output_type") == "error":
                    output.evalue = _unplaced(output.get("evalue", ""))
                    output.traceback = [_unplaced(line) for line in output.get("traceback", [])]
                elif output.get("output_type") == "stream" and output.get("name") == "stderr":
                    output.text = _unplaced(output.get("text", ""))
            order = {"kernel died": 0, "timeout": 0, "limit": 0, "deleted": 1, "edited": 2}
            resources["gbai_notices"] = [issue.reason for issue in sorted(issues, key=lambda item: order[item.kind])]
            return nb, resources

    class GetGradesAndStatus(GetGrades):
        """nbgrader's grades, plus a mark on the written answers the teacher has not graded yet."""

        def _get_score(self, cell, resources):
            super()._get_score(cell, resources)
            grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                              self.assignment_id, self.student_id)
            cell.metadata.nbgrader["gbai_to_grade"] = bool(
                cell.cell_type == "markdown" and grade.manual_score is None and grade.auto_score is None
                and not cell.metadata.nbgrader.get("gbai_deleted"))

    return [MarkIssues, GetGradesAndStatus, CSSHTMLHeaderPreprocessor]


#: What a student whose notebook was refused should do, by the start of the reason.
_ADVICE = {
    "holds several notebooks": "Keep only the notebook you want graded, under the name {expected}, and hand it in "
                               "again.",
    "is a Python script": "Hand in the notebook itself, the .ipynb file (in JupyterLab, right-click it in the file "
                          "browser and choose Download), named {expected}.",
    "matches no assignment": "This file is not one of the course's notebooks (or its cells lost their grading "
                             "marks, for instance when copied into a new notebook): hand in the notebook you were "
                             "given, with your answers in it.",
    "is not a readable notebook": "The file is damaged or is not a notebook: open it in JupyterLab to check, save "
                                  "it, and hand it in again as {expected}.",
    "holds the exercises of": "This is the notebook of another assignment: hand in {expected}.",
    "lies directly in": "Hand it in again as {expected}.",
    "is a symbolic link": "Hand in the notebook file itself, {expected}, not a link to it.",
    "is a folder whose name starts with a dot": "Ask your teacher to rename your folder to your id: a hidden "
                                                "folder is not graded.",
    "not graded, nbgrader failed": "Grading failed for a reason on your teacher's side; your teacher will grade "
                                   "it again, nothing to do for now.",
}


def not_graded_page(course: Path, item) -> Path:
    """Write the feedback page of a notebook handed in but not graded (``grades.NotGraded``): why, and what to do.

    It goes where the graded page would, ``feedback/<student>/<assignment>/<assignment>.html``
    (``not-graded/not-graded.html`` when no assignment claims the file).
    """
    import html

    name = item.assignment or "not-graded"
    expected = f"{item.assignment}.ipynb" if item.assignment else "the notebook's own name, NN_name.ipynb"
    advice = next((text for start, text in _ADVICE.items() if item.reason.startswith(start)),
                  "Hand in the notebook again as {expected}.").format(expected=expected)
    shown = shown_path(course, item.path)
    why = item.reason.removeprefix("not graded, ") if item.reason.startswith("not graded") else f"it {item.reason}"
    why = _unplaced(why)
    title = f"{item.assignment or 'A file you handed in'}: not graded"
    page = course / "feedback" / item.student / name / f"{name}.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(
        f"<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
        f"</head>\n<body>\n<h1>{html.escape(title)}</h1>\n"
        f"<p><strong>Your file <code>{html.escape(shown)}</code> was not graded</strong>: {html.escape(why)}.</p>\n"
        f"<p><strong>What to do:</strong> {html.escape(advice)}</p>\n"
        f"<p>Nothing of this file counts until it is graded.</p>\n</body>\n</html>\n", encoding="utf-8")
    return page


def generate_feedback(course: Path, assignments: list[str] | None = None,
                      students: list[str] | None = None) -> list[Path]:
    """Write the feedback page of every autograded submission (or the selected ones); returns the pages.

    A notebook handed in but not graded gets a page too, saying why and what to do.
    """
    course = course_folder(course, "make feedback", gradebook=False)
    import nbgrader
    from nbgrader.converters import GenerateFeedback
    from nbgrader.utils import capture_log, temp_attrs
    from traitlets.config import Config

    graded = sorted((path.parent.name, path.name) for path in (course / "autograded").glob("*/*") if path.is_dir())
    refused = not_graded(course) if (course / "gradebook.db").exists() else []
    if not graded and not refused:
        raise FileNotFoundError(f"nothing autograded in {course}: run `make autograde` first")
    chosen_assignments = select(assignments, sorted({a for _, a in graded} |
                                                    {item.assignment for item in refused
                                                     if item.assignment}), "graded assignment")
    chosen_students = select_students(students, sorted({s for s, _ in graded} |
                                                       {item.student for item in refused}),
                                      course / "autograded")
    todo = [(s, a) for s, a in graded if s in chosen_students and a in chosen_assignments]
    refused = [item for item in refused if item.student in chosen_students
               and (item.assignment in chosen_assignments or (item.assignment is None and not assignments))]
    if not todo and not refused:
        raise FileNotFoundError("nothing autograded matches the selection")
    mathjax = mathjax_folder(_MATHJAX_PARTS, "make feedback", "classroom")
    grading_environment(course)
    master = course / ".grading" / "mathjax"  # one copy for the class, linked into each page's folder
    if not (master / _MATHJAX_PARTS[0]).exists():
        copy_mathjax(mathjax, _MATHJAX_PARTS, master)
    nbgrader_templates = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"
    api = nbgrader_api(course)
    pages = []
    with quiet():
        for student, assignment in todo:
            config = Config()
            config.HTMLExporter.template_name = "gbai_feedback"
            config.HTMLExporter.extra_template_basedirs = [str(TEMPLATES), str(nbgrader_templates)]
            config.GenerateFeedback.preprocessors = _preprocessors(course)
            with temp_attrs(api.coursedir, assignment_id=assignment, student_id=student):
                app = GenerateFeedback(coursedir=api.coursedir, parent=api)
                app.update_config(config)
                # nbgrader sets the bootstrap stylesheet's folder here in its constructor; the
                # template also needs nbgrader's own templates to extend them.
                app.update_config(Config({"HTMLExporter": {"extra_template_paths": [
                    *app.config.HTMLExporter.get("extra_template_paths", []), str(nbgrader_templates)]}}))
                app.force = True
                result = capture_log(app)
            if not result.get("success"):
                raise RuntimeError(f"feedback of {student}/{assignment}: {failure_reason(result)}")
            folder = course / "feedback" / student / assignment
            shutil.copytree(master, folder / "mathjax", copy_function=_link, dirs_exist_ok=True)
            pages.extend(sorted(folder.glob("*.html")))
    for student in chosen_students:  # a page for files no assignment claims is rewritten from scratch
        shutil.rmtree(course / "feedback" / student / "not-graded", ignore_errors=True)
    pages += [not_graded_page(course, item) for item in refused]
    return pages


def feedback_command(course: Path, assignments: list[str] | None, students: list[str] | None) -> int:
    """make feedback: :func:`generate_feedback`, and a warning for the written answers still to grade."""
    start = time.perf_counter()
    pages = generate_feedback(course, assignments, students)
    # The written answers of these submissions that still await the teacher.
    submissions = {(page.parent.parent.name, page.parent.name) for page in pages}
    scores = score_table(course.resolve())
    mine = scores[[key in submissions for key in zip(scores["student"], scores["assignment"])]]
    waiting = int((mine["status"] == "to grade").sum())
    print(f"{len(pages)} feedback page(s) under {course / 'feedback'} ({time.perf_counter() - start:.1f} s)")
    if waiting:
        print(f"feedback: {waiting} written answer(s) not graded yet show as such; grade them "
              f"(make grade-answer, or nbgrader's formgrader) and run make feedback again", file=sys.stderr)
    return 0
