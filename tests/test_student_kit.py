"""The student kit (``make student-kit``): nothing in it a student must not see, and it installs and runs.

The kit is built through the Makefile's own target into a temporary folder. What it
must not hold is read from the instructor versions nbgrader grades with, not typed
here: nbgrader's solution and hidden-test delimiters, every line between them, and
every model answer of a written exercise, keeping the lines that appear nowhere else
in the instructor version (the prompts and visible checks students do see). Each file
of the archive, and each file of any wheel in it, is searched for them. A slower test
installs the kit into a fresh venv by its guide's own command and runs notebook 1
headless, as handed out and with the reference answers filled in.
"""

import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import nbformat
import pytest
from conftest import free_port, jupyter_server

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))

pytest.importorskip("nbgrader", reason="the classroom extra is not installed: pip install -e '.[classroom]'")


class Kit:
    def __init__(self, folder: Path):
        self.folder = folder
        self.course = folder / "course"
        self.path = folder / "student-kit.zip"


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    if shutil.which("make") is None:
        pytest.skip("needs make")
    state = Kit(tmp_path_factory.mktemp("kit"))
    # The Makefile's target with this interpreter's environment (STAMP= skips the install step).
    completed = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "student-kit", f"VENV={sys.prefix}",
                                "STAMP=", f"COURSE={state.course}", f"KIT={state.path}"],
                               capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr[-3000:]
    state.stdout = completed.stdout
    return state


# --- what must stay out: derived from the instructor versions ------------------------------


def _delimiters() -> dict[str, tuple[str, str]]:
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    solutions, tests = ClearSolutions(), ClearHiddenTests()
    return {"solution": (solutions.begin_solution_delimeter, solutions.end_solution_delimeter),
            "hidden tests": (tests.begin_test_delimeter, tests.end_test_delimeter)}


def _normal(line: str) -> str:
    return " ".join(line.split())


def _split(cell) -> tuple[str | None, list[str], list[str]]:
    """A cell's secret lines (and which kind) and the lines students see, as nbgrader clears them."""
    meta = cell.metadata.get("nbgrader", {})
    lines = cell.source.splitlines()
    begin_solution = _delimiters()["solution"][0]
    if meta.get("solution") and cell.cell_type == "markdown" and begin_solution not in cell.source:
        return "model answer", lines, []  # nbgrader replaces the whole answer
    if meta.get("solution"):
        kind = "solution"
    elif meta.get("grade") and cell.cell_type == "code":
        kind = "hidden tests"
    else:
        return None, [], lines
    begin, end = _delimiters()[kind]
    secret, seen, inside = [], [], False
    for line in lines:
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        else:
            (secret if inside else seen).append(line)
    return kind, secret, seen


def secrets(instructor_notebooks: list[Path]) -> dict[str, set[str]]:
    """The lines of solutions, hidden tests and model answers that appear nowhere else in the instructor versions.

    Lines without four letters or digits (a closing bracket) say nothing and are left out.
    """
    secret: dict[str, set[str]] = {"solution": set(), "hidden tests": set(), "model answer": set()}
    seen: set[str] = set()
    for path in instructor_notebooks:
        for cell in nbformat.read(path, as_version=4).cells:
            kind, hidden, shown = _split(cell)
            if kind:
                secret[kind] |= {_normal(line) for line in hidden}
            seen |= {_normal(line) for line in shown}
    return {kind: {line for line in lines - seen if sum(char.isalnum() for char in line) >= 4}
            for kind, lines in secret.items()}


def _files(archive: zipfile.ZipFile, prefix: str = ""):
    """Every file of an archive as text, the files of a wheel in it included (``kit.zip!gbai.whl!gbai/x.py``)."""
    for name in archive.namelist():
        data = archive.read(name)
        if name.endswith((".whl", ".zip")):
            yield from _files(zipfile.ZipFile(io.BytesIO(data)), f"{prefix}{name}!")
        else:
            yield f"{prefix}{name}", data.decode("utf-8", errors="replace")


def leaks(archive: Path, instructor_notebooks: list[Path]) -> list[str]:
    """Each file of ``archive`` that holds a delimiter, or a line of a solution, hidden test or model answer."""
    markers = [marker for pair in _delimiters().values() for marker in pair]
    lines_of = secrets(instructor_notebooks)
    found = []
    with zipfile.ZipFile(archive) as kit:
        for name, text in _files(kit):
            lines = {_normal(line) for line in text.splitlines()}
            if name.endswith(".ipynb"):  # the sources as a notebook shows them, not JSON-escaped
                lines |= {_normal(line) for cell in nbformat.reads(text, as_version=4).cells
                          for line in cell.source.splitlines()}
            found += [f"{name}: the marker {marker!r}" for marker in markers if marker in text]
            for kind, secret in lines_of.items():
                found += [f"{name}: a line of a {kind}: {line!r}" for line in sorted(secret & lines)]
    return found


def _instructor_versions(kit) -> list[Path]:
    return sorted((kit.course / "source").glob("*/*.ipynb"))


# --- the archive ------------------------------------------------------------------------


def test_the_kit_holds_the_student_versions_a_wheel_and_a_guide(kit):
    with zipfile.ZipFile(kit.path) as archive:
        names = sorted(archive.namelist())
        wheels = [name for name in names if name.endswith(".whl")]
        assert len(wheels) == 1 and re.fullmatch(r"gbai-student-kit/gbai-[\d.]+-py3-none-any\.whl", wheels[0])
        notebooks = [name for name in names if name.endswith(".ipynb")]
        assert notebooks == [f"gbai-student-kit/notebooks/{script.stem}.ipynb" for script in SCRIPTS]
        # make lab's launcher and the reader's Lab configuration, as committed (no cache files).
        lab = ROOT / "notebooks" / "_tools" / "lab" / "reader_lab"
        configuration = {f"gbai-student-kit/lab/{path.relative_to(lab).as_posix()}" for path in lab.rglob("*")
                         if path.is_file() and "__pycache__" not in path.parts}
        assert "gbai-student-kit/lab/reader_contents.py" in configuration
        assert set(names) == {*notebooks, *wheels, "gbai-student-kit/README.md", "gbai-student-kit/lab.py",
                              *configuration}
        assert archive.read("gbai-student-kit/lab.py") == (lab.parent / "launch.py").read_bytes()
        for script in SCRIPTS:
            # Byte for byte the student version the course grades against.
            released = kit.course / "release" / script.stem / f"{script.stem}.ipynb"
            assert archive.read(f"gbai-student-kit/notebooks/{script.stem}.ipynb") == released.read_bytes()
    assert f"student kit written to {kit.path}" in kit.stdout


def test_the_files_of_the_kit_carry_the_date_of_the_commit_it_was_built_from(kit):
    import time

    stamp = os.environ.get("SOURCE_DATE_EPOCH")  # the builder's override
    if not stamp:
        if shutil.which("git") is None:
            pytest.skip("needs git")
        found = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%ct"], capture_output=True, text=True)
        if found.returncode != 0:
            pytest.skip("not a git checkout")
        stamp = found.stdout
    # Not the zip format's earliest date, which a file browser shows as "46 years ago".
    committed = time.gmtime(int(stamp))[:6]
    with zipfile.ZipFile(kit.path) as archive:
        dates = {info.date_time for info in archive.infolist()}
    # A zip stores even seconds.
    assert dates == {(*committed[:5], committed[5] - committed[5] % 2)}, dates


def test_the_wheel_holds_the_package_alone(kit):
    with zipfile.ZipFile(kit.path) as archive:
        wheel = next(name for name in archive.namelist() if name.endswith(".whl"))
        with zipfile.ZipFile(io.BytesIO(archive.read(wheel))) as package:
            names = package.namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"gbai", re.sub(r"-py3-none-any\.whl$", ".dist-info", wheel.split("/")[-1])}, tops
    sources = {path.relative_to(ROOT).as_posix() for path in (ROOT / "gbai").rglob("*.py")
               if "__pycache__" not in path.parts}
    assert sources <= set(names), sources - set(names)
    assert not [name for name in names if name.endswith((".ipynb", ".pyc", ".nbi", ".nbc"))]


def test_nothing_in_the_kit_holds_a_solution_a_hidden_test_or_a_model_answer(kit):
    instructor = _instructor_versions(kit)
    assert [path.stem for path in instructor] == [script.stem for script in SCRIPTS]
    lines = secrets(instructor)
    # Every notebook has three exercises, each with a solution and hidden tests, and
    # most have a written answer: the lines looked for must be that many.
    assert len(lines["solution"]) >= 3 * len(SCRIPTS) and len(lines["hidden tests"]) >= 3 * len(SCRIPTS)
    assert len(lines["model answer"]) >= len(SCRIPTS)
    assert leaks(kit.path, instructor) == []


def test_the_search_finds_an_instructor_version_or_a_hidden_test_slipped_into_the_kit(kit, tmp_path):
    instructor = _instructor_versions(kit)
    source = instructor[0]
    with zipfile.ZipFile(kit.path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    # An instructor version packed as the student's.
    notebook = f"gbai-student-kit/notebooks/{source.name}"
    leaky = tmp_path / "instructor.zip"
    with zipfile.ZipFile(leaky, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, source.read_bytes() if name == notebook else data)
    found = leaks(leaky, instructor)
    assert any("marker 'BEGIN SOLUTION'" in item for item in found)
    for kind in ("solution", "hidden tests", "model answer"):
        assert any(f"a line of a {kind}" in item and item.startswith(notebook) for item in found), kind
    # One hidden check, without its delimiters, in a module of the wheel.
    _, hidden, _ = _split(next(cell for cell in nbformat.read(source, as_version=4).cells
                               if cell.metadata.get("nbgrader", {}).get("grade") and cell.cell_type == "code"))
    wheel = next(name for name in files if name.endswith(".whl"))
    with zipfile.ZipFile(io.BytesIO(files[wheel])) as package:
        inner = {name: package.read(name) for name in package.namelist()}
    inner["gbai/checks.py"] = "\n".join(hidden).encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        for name, data in inner.items():
            package.writestr(name, data)
    leaky = tmp_path / "wheel.zip"
    with zipfile.ZipFile(leaky, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, buffer.getvalue() if name == wheel else data)
    found = leaks(leaky, instructor)
    assert found and all(item.startswith(f"{wheel}!gbai/checks.py: a line of a hidden tests") for item in found)


def test_the_guide_says_how_to_install_open_keep_the_name_and_hand_in(kit):
    with zipfile.ZipFile(kit.path) as archive:
        guide = archive.read("gbai-student-kit/README.md").decode()
        wheel = next(name for name in archive.namelist() if name.endswith(".whl")).split("/")[-1]
    assert f'pip install "{wheel}[notebooks]"' in guide
    assert ".venv/bin/python lab.py" in guide and "jupyter lab notebooks" not in guide
    # The Pythons in words, from requires-python ("3.11 to 3.14"), not its specifier.
    assert re.search(r"You need Python 3\.\d+( to 3\.\d+| or newer)\.", guide), guide.splitlines()[:6]
    assert "Do not rename it" in guide and "01_problem_setup-Copy1.ipynb" in guide
    assert "Restart Kernel and Run All Cells" in guide and "hand in the `.ipynb` file" in guide
    for script in SCRIPTS:
        assert f"`{script.stem}.ipynb`" in guide


def test_the_teaching_guide_sends_students_to_the_kit():
    guide = (ROOT / "notebooks" / "_book" / "teaching.md").read_text()
    section = guide.split("## 3. What students install", 1)[1].split("\n## ", 1)[0]
    assert "make student-kit" in section and "build/student-kit.zip" in section
    assert "pip install '.[notebooks]'" not in section


# --- a student's machine ------------------------------------------------------------------


def _kernel_environment(home: Path, venv: Path) -> dict:
    """A student's shell: the kit's venv first on PATH, none of the project's settings, a home
    without Jupyter kernels or settings (pip keeps its configuration and its download cache)."""
    home.mkdir(exist_ok=True)
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("GBAI_", "JUPYTER", "PYTHON", "VIRTUAL_ENV", "IPYTHON", "XDG_DATA",
                                           "XDG_CONFIG"))}
    cache = os.environ.get("PIP_CACHE_DIR") or str(Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                                                       / "pip")
    return {**environment, "HOME": str(home), "PIP_CACHE_DIR": cache,
            "PATH": os.pathsep.join([str(venv / "bin"), "/usr/bin", "/bin"])}


def _errors(notebook) -> list[tuple[str, str]]:
    return [(cell.metadata.get("nbgrader", {}).get("grade_id", f"cell {index}"), output.ename)
            for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"
            for output in cell.outputs if output.output_type == "error"]


@pytest.fixture(scope="module")
def installed(kit, tmp_path_factory):
    """The kit unpacked as an unzip tool does (each file dated as its entry) and installed by its guide's
    own command into a fresh venv: ``(folder, environment)``."""
    tmp_path = tmp_path_factory.mktemp("student")
    with zipfile.ZipFile(kit.path) as archive:
        for entry in archive.infolist():
            archive.extract(entry, tmp_path)
            stamp = time.mktime(entry.date_time + (0, 0, -1))
            os.utime(tmp_path / entry.filename, (stamp, stamp))
    folder = tmp_path / "gbai-student-kit"
    guide = (folder / "README.md").read_text()
    install = next(line.strip() for line in guide.splitlines() if line.startswith(".venv/bin/python -m pip install"))
    environment = _kernel_environment(tmp_path / "home", folder / ".venv")
    subprocess.run([sys.executable, "-m", "venv", ".venv"], cwd=folder, check=True)
    completed = subprocess.run(install, shell=True, cwd=folder, env=environment, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return folder, environment


@pytest.mark.slow
def test_the_kit_installs_in_a_fresh_venv_and_runs_notebook_1(kit, installed, tmp_path):
    folder, environment = installed
    where = subprocess.run([str(folder / ".venv/bin/python"), "-c", "import gbai; print(gbai.__file__)"], cwd=tmp_path,
                           env=environment, capture_output=True, text=True, check=True).stdout
    assert Path(where.strip()).is_relative_to(folder / ".venv"), where
    kernels = json.loads(subprocess.run([".venv/bin/jupyter", "kernelspec", "list", "--json"], cwd=folder,
                                        env=environment, capture_output=True, text=True, check=True).stdout)
    # The venv's own kernel; its command "python" is replaced by the interpreter running
    # jupyter, the venv's (jupyter_client's KernelManager does so).
    python3 = kernels["kernelspecs"]["python3"]
    assert Path(python3["resource_dir"]).is_relative_to(folder / ".venv"), python3
    assert python3["spec"]["argv"][0] == "python" or Path(python3["spec"]["argv"][0]).is_relative_to(folder / ".venv")

    def run(notebook: Path) -> nbformat.NotebookNode:
        executed = notebook.with_suffix(".executed.ipynb")
        completed = subprocess.run([str(folder / ".venv/bin/jupyter"), "nbconvert", "--to", "notebook", "--execute",
                                    "--allow-errors", "--ExecutePreprocessor.timeout=600", "--output", str(executed),
                                    str(notebook)], cwd=notebook.parent, env=environment, capture_output=True,
                                   text=True)
        assert completed.returncode == 0, completed.stderr[-3000:]
        return nbformat.read(executed, as_version=4)

    # As handed out: the stubs raise, the checks after them miss their variables, the rest runs.
    handed_out = run(folder / "notebooks" / "01_problem_setup.ipynb")
    errors = _errors(handed_out)
    assert errors == [(f"nb01_ex{number}_{cell}", error) for number in (1, 2, 3)
                      for cell, error in (("solution", "NotImplementedError"), ("test", "NameError"))], errors
    assert all(cell.execution_count for cell in handed_out.cells if cell.cell_type == "code")
    assert (folder / "notebooks" / "figures" / "setup_table1.png").stat().st_size > 1000
    # With the reference answers written in, every visible check passes with the kit's gbai.
    source = nbformat.read(kit.course / "source" / "01_problem_setup" / "01_problem_setup.ipynb", as_version=4)
    answers = {cell.metadata["nbgrader"]["grade_id"]: cell.source for cell in source.cells
               if cell.metadata.get("nbgrader", {}).get("solution")}
    answered = nbformat.read(folder / "notebooks" / "01_problem_setup.ipynb", as_version=4)
    for cell in answered.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    (tmp_path / "answered").mkdir()
    nbformat.write(answered, tmp_path / "answered" / "01_problem_setup.ipynb")
    assert _errors(run(tmp_path / "answered" / "01_problem_setup.ipynb")) == []


@pytest.mark.slow
def test_the_kits_lab_opens_a_notebook_unmarked_with_real_dates_and_no_news(kit, installed, browser, tmp_path):
    # The guide's command, python lab.py, as a student starts it (here without a browser of its own).
    folder, environment = installed
    port = free_port()
    token = "gbai-kit-token"
    command = [str(folder / ".venv/bin/python"), "lab.py", "--no-browser", "--ip=127.0.0.1", f"--ServerApp.port={port}",
               f"--IdentityProvider.token={token}", "--LabApp.expose_app_in_browser=True"]

    def api(path: str):
        request = urllib.request.Request(f"{base}{path}", headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read().decode())

    with jupyter_server(command, port, token, tmp_path / "lab.log", cwd=folder, env=environment) as base:
        # Real dates: the file as unpacked carries its zip entry's date, and Lab shows it (not 1980).
        listing = {entry["name"]: entry for entry in api("/api/contents/")["content"]}
        assert "01_problem_setup.ipynb" in listing, sorted(listing)
        with zipfile.ZipFile(kit.path) as archive:
            year = archive.getinfo("gbai-student-kit/notebooks/01_problem_setup.ipynb").date_time[0]
        assert year > 1980 and listing["01_problem_setup.ipynb"]["last_modified"].startswith(str(year)), listing
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(180_000)
        page.goto(f"{base}/lab/tree/01_problem_setup.ipynb?reset&token={token}")
        page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell")
        state = page.evaluate("""async () => {
          const panel = window.jupyterapp.shell.currentWidget;
          await panel.context.ready;
          await panel.sessionContext.ready;
          const info = await panel.sessionContext.session.kernel.info;
          await new Promise(resolve => setTimeout(resolve, 3000));
          return {status: panel.sessionContext.kernelDisplayStatus, dirty: panel.context.model.dirty,
                  version: info.language_info.version};
        }""")
        page.screenshot(path=str(tmp_path / "kit-lab-opened.png"))
        assert state["status"] == "idle", state
        dirty = page.locator("#jp-main-dock-panel .lm-TabBar-tab.jp-mod-dirty").count()
        assert not state["dirty"] and dirty == 0, f"the notebook shows the unsaved mark on opening: {state}"
        modified = page.locator(".jp-DirListing-item .jp-DirListing-itemModified").all_inner_texts()
        assert modified and not any("46y" in text for text in modified), modified
        # Lab asks about its news in a notification toast unless the announcements plugin is off.
        toasts = page.locator(".Toastify__toast").all_inner_texts()
        assert not any("news" in text.lower() for text in toasts), toasts
        page.close()
