"""make lab for readers, in a real browser: opening a notebook marks nothing unsaved, saving it unchanged leaves git
clean.

The tests start ``make lab``'s server (the Makefile's own command, in a scratch git
repository holding notebooks 1 and 5, the pairing configuration and the notebook tools
with the Lab's launcher and configuration, as committed) and drive the system's Chromium with Playwright, as a
reader would: open ``05_experiment_1.py`` and ``01_problem_setup.py``, wait until
the kernel has answered (Lab then writes the kernel's ``language_info`` into the
notebook), look for the unsaved mark on the tab, press Ctrl+S and ask git what
changed; edit one Markdown cell and check that the edit reaches the ``.py`` and the
``.ipynb`` and nothing else; and store a notebook as a machine with another Python
patch version would have, then open and save it here. The tree is the one the README's first
command leaves: ``make figures``' writing step has just stored each executed notebook. A
notebook is offered in one form only, its script (two tabs of one notebook would drift apart).

The browser is the ``browser`` fixture of ``conftest.py``: without one the browser
tests skip with a one-line reason on a user's machine and fail in CI. ``GBAI_SCREENSHOTS``
names a folder for the screenshots taken after opening and after saving (default:
pytest's temporary folder).
"""

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest
from conftest import free_port, jupyter_server

from notebooks._tools.run.runner import store_pair  # make figures' writing step: it prepares the tree Lab opens

ROOT = Path(__file__).resolve().parents[1]

NOTEBOOKS = ("01_problem_setup", "05_experiment_1")
TOKEN = "gbai-test-token"
# Lab, a kernel and Chromium on a shared 2-core machine: generous, but bounded.
TIMEOUT_MS = 180_000

pytestmark = pytest.mark.lab


def _git(folder: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", *args]
    return subprocess.run(command, cwd=folder, check=True, capture_output=True, text=True).stdout


def _request(url: str, method: str = "GET", body: dict | None = None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"token {TOKEN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.status, response.read().decode()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    pytest.importorskip("jupyterlab", reason="the notebooks extra is not installed")
    if shutil.which("git") is None or shutil.which("make") is None:
        pytest.skip("needs git and make")
    repository = tmp_path_factory.mktemp("reader")
    notebooks = repository / "notebooks"
    notebooks.mkdir()
    for name in [f"{stem}{suffix}" for stem in NOTEBOOKS for suffix in (".py", ".ipynb")] + ["jupytext.toml"]:
        shutil.copy2(ROOT / "notebooks" / name, notebooks / name)
    # The tree as the README's first command leaves it: the clone an hour old, then make
    # figures' writing step stores each executed notebook (same bytes) beside its script.
    an_hour_ago = time.time() - 3600
    for stem in NOTEBOOKS:
        script = notebooks / f"{stem}.py"
        os.utime(script, (an_hour_ago, an_hour_ago))
        store_pair((notebooks / f"{stem}.ipynb").read_text(encoding="utf-8"), notebooks / f"{stem}.ipynb", script)
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "notebooks" / "_tools", notebooks / "_tools", ignore=ignore)  # make lab's launcher
    shutil.copytree(ROOT / "notebooks" / "_book", notebooks / "_book", ignore=ignore)
    (repository / ".gitignore").write_text((ROOT / ".gitignore").read_text())
    _git(repository, "init", "-q")
    _git(repository, "add", "-A")
    _git(repository, "commit", "-q", "-m", "the notebooks as committed")
    port = free_port()
    log = repository.parent / "lab.log"
    # The Makefile's lab target, run in the scratch repository with this interpreter's
    # environment (STAMP= skips the install step). The page exposes Lab's application
    # object so that the test can wait for the kernel's answer.
    command = ["make", "--no-print-directory", "-f", str(ROOT / "Makefile"), "-C", str(repository), "lab",
               f"VENV={sys.prefix}", "STAMP=", f"LAB_PORT={port}",
               f"LAB_ARGS=--no-browser --ip=127.0.0.1 --IdentityProvider.token={TOKEN} "
               "--LabApp.expose_app_in_browser=True"]
    # The reader's own Lab settings and workspaces (autosave, say) stay out of the test.
    user = repository.parent / "lab-user"
    environment = {**os.environ, "JUPYTER_PREFER_ENV_PATH": "1",
                   "JUPYTERLAB_SETTINGS_DIR": str(user / "settings"),
                   "JUPYTERLAB_WORKSPACES_DIR": str(user / "workspaces")}
    with jupyter_server(command, port, TOKEN, log, env=environment) as base:
        yield repository, base, log


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("GBAI_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# The notebook in front, once the kernel has answered: its metadata and the kernel's
# language_info. Lab writes the kernel's block into the notebook in a callback on the
# same promise, registered when the kernel connected, so it has run when this resumes.
_AFTER_KERNEL = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.context.ready;
  await panel.sessionContext.ready;
  const kernel = panel.sessionContext.session.kernel;
  const info = await kernel.info;
  await kernel.spec;
  await new Promise(resolve => setTimeout(resolve, 500));
  return {kernel: info.language_info, notebook: panel.context.model.getMetadata('language_info'),
          dirty: panel.context.model.dirty, status: panel.sessionContext.kernelDisplayStatus};
}"""
_DIRTY_TAB = "#jp-main-dock-panel .lm-TabBar-tab.jp-mod-dirty"


class Reader:
    """One browser page on the reader's Lab, with the notebook ``name`` open."""

    def __init__(self, browser, base: str, name: str):
        self.page = browser.new_page(viewport={"width": 1400, "height": 900})
        self.page.set_default_timeout(TIMEOUT_MS)
        self.name = name
        self.page.goto(f"{base}/lab/tree/{name}?reset&token={TOKEN}")
        self.page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell")
        self.state = self.page.evaluate(_AFTER_KERNEL)

    def dirty(self) -> bool:
        return self.page.locator(_DIRTY_TAB).count() > 0

    def save(self) -> None:
        """Ctrl+S in command mode; returns once the server has written the files."""
        self.page.keyboard.press("Escape")
        with self.page.expect_response(
                lambda response: "/api/contents/" in response.url and response.request.method == "PUT") as saved:
            self.page.keyboard.press("Control+s")
        assert saved.value.ok, f"saving {self.name} failed: HTTP {saved.value.status}"
        self.page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")

    def close(self, base: str) -> None:
        self.page.close()
        # Stop this page's kernel: the next page starts its own.
        for session in json.loads(_request(f"{base}/api/sessions")[1]):
            _request(f"{base}/api/sessions/{session['id']}", "DELETE")


def _log_problems(log: Path) -> list[str]:
    markers = ("[W ", "[E ", "[C ", "WARNING", "ERROR", "Traceback")
    return [line for line in log.read_text().splitlines() if any(marker in line for marker in markers)]


def _open_and_save_unchanged(browser, lab, screenshots, name: str, shot: str) -> dict:
    repository, base, log = lab
    assert _git(repository, "status", "--porcelain") == ""
    reader = Reader(browser, base, name)
    try:
        state = reader.state
        assert state["status"] == "idle", f"the kernel did not start: {state['status']}"
        assert state["notebook"] == state["kernel"], "Lab did not take the kernel's language_info"
        reader.page.screenshot(path=str(screenshots / f"lab-{shot}-opened.png"))
        assert not reader.dirty() and not state["dirty"], (
            f"{name} shows the unsaved mark as soon as the kernel answers (language_info {state['kernel']})")
        reader.save()
        reader.page.screenshot(path=str(screenshots / f"lab-{shot}-saved.png"))
        assert not reader.dirty()
    finally:
        reader.close(base)
    changed = _git(repository, "status", "--porcelain")
    assert changed == "", f"saving {name} unchanged from Lab changed the repository:\n{changed}\n" + _git(
        repository, "diff")
    assert not _log_problems(log), "make lab logged:\n" + "\n".join(_log_problems(log))
    return state


@pytest.mark.parametrize("name", ["05_experiment_1.py", "01_problem_setup.py"])
def test_opening_a_notebook_marks_nothing_unsaved_and_saving_it_leaves_git_clean(browser, lab, screenshots, name):
    _open_and_save_unchanged(browser, lab, screenshots, name, Path(name).stem[:2] + Path(name).suffix.replace(".", "-"))


def test_a_markdown_edit_reaches_the_script_and_the_notebook_and_nothing_else(browser, lab, screenshots):
    repository, base, log = lab
    assert _git(repository, "status", "--porcelain") == ""
    marker = "Edited in the browser."
    reader = Reader(browser, base, "05_experiment_1.py")
    try:
        title = reader.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell").first
        title.click()
        reader.page.keyboard.press("Enter")  # edit the cell's source
        reader.page.keyboard.press("Control+End")
        reader.page.keyboard.type(f" {marker}")
        reader.page.keyboard.press("Escape")
        reader.page.wait_for_selector(_DIRTY_TAB)  # the mark the tests above look for does appear
        reader.save()
        reader.page.screenshot(path=str(screenshots / "lab-05-edited-saved.png"))
        assert not reader.dirty()
    finally:
        reader.close(base)
    try:
        changed = sorted(line[3:] for line in _git(repository, "status", "--porcelain").splitlines())
        assert changed == ["notebooks/05_experiment_1.ipynb", "notebooks/05_experiment_1.py"], changed
        for path in changed:
            diff = _git(repository, "diff", "-U0", "--", path).splitlines()
            added = [line[1:] for line in diff if line.startswith("+") and not line.startswith("+++")]
            removed = [line[1:] for line in diff if line.startswith("-") and not line.startswith("---")]
            # One line of the first cell, with the words appended: the rest of the file is as it was.
            assert len(added) == len(removed) == 1, f"{path}:\n" + "\n".join(diff)
            assert marker in added[0] and marker not in removed[0], f"{path}:\n" + "\n".join(diff)
            assert added[0].replace(f" {marker}", "") == removed[0], f"{path}:\n" + "\n".join(diff)
        assert not _log_problems(log), "make lab logged:\n" + "\n".join(_log_problems(log))
    finally:
        _git(repository, "checkout", "-q", "--", ".")


def test_saving_stays_clean_for_notebooks_stored_with_another_python_patch_version(browser, lab, screenshots):
    # The committed notebooks hold no language_info; here one holds the block a machine
    # with another patch version of this Python would have written.
    repository, base, log = lab
    path = repository / "notebooks" / "01_problem_setup.ipynb"
    notebook = nbformat.read(path, as_version=4)
    major, minor, micro = sys.version_info[:3]
    other = f"{major}.{minor}.{micro + 1}"
    notebook.metadata["language_info"] = {
        "codemirror_mode": {"name": "ipython", "version": major}, "file_extension": ".py",
        "mimetype": "text/x-python", "name": "python", "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3", "version": other}
    path.write_text(nbformat.writes(notebook) + "\n", encoding="utf-8")
    # A checkout writes the script after its notebook (Jupytext warns about a notebook newer than its script).
    path.with_suffix(".py").touch()
    _git(repository, "commit", "-q", "-am", f"notebook 1 as stored with Python {other}")
    try:
        state = _open_and_save_unchanged(browser, lab, screenshots, "01_problem_setup.py", "01-other-python")
        assert state["kernel"]["version"] != other
        assert nbformat.read(path, as_version=4).metadata["language_info"]["version"] == other
    finally:
        _git(repository, "reset", "-q", "--hard", "HEAD~1")
        path.with_suffix(".py").touch()


def test_each_notebook_is_offered_in_one_form_so_no_two_tabs_drift_apart(browser, lab, screenshots):
    # Two tabs of one notebook (the script and its executed copy) would each run a kernel
    # and keep their own edits; saving one makes the other's next save fail ("File Changed").
    repository, base, log = lab
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(f"{base}/lab?reset&token={TOKEN}")
        listing = page.locator(".jp-DirListing-item .jp-DirListing-itemText")
        listing.first.wait_for()
        shown = sorted(listing.all_inner_texts())
        for stem in NOTEBOOKS:
            assert f"{stem}.py" in shown and f"{stem}.ipynb" not in shown, f"the file browser lists {shown}"
    finally:
        page.close()
    # A link to the executed copy (a bookmark, the README's form) opens the script.
    reader = Reader(browser, base, "01_problem_setup.ipynb")
    try:
        reader.page.screenshot(path=str(screenshots / "lab-01-ipynb-link.png"))
        assert reader.page.url.split("?")[0].endswith("/lab/tree/01_problem_setup.py"), reader.page.url
        tabs = reader.page.locator("#jp-main-dock-panel .lm-TabBar-tab").all_inner_texts()
        assert [tab.strip() for tab in tabs] == ["01_problem_setup.py"], tabs
        assert reader.state["status"] == "idle" and not reader.dirty()
    finally:
        reader.close(base)
    # Any other way in (Lab's "Open from Path", the contents API) is refused with a message
    # naming the script, for reading and for writing; the copy's file itself stays served.
    model = json.loads(_request(f"{base}/api/contents/01_problem_setup.py?type=notebook&content=1")[1])
    for method, body in (("GET", None), ("PUT", {"type": "notebook", "format": "json", "content": model["content"]})):
        with pytest.raises(urllib.error.HTTPError) as refused:
            _request(f"{base}/api/contents/01_problem_setup.ipynb" + ("?type=notebook&content=1" if body is None
                                                                          else ""), method, body)
        assert refused.value.code == 409, method
        assert "open 01_problem_setup.py" in refused.value.read().decode(), method
    status, text = _request(f"{base}/api/contents/01_problem_setup.ipynb?type=file&content=1")
    assert status == 200 and json.loads(text)["type"] == "file"
    assert _git(repository, "status", "--porcelain") == ""
    # The server logs the two refusals above as warnings (the module's tests that forbid
    # any warning run before this one); nothing else.
    refusals = ("409 GET /api/contents/01_problem_setup.ipynb", "409 PUT /api/contents/01_problem_setup.ipynb",
                "wrote error: '01_problem_setup.ipynb is the executed copy of 01_problem_setup.py")
    problems = [line for line in _log_problems(log) if not any(refusal in line for refusal in refusals)]
    assert not problems, "make lab logged:\n" + "\n".join(problems)


def test_saving_through_the_contents_api_leaves_git_clean(lab):
    repository, base, log = lab
    name = "05_experiment_1"
    status, text = _request(f"{base}/api/contents/{name}.py?type=notebook&content=1")
    model = json.loads(text)
    assert status == 200 and model["type"] == "notebook"
    assert len(model["content"]["cells"]) > 10, "the script was not read as a notebook"
    outputs = sum(len(cell.get("outputs", [])) for cell in model["content"]["cells"] if cell["cell_type"] == "code")
    assert outputs > 0, "Lab did not pair the script with its executed notebook (no outputs)"
    status, _ = _request(f"{base}/api/contents/{name}.py", "PUT",
                         {"type": "notebook", "format": "json", "content": model["content"]})
    assert status == 200
    changed = _git(repository, "status", "--porcelain")
    assert changed == "", f"saving {name}.py unchanged from Lab changed the repository:\n{changed}\n" + \
        _git(repository, "diff", "--stat")


def test_the_readers_lab_shows_the_notebooks_without_tools_or_teacher_tools(lab):
    repository, base, log = lab
    status, text = _request(f"{base}/api/contents/")
    assert status == 200
    names = {entry["name"] for entry in json.loads(text)["content"]}
    assert "05_experiment_1.py" in names, "Lab is not in notebooks/"
    assert not names & {"_book", "_tools"}, f"the file browser shows the build tools: {sorted(names)}"
    status, page = _request(f"{base}/lab")
    config = json.loads(page.split('id="jupyter-config-data"', 1)[1].split(">", 1)[1].split("</script>", 1)[0])
    assert "@jupyter/nbgrader" in config.get("disabledExtensions", []), "nbgrader's Lab extension is enabled"
    assert "nbgrader" not in log.read_text(), "nbgrader's server extensions were loaded"


def _reader_contents():
    from notebooks._tools.lab.reader_lab import reader_contents

    return reader_contents


def test_the_readers_lab_demotes_only_notices_a_reader_cannot_act_on():
    pytest.importorskip("jupytext", reason="the notebooks extra is not installed")
    import logging

    from tornado.websocket import WebSocketClosedError

    quiet = _reader_contents().QuietLogFilter()

    def record(level, message, error=None):
        exc_info = (type(error), error, None) if error else None
        return logging.LogRecord("ServerApp", level, __file__, 1, message, None, exc_info)

    trust = record(logging.WARNING, "Notebook 05_experiment_1.ipynb is not trusted")
    ping = record(logging.WARNING, "The websocket_ping_timeout (90000) cannot be longer than the "
                                   "websocket_ping_interval (30000).\nSetting websocket_ping_timeout=30000")
    for notice in (trust, ping):
        assert quiet.filter(notice) and notice.levelno == logging.INFO and notice.levelname == "INFO"
    assert not quiet.filter(record(logging.ERROR, "Task exception was never retrieved", WebSocketClosedError()))
    other = record(logging.WARNING, "Notebook 05_experiment_1.ipynb is more recent than 05_experiment_1.py")
    assert quiet.filter(other) and other.levelno == logging.WARNING
    failure = record(logging.ERROR, "Task exception was never retrieved", RuntimeError("a real failure"))
    assert quiet.filter(failure) and failure.levelno == logging.ERROR


def test_a_saved_notebook_keeps_the_language_info_of_its_file(tmp_path):
    pytest.importorskip("jupytext", reason="the notebooks extra is not installed")
    keep = _reader_contents().keep_stored_language_info

    class Contents:
        def _get_os_path(self, path):
            return str(tmp_path / path)

    stored = {"name": "python", "version": "3.11.0"}
    running = {"name": "python", "version": "3.12.9"}
    (tmp_path / "stored.ipynb").write_text(json.dumps({"metadata": {"language_info": stored}, "cells": []}))
    (tmp_path / "bare.ipynb").write_text(json.dumps({"metadata": {}, "cells": []}))
    for name, expected in (("stored.ipynb", stored), ("bare.ipynb", None), ("new.ipynb", None)):
        model = {"type": "notebook", "content": {"metadata": {"language_info": dict(running), "kernelspec": {}}}}
        keep(model=model, path=name, contents_manager=Contents())
        assert model["content"]["metadata"].get("language_info") == expected, name
        assert model["content"]["metadata"]["kernelspec"] == {}
    text = {"type": "file", "content": "print(1)\n"}
    keep(model=text, path="script.py", contents_manager=Contents())
    assert text == {"type": "file", "content": "print(1)\n"}


def test_a_notebook_counts_as_an_executed_copy_only_where_jupytext_pairs_it(tmp_path):
    # The student kit's Lab has no pairing: a script a student exports beside a notebook
    # must not lock the notebook away.
    pytest.importorskip("jupytext", reason="the notebooks extra is not installed")
    import asyncio
    import concurrent.futures

    manager_class = _reader_contents().ReaderContentsManager
    for folder in ("paired", "kit"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "01_problem_setup.py").write_text("# %%\nprint(1)\n")
        (tmp_path / folder / "01_problem_setup.ipynb").write_text(
            json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    shutil.copy2(ROOT / "notebooks" / "jupytext.toml", tmp_path / "paired" / "jupytext.toml")
    for folder, paired in (("paired", True), ("kit", False)):
        manager = manager_class(root_dir=str(tmp_path / folder))
        # In a thread of its own: a browser test before this one may leave an event loop running here.
        with concurrent.futures.ThreadPoolExecutor(1) as thread:
            script = thread.submit(asyncio.run, manager._script_of("01_problem_setup.ipynb")).result()
        assert script == ("01_problem_setup.py" if paired else None), folder
