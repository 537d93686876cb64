"""The course from the notebooks' scripts: instructor and student versions, the gradebook (``make assignments``)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from ..common import nbgrader_meta, notebook_scripts
from .base import CELL_TIMEOUT, COURSE_ID, course_folder, failure_reason, grading_environment, nbgrader_api, quiet

__all__ = ["assignments_command", "instructor_notebook", "make_assignments", "notebook_points", "student_header"]


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

# formgrader's Autograde button (and `nbgrader autograde`) would run the answers unconfined:
# it is switched off here and says why. Grade with `make autograde`, which confines each kernel.
from nbgrader.preprocessors import NbGraderPreprocessor


class GradeWithMakeAutograde(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        raise RuntimeError("autograding from formgrader or nbgrader would run the answers unconfined: "
                           "grade with `make autograde` in the repository, which confines them")


c.Autograde.autograde_preprocessors = [GradeWithMakeAutograde]
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

#: The locked set-up cell: figures go to ./figures next to the notebook, as the header says (gbai's
#: default is ./gbai-figures). Grading sets the variable itself beforehand, and the cell keeps that folder.
_SETUP_CELL = """\
# Figures this notebook saves go to ./figures, next to the notebook.
import os

if not os.environ.get("GBAI_FIGURES_DIR"):
    os.environ["GBAI_FIGURES_DIR"] = os.path.abspath("figures")"""


def notebook_points(notebook) -> tuple[float, float]:
    """Points of the automatic tests and of the written answers of a notebook."""
    auto = written = 0.0
    for cell in notebook.cells:
        meta = nbgrader_meta(cell)
        if meta.get("grade"):
            if cell.cell_type == "code" and not meta.get("solution"):
                auto += float(meta.get("points", 0))
            else:
                written += float(meta.get("points", 0))
    return auto, written


def student_header(name: str, notebook) -> list:
    """The cells put at the top of every student version: instructions, name, figure folder."""
    import nbformat

    auto, written = notebook_points(notebook)
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
    graded = [c for c in notebook.cells if nbgrader_meta(c).get("grade")]
    if not graded:
        raise ValueError(f"{script.name}: no graded exercise (nbgrader metadata) found")
    notebook.cells = student_header(script.stem, notebook) + notebook.cells
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index}"
    return notebook


def make_assignments(notebooks: Path, course: Path, names: list[str] | None = None) -> list[str]:
    """Write the nbgrader course (laid out as :mod:`.base` says): one assignment per notebook; returns their names.

    A student version has its solutions replaced by ``raise NotImplementedError()`` or
    ``YOUR ANSWER HERE``, its hidden tests removed and the visible ones kept and locked.
    """
    course = course_folder(course, "make assignments", gradebook=False)
    import nbformat

    scripts = notebook_scripts(notebooks, names)
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(_NBGRADER_CONFIG)
    grading_environment(course)
    api = nbgrader_api(course)
    made = []
    with quiet():
        for script in scripts:
            name = script.stem
            folder = course / "source" / name
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(instructor_notebook(script), folder / f"{name}.ipynb")
            result = api.generate_assignment(name, force=True, create=True)
            if not result.get("success"):
                raise RuntimeError(f"nbgrader generate_assignment {name} failed: {failure_reason(result)}")
            made.append(name)
    return made


def assignments_command(notebooks: Path, course: Path, names: list[str]) -> int:
    """make assignments: :func:`make_assignments`, and where the student versions are."""
    start = time.perf_counter()
    made = make_assignments(notebooks, course, names)
    print(f"{len(made)} assignment(s) in {course}: student versions in {course / 'release'} "
          f"({time.perf_counter() - start:.1f} s)")
    return 0
