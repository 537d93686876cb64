"""The student kit: what students install, without a solution, a hidden test or a model answer (``make student-kit``).

``python -m notebooks._tools student-kit --output build/student-kit.zip`` writes a zip
holding one folder, ``gbai-student-kit/``:

* ``notebooks/NN_name.ipynb``: the student version of every notebook, the course's
  ``release/`` as ``make assignments`` writes it (so the kit matches the gradebook
  that grades it);
* ``gbai-<version>-py3-none-any.whl``: the package ``gbai`` alone, built from this
  repository, with the guide as its description (the repository's README is written
  for teachers and developers, and leads to the teachers' guide);
* ``README.md``: a short guide (install, open, keep the file name, hand in);
* ``lab.py`` and ``lab/``: ``make lab``'s launcher (:mod:`..lab.launch`) and its ``reader_lab/``: ``python lab.py``
  opens the notebooks in JupyterLab, a notebook without the unsaved mark, and no news pop-up.

The repository itself cannot be handed out: its percent scripts, executed notebooks
and instructor versions hold every solution, hidden test and model answer.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from ..lab import launch
from .release import make_assignments, notebook_points

__all__ = ["FOLDER", "build_wheel", "make_student_kit", "student_guide", "student_kit_command"]

ROOT = Path(__file__).resolve().parents[3]
#: The reader's Lab as the kit ships it: the launcher as ``lab.py``, its configuration as ``lab/``.
LAUNCHER = Path(launch.__file__).resolve()
#: The folder the archive unpacks to.
FOLDER = "gbai-student-kit"


def _date() -> tuple[int, int, int, int, int, int]:
    """The date of every zip entry: that of the commit the kit is built from (UTC).

    One commit gives one archive, byte for byte, and the student's file browser shows
    a real date (a zip's earliest, 1980, read "modified 46 years ago"). ``SOURCE_DATE_EPOCH``
    overrides it; outside a git checkout it is the time of the build.
    """
    stamp = os.environ.get("SOURCE_DATE_EPOCH")
    if not stamp and shutil.which("git"):
        found = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%ct"], capture_output=True, text=True)
        stamp = found.stdout.strip() if found.returncode == 0 else None
    seconds = int(stamp) if stamp and stamp.isdigit() else int(time.time())
    return time.gmtime(seconds)[:6]

_GUIDE = """\
# gbai: the notebooks of the course

This folder holds the course's {count} notebooks (`notebooks/`) and the Python package
they use, `gbai` (`{wheel}`). You need Python {python}.

## 1. Install (once)

In a terminal, in this folder:

```sh
python3 -m venv .venv
.venv/bin/python -m pip install "{wheel}[notebooks]"
```

On Windows: `py -m venv .venv`, then
`.venv\\Scripts\\python -m pip install "{wheel}[notebooks]"`.
This installs `gbai`, JupyterLab and what the notebooks need (about 1 GB, a few
minutes).

## 2. Open a notebook

```sh
.venv/bin/python lab.py
```

(Windows: `.venv\\Scripts\\python lab.py`.) JupyterLab opens in your browser on the
folder `notebooks/` (stop it with Ctrl-C in the terminal);
double-click the notebook of the assignment. Answer where a cell says `YOUR CODE
HERE` (delete the `raise NotImplementedError()` line) or `YOUR ANSWER HERE`. The
cell after each answer checks its form only; grading runs further checks. Leave
the read-only cells as they are: they are restored before grading. The figures a
notebook saves go to `notebooks/figures/`.

## 3. Keep the file name

Your notebook is graded under the name it was handed out with, for example
`01_problem_setup.ipynb`. Do not rename it. If you made a copy
(`01_problem_setup-Copy1.ipynb`), hand in the one with your answers, under the
original name.

## 4. Hand in

1. Write your name in the cell `NAME = ""` at the top.
2. *Kernel → Restart Kernel and Run All Cells*, and check that every cell ran.
3. Save, and hand in the `.ipynb` file alone (not the figures), as your teacher asks.

| Notebook | Points |
|---|---|
{table}
"""


def supported_pythons(requires: str) -> str:
    """``requires-python`` in words: ``">=3.11,<3.15"`` is ``"3.11 to 3.14"``, ``">=3.11"`` is ``"3.11 or newer"``."""
    low = re.search(r">=\s*3\.(\d+)", requires)
    high = re.search(r"<\s*3\.(\d+)", requires)
    if low is None:
        raise ValueError(f"requires-python must name the lowest Python as >=3.N, got {requires!r}")
    return f"3.{low.group(1)} to 3.{int(high.group(1)) - 1}" if high else f"3.{low.group(1)} or newer"


def student_guide(wheel: str, notebooks: list[Path]) -> str:
    """The guide students read first: install, open, keep the file name, hand in."""
    import tomllib

    import nbformat

    python = supported_pythons(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"])
    rows = [f"| `{path.name}` | {sum(notebook_points(nbformat.read(path, as_version=4))):g} |" for path in notebooks]
    return _GUIDE.format(count=len(notebooks), wheel=wheel, python=python, table="\n".join(rows))


def build_wheel(output: Path, description: str) -> Path:
    """Build the wheel of ``gbai`` into ``output`` from a copy holding only the package's sources.

    Built from a copy so nothing of the repository (notebooks, tests, caches) can end
    up in it and the build leaves no files in the repository. ``description`` replaces
    the repository's README as the package's description: that one is written for
    teachers and developers and leads to the teachers' guide, which shows nbgrader's
    markers and describes how grading works.
    """
    with tempfile.TemporaryDirectory(prefix="gbai-wheel-") as scratch:
        source = Path(scratch) / "gbai"
        source.mkdir()
        shutil.copy2(ROOT / "pyproject.toml", source / "pyproject.toml")
        (source / "README.md").write_text(description, encoding="utf-8")
        shutil.copytree(ROOT / "gbai", source / "gbai", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        # setuptools stamps the wheel's entries with this date: the same sources give the same wheel.
        environment = {**os.environ, "SOURCE_DATE_EPOCH": "315532800"}
        completed = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir",
                                    str(output), str(source)], capture_output=True, text=True, env=environment)
        if completed.returncode != 0:
            raise RuntimeError(f"building the gbai wheel failed: {completed.stderr.strip().splitlines()[-1:]}")
    wheels = sorted(output.glob("gbai-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one gbai wheel in {output}, found {[path.name for path in wheels]}")
    return wheels[0]


def _add(archive: zipfile.ZipFile, name: str, data: bytes, date: tuple[int, ...]) -> None:
    info = zipfile.ZipInfo(f"{FOLDER}/{name}", date_time=date)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    archive.writestr(info, data)


def make_student_kit(notebooks: Path, course: Path, output: Path) -> Path:
    """Write the student kit to ``output`` (a ``.zip``); returns its path.

    Writes (again) the course in ``course`` with every notebook, as ``make
    assignments`` does, and packs its student versions.
    """
    if output.suffix != ".zip":
        raise ValueError(f"the kit is a zip archive: give a path ending in .zip, not {output}")
    names = make_assignments(notebooks, course)
    released = [course.resolve() / "release" / name / f"{name}.ipynb" for name in names]
    missing = [path for path in released if not path.exists()]
    if missing:
        raise RuntimeError(f"nbgrader wrote no student version for {', '.join(path.stem for path in missing)}")
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    # nbgrader's own delimiters: a student version holding one was not cleared.
    markers = [ClearSolutions().begin_solution_delimeter, ClearHiddenTests().begin_test_delimeter]
    for path in released:
        text = path.read_text(encoding="utf-8")
        if any(marker in text for marker in markers):
            raise RuntimeError(f"{path} still holds a solution or hidden-test marker: not packed")
    output.parent.mkdir(parents=True, exist_ok=True)
    from gbai.version import __version__

    guide = student_guide(f"gbai-{__version__}-py3-none-any.whl", released)
    with tempfile.TemporaryDirectory(prefix="gbai-kit-") as scratch:
        wheel = build_wheel(Path(scratch), guide)
        if wheel.name not in guide:
            raise RuntimeError(f"the guide names another wheel than {wheel.name}")
        partial = output.with_name(f".{output.name}.partial")
        date = _date()
        with zipfile.ZipFile(partial, "w") as archive:
            _add(archive, "README.md", guide.encode(), date)
            _add(archive, wheel.name, wheel.read_bytes(), date)
            for path in released:
                _add(archive, f"notebooks/{path.name}", path.read_bytes(), date)
            _add(archive, "lab.py", LAUNCHER.read_bytes(), date)
            configuration = LAUNCHER.with_name("reader_lab")
            for path in sorted(configuration.rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    _add(archive, f"lab/{path.relative_to(configuration).as_posix()}", path.read_bytes(), date)
        os.replace(partial, output)
    return output


def student_kit_command(notebooks: Path, course: Path, output: Path) -> int:
    """make student-kit: :func:`make_student_kit`, and what the archive holds."""
    start = time.perf_counter()
    kit = make_student_kit(notebooks, course, output)
    with zipfile.ZipFile(kit) as archive:
        names = archive.namelist()
    print(f"student kit written to {kit} ({kit.stat().st_size / 1e6:.1f} MB, {len(names)} files, "
          f"{time.perf_counter() - start:.1f} s): give it to the students; it holds no solution")
    return 0
