"""make lab for readers: opening a notebook and saving it unchanged leaves the repository clean.

The test starts ``make lab``'s server (the Makefile's own command, in a scratch git
repository holding notebook 5's pair and the pairing configuration), reads
``05_experiment_1.py`` as a notebook through the contents API, as JupyterLab does when
a reader opens it, saves it back unchanged, and asks git what changed. It also checks
that nbgrader's teacher tools stay out of the reader's Lab.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "05_experiment_1"
TOKEN = "gbai-test-token"

pytestmark = pytest.mark.lab


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


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
    (repository / "notebooks").mkdir()
    for name in (f"{NOTEBOOK}.py", f"{NOTEBOOK}.ipynb", "jupytext.toml"):
        shutil.copy2(ROOT / "notebooks" / name, repository / "notebooks" / name)
    shutil.copytree(ROOT / "notebooks" / "_tools" / "reader_lab", repository / "notebooks" / "_tools" / "reader_lab")
    (repository / ".gitignore").write_text((ROOT / ".gitignore").read_text())
    _git(repository, "init", "-q")
    _git(repository, "add", "-A")
    _git(repository, "commit", "-q", "-m", "the notebook as committed")
    port = _free_port()
    log = repository.parent / "lab.log"
    # The Makefile's lab target, run in the scratch repository with this interpreter's
    # environment (STAMP= skips the install step).
    command = ["make", "--no-print-directory", "-f", str(ROOT / "Makefile"), "-C", str(repository), "lab",
               f"VENV={sys.prefix}", "STAMP=", f"LAB_PORT={port}",
               f"LAB_ARGS=--no-browser --ip=127.0.0.1 --IdentityProvider.token={TOKEN}"]
    environment = {**os.environ, "JUPYTER_PREFER_ENV_PATH": "1"}
    with open(log, "w") as stream:
        server = subprocess.Popen(command, stdout=stream, stderr=subprocess.STDOUT, env=environment,
                                  start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            if server.poll() is not None:
                pytest.fail(f"make lab stopped (exit {server.returncode}):\n{log.read_text()[-3000:]}")
            try:
                if _request(f"{base}/api/status")[0] == 200:
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)
        else:
            pytest.fail(f"make lab did not answer:\n{log.read_text()[-3000:]}")
        yield repository, base, log
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def test_opening_and_saving_a_notebook_unchanged_leaves_git_clean(lab):
    repository, base, log = lab
    status, text = _request(f"{base}/api/contents/{NOTEBOOK}.py?type=notebook&content=1")
    model = json.loads(text)
    assert status == 200 and model["type"] == "notebook"
    assert len(model["content"]["cells"]) > 10, "the script was not read as a notebook"
    outputs = sum(len(cell.get("outputs", [])) for cell in model["content"]["cells"] if cell["cell_type"] == "code")
    assert outputs > 0, "Lab did not pair the script with its executed notebook (no outputs)"
    status, _ = _request(f"{base}/api/contents/{NOTEBOOK}.py", "PUT",
                         {"type": "notebook", "format": "json", "content": model["content"]})
    assert status == 200
    changed = _git(repository, "status", "--porcelain")
    assert changed == "", f"saving {NOTEBOOK}.py unchanged from Lab changed the repository:\n{changed}\n" + \
        _git(repository, "diff", "--stat")


def test_the_readers_lab_opens_in_the_notebooks_without_teacher_tools(lab):
    repository, base, log = lab
    status, text = _request(f"{base}/api/contents/")
    assert status == 200
    assert f"{NOTEBOOK}.py" in {entry["name"] for entry in json.loads(text)["content"]}, "Lab is not in notebooks/"
    status, page = _request(f"{base}/lab")
    config = json.loads(page.split('id="jupyter-config-data"', 1)[1].split(">", 1)[1].split("</script>", 1)[0])
    assert "@jupyter/nbgrader" in config.get("disabledExtensions", []), "nbgrader's Lab extension is enabled"
    assert "nbgrader" not in log.read_text(), "nbgrader's server extensions were loaded"
