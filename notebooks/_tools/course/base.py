"""The nbgrader course folder as the course tools open it: its id, gradebook, nbgrader's API, kernel environment.

``build/assignments/source/NN_name/NN_name.ipynb`` is the instructor version of a
notebook, ``release/`` the student version and ``gradebook.db`` the exercises and
their points; submissions go in ``submitted/<student>/<assignment>/``. :mod:`.release`
writes the course (``make assignments``), :mod:`.grading` grades it (``autograde``,
``grade-answer``) in the kernels :mod:`.sandbox` confines, :mod:`.grades` reads back what
grading left and writes the grade tables (``export``), :mod:`.feedback` the feedback
pages; :mod:`.submissions` finds what was handed in, :mod:`.kit` packs the student kit.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from pathlib import Path

from ..common import ipc_prefix, require

__all__ = ["CELL_TIMEOUT", "COURSE_ID", "TIMEOUT_ERROR", "course_folder", "failure_reason", "grading_environment",
           "nbgrader_api", "open_gradebook", "quiet"]


COURSE_ID = "gbai"
#: nbgrader's default of 30 s per cell is too tight on a busy machine for the cells
#: that still simulate for a few seconds in the quick configuration.
CELL_TIMEOUT = 300
#: The error nbgrader records in a cell stopped at the time limit.
TIMEOUT_ERROR = "CellTimeoutError"


def course_folder(course: Path, command: str, gradebook: bool = True) -> Path:
    """``course`` resolved for ``command``; raises unless nbgrader and (``gradebook``) the gradebook are there."""
    require({"nbgrader": "nbgrader"}, "classroom", command)
    course = Path(course).resolve()
    if gradebook and not (course / "gradebook.db").exists():
        raise FileNotFoundError(f"no gradebook in {course}: run `make assignments` first")
    return course


def grading_environment(course: Path) -> None:
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


def nbgrader_api(course: Path, submitted: Path | None = None, timeout: int = CELL_TIMEOUT, execute: type | None = None,
                 sandbox=None):
    """nbgrader's API on ``course`` (grading ``submitted``, when given, instead of ``submitted/``).

    Grading runs each notebook with ``execute``, ``sandbox.py``'s preprocessor confined in ``sandbox``.
    """
    from nbgrader.apps import NbGraderAPI
    from nbgrader.converters import Autograde
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import Execute
    from traitlets.config import Config

    config = Config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.course_id = COURSE_ID
    if submitted is not None:
        config.CourseDirectory.submitted_directory = str(submitted.relative_to(course))
    config.Execute.timeout = timeout
    # nbgrader gives up on a notebook when a cell's last outputs come over 4 s (nbclient's default)
    # after its reply, as they can on a machine busy with other kernels: wait up to a minute.
    config.Execute.iopub_timeout = 60
    # The error stored in a cell stopped at the limit says so in words (nbgrader's own
    # says "No reply from kernel"), since it ends up on the student's feedback page.
    stopped = f"timed out: stopped after {timeout} s, the time limit per cell"
    config.Execute.error_on_timeout = {"ename": TIMEOUT_ERROR, "evalue": stopped,
                                       "traceback": [f"{TIMEOUT_ERROR}: {stopped}"]}
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = ipc_prefix()
    if execute is not None:
        preprocessors = Autograde.class_traits()["autograde_preprocessors"].default()
        config.Autograde.autograde_preprocessors = [execute if step is Execute else step for step in preprocessors]
        config[execute.__name__].sandbox = sandbox
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


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


def open_gradebook(course: Path):
    """The gradebook of ``course``, to use in a ``with`` block."""
    from nbgrader.api import Gradebook

    return Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID)
