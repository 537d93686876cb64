"""What the students handed in: the notebooks under ``submitted/``, each matched to its assignment.

The layout nbgrader expects is ``submitted/<student>/<assignment>/<assignment>.ipynb``.
Real classes stray from it (Jupyter saves a copy as ``NN_name-Copy1.ipynb``, a
student renames the file or drops it one folder too high), so every notebook found
under a student's folder is matched to an assignment by what it contains, the
nbgrader ids of its exercise cells, and only failing that by its name. A notebook
that matches one assignment unambiguously is graded as that assignment's notebook;
anything else is reported, by student and file, and left out. When Jupyter's copy
sits beside the original, the one with answers is graded (if only one has any;
with several answered copies nothing is graded and the student is asked to keep one).
:mod:`.grades` reads what grading made of them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..common import nbgrader_meta

__all__ = ["EXERCISE", "Problem", "Submission", "exercise_of", "find_submissions", "notebook_cell_ids", "read_notebook",
           "shown_path", "untouched"]


@dataclass(frozen=True)
class Submission:
    """One notebook to grade: ``path`` is graded as ``<assignment>/<assignment>.ipynb`` of ``student``."""

    student: str
    assignment: str
    path: Path
    #: Why a file under another name is graded (None when the file has the expected name).
    note: str | None = None


@dataclass(frozen=True)
class Problem:
    """A file (or folder) of ``student`` that is not graded, and why (``reason`` follows the path)."""

    student: str
    path: Path
    reason: str
    #: True for a spare copy beside the notebook that is graded: nothing goes ungraded.
    spare: bool = False
    #: The assignment the file belongs to, when its folder, name or cells tell (else None).
    assignment: str | None = None


def shown_path(course: Path, path: Path) -> str:
    """A path under ``submitted/`` as the console and the tables show it: ``bob/01_name/file.ipynb``."""
    # Not resolved: a link handed in is named where it lies, not where it points.
    with contextlib.suppress(ValueError):
        return Path(path).absolute().relative_to((course / "submitted").absolute()).as_posix()
    return str(path)


def notebook_cell_ids(path: Path) -> set[str] | None:
    """The nbgrader ``grade_id`` of every cell of the notebook at ``path``; None if it is not a notebook."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return None
    if not isinstance(cells, list):
        return None
    ids = set()
    for cell in cells:
        nbgrader = cell.get("metadata", {}).get("nbgrader", {}) if isinstance(cell, dict) else {}
        if isinstance(nbgrader, dict) and nbgrader.get("grade_id"):
            ids.add(str(nbgrader["grade_id"]))
    return ids


def untouched(path: Path) -> bool:
    """Whether every answer cell of the notebook is as handed out (nbgrader's checksums match)."""
    import nbformat
    from nbgrader.utils import compute_checksum

    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception:  # an unreadable file has no answers to grade
        return True
    answers = [cell for cell in notebook.cells if nbgrader_meta(cell).get("solution")
               and "checksum" in nbgrader_meta(cell)]
    return bool(answers) and all(cell.metadata.nbgrader["checksum"] == compute_checksum(cell) for cell in answers)


def _by_content(ids: set[str], assignments: dict[str, set[str]]) -> list[str]:
    """The assignments sharing the most cell ids with the notebook (several on a tie, none without any)."""
    shared = {name: len(ids & known) for name, known in assignments.items()}
    most = max(shared.values(), default=0)
    return [name for name, count in shared.items() if count == most] if most else []


def _by_name(path: Path, student_folder: Path, assignments: dict[str, set[str]]) -> list[str]:
    """The assignments a file's name (or its folder's name) points to: ``01_problem_setup (1).ipynb``."""
    stem = path.stem.lower()
    named = [name for name in assignments if stem.startswith(name.lower())]
    if not named and path.parent != student_folder and path.parent.name in assignments:
        named = [path.parent.name]
    return named


def find_submissions(submitted: Path, assignments: dict[str, set[str]]) -> tuple[list[Submission], list[Problem]]:
    """Match every notebook under ``submitted/<student>/`` to an assignment.

    ``assignments`` maps each assignment name to the nbgrader cell ids of its
    notebook. Returns the submissions to grade, one per (student, assignment), and
    the problems: files that match no assignment, several files for one assignment,
    a file at the expected path that holds another assignment's cells, a student
    folder without any notebook, a Python script handed in instead of a notebook, a symbolic link (file or
    folder: it could point anywhere the teacher can read), a student folder whose name starts with a dot.
    Hidden files and folders inside a student's folder and Jupyter's ``.ipynb_checkpoints`` are ignored.
    """
    submissions: list[Submission] = []
    problems: list[Problem] = []
    if not submitted.is_dir():
        return submissions, problems
    for path in sorted(submitted.glob("*.ipynb")):
        problems.append(Problem("?", path, "lies directly in submitted/: put it in "
                                           "submitted/<student>/<assignment>/"))
    for folder in sorted(path for path in submitted.iterdir()
                         if (path.is_dir() or path.is_symlink()) and path.name != ".ipynb_checkpoints"):
        student = folder.name
        if folder.is_symlink() or student.startswith("."):
            problems.append(Problem(student, folder, "is a symbolic link, not a folder: hand in the notebook itself"
                                    if folder.is_symlink() else "is a folder whose name starts with a dot (hidden): "
                                                                "rename it to the student's id"))
            continue
        links = sorted(Path(root, name) for root, folders, files in os.walk(folder) for name in [*folders, *files]
                       if Path(root, name).is_symlink())
        for path in links:
            named = _by_name(path, folder, assignments)
            problems.append(Problem(student, path, "is a symbolic link: hand in the file itself, not a link to it",
                                    assignment=named[0] if len(named) == 1 else None))
        kept = [path for path in folder.rglob("*") if not path.is_symlink()
                and not any(part.startswith(".") for part in path.relative_to(folder).parts)]
        notebooks = sorted(path for path in kept if path.suffix == ".ipynb")
        scripts = sorted(path for path in kept if path.suffix == ".py")
        if not notebooks and not scripts and not links:
            problems.append(Problem(student, folder, "holds no notebook"))
            continue
        chosen: dict[str, Submission] = {}
        candidates: dict[str, list[Path]] = {}
        for path in notebooks:
            ids = notebook_cell_ids(path)
            expected = path.parent.name if path.parent.parent == folder else None
            if ids is None:
                named = _by_name(path, folder, assignments)
                problems.append(Problem(student, path, "is not a readable notebook",
                                        assignment=named[0] if len(named) == 1 else None))
                continue
            if expected in assignments and path.name == f"{expected}.ipynb":
                others = [name for name in _by_content(ids, assignments) if name != expected]
                if others and not ids & assignments[expected]:
                    problems.append(Problem(student, path, f"holds the exercises of {others[0]}, not of {expected}",
                                            assignment=expected))
                else:
                    chosen[expected] = Submission(student, expected, path)
                continue
            matches = _by_content(ids, assignments) or _by_name(path, folder, assignments)
            if len(matches) != 1:
                what = "several assignments" if matches else "no assignment"
                problems.append(Problem(student, path, f"matches {what} (neither its exercise cells nor its "
                                                       f"name tell which)"))
                continue
            candidates.setdefault(matches[0], []).append(path)
        for assignment, paths in sorted(candidates.items()):
            expected = f"{assignment}/{assignment}.ipynb"
            answered = [path for path in paths if not untouched(path)]
            kept = chosen.get(assignment)
            kept_untouched = kept is not None and untouched(kept.path)
            if kept is not None and not (kept_untouched and answered):
                spares = paths
            elif (kept is None and len(paths) > 1 and len(answered) != 1) or (kept_untouched and len(answered) > 1):
                # Which of several answered copies is the work to grade, only the student knows.
                names = ", ".join(path.name for path in sorted([*paths, *([kept.path] if kept else [])]))
                problems.append(Problem(student, paths[0].parent, f"holds several notebooks that could be "
                                                                  f"{assignment} ({names}): keep one, named {expected}",
                                        assignment=assignment))
                chosen.pop(assignment, None)
                continue
            else:
                best = paths[0] if len(paths) == 1 else answered[0]
                chosen[assignment] = Submission(student, assignment, best, note=f"graded as {student}/{expected}")
                spares = [path for path in paths if path != best] + ([kept.path] if kept else [])
            for path in spares:
                problems.append(Problem(student, path, f"ignored: {chosen[assignment].path.name} is graded as "
                                                       f"{student}/{expected}", spare=True, assignment=assignment))
        submissions.extend(chosen[name] for name in sorted(chosen))
        # A script instead of the notebook (exported, or the Jupytext pair): named, and counted as
        # handed in when its name tells the assignment, unless that assignment's notebook is here.
        reported = {problem.assignment for problem in problems if problem.student == student}
        for path in scripts:
            named = _by_name(path, folder, assignments)
            assignment = named[0] if len(named) == 1 else None
            if assignment is None and notebooks or assignment in chosen or (assignment and assignment in reported):
                continue
            problems.append(Problem(student, path, "is a Python script, not a notebook: ask for the .ipynb file "
                                                   "(in JupyterLab, right-click the notebook, Download)",
                                    assignment=assignment))
            reported.add(assignment)
    return submissions, problems


EXERCISE = re.compile(r"_ex(\d+)_")


def exercise_of(cell) -> int | None:
    """The exercise a cell belongs to, from its nbgrader id ``nbNN_exK_...`` (None for other cells)."""
    number = EXERCISE.search(nbgrader_meta(cell).get("grade_id", "") + "_")
    return int(number.group(1)) if number else None


def read_notebook(path: Path):
    """A notebook without nbformat's validation, which takes longer than reading a class's worth of them."""
    import nbformat

    try:
        notebook = nbformat.v4.reads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, TypeError, AttributeError):
        return None  # a notebook nbgrader could not read was never graded
    return notebook if isinstance(notebook.get("cells"), list) else None
