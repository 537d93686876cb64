"""A hostile class graded through the real command, as root and as an ordinary user.

Notebook 1 is handed in by an honest student and by students who attack grading: an
answer that probes the sandbox (a bind mount to escape, reading a second checkout of
the repository, connecting to a Unix socket of the host, the teacher's environment), a
fork bomb, a flood of printed output, a hidden student folder, and hand-ins that are
symbolic links to the instructor's version. Each attack must fail and be named, and the
honest student gets full marks. Each protection is then shown to matter: the same
attack, run in the sandbox with that protection taken out, succeeds.

Run as root, the class is graded twice: as root, and as an ordinary user (uid 65534,
through ``conftest.as_ordinary_user``); run as an ordinary user, once.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
from conftest import as_ordinary_user, remove_tree, require_confinement

ROOT = Path(__file__).resolve().parents[1]
NAME = "01_problem_setup"
EXPECTED = f"{NAME}/{NAME}.ipynb"
SECRET = "teacher-token-8c1f"
#: Forks a bomb tries, far above the sandbox's limit of processes.
BOMB = 2000

pytest.importorskip("nbgrader", reason="the classroom extra is not installed: pip install -e '.[classroom]'")
if not sys.platform.startswith("linux") or shutil.which("bwrap") is None:
    pytest.skip("bubblewrap confines grading on Linux only (apt-get install bubblewrap)", allow_module_level=True)

#: What the probing answer tries, printed as JSON after ``PROBE``: which capabilities it has, whether a bind
#: mount works, the files and Unix sockets it reaches, the teacher's secret, and how many processes it starts.
PROBE = """\
import json as _json
import os as _os
import socket as _socket
import subprocess as _subprocess
import sys as _sys

def _probe(paths, sockets, forks, keep=False):
    report = {"CapEff": open("/proc/self/status").read().split("CapEff:")[1].split()[0]}
    _os.makedirs("escape", exist_ok=True)
    # A tmpfs, not a bind of /: were the sandbox broken, the mount must harm nothing, and it is undone at once.
    mount = _subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "escape"], capture_output=True)
    report["mount"] = mount.returncode
    if mount.returncode == 0:
        _subprocess.run(["umount", "-l", "escape"], capture_output=True)
    report["secret"] = {name: value for name, value in _os.environ.items() if "SECRET" in name}
    for path in paths:
        try:
            with open(path, "rb") as stream:
                stream.read(10)
            report[path] = "read"
        except OSError as error:
            report[path] = type(error).__name__
    for path in sockets:
        client = _socket.socket(_socket.AF_UNIX)
        try:
            client.connect(path)
            report[path] = "connected"
        except OSError as error:
            report[path] = type(error).__name__
        client.close()
    started = []
    try:
        for _ in range(forks):
            started.append(_subprocess.Popen(["sleep", "60"]))
    except OSError as error:
        report["fork error"] = type(error).__name__
    report["forks"] = len(started)
    for process in [] if keep else started:
        process.kill()
        process.wait()
    return report

"""
#: Memory the children of the memory attack touch, each (MB), and how many there are.
CHILD_MB, CHILDREN = 300, 4
MEMORY = f"""\
import os, sys
pids = []
for _ in range({CHILDREN}):
    pid = os.fork()
    if pid == 0:
        block = bytearray({CHILD_MB} * 2**20)
        for index in range(0, len(block), 4096):
            block[index] = 1
        os._exit(0)
    pids.append(pid)
print(sum(os.waitpid(pid, 0)[1] == 0 for pid in pids))
"""


def _solution(notebook, cell_id: str) -> str:
    return next(cell.source for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade_id") == cell_id)


def _with(notebook, cell_id: str, prefix: str):
    changed = nbformat.from_dict(notebook)
    for cell in changed.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == cell_id:
            cell.source = prefix + cell.source
    return changed


class Outside:
    """What the host holds that an answer must not reach: a second checkout with its solutions, a listening socket."""

    def __init__(self, folder: Path):
        self.checkout = folder / "another-checkout" / "notebooks" / f"{NAME}.py"
        self.checkout.parent.mkdir(parents=True)
        shutil.copy(ROOT / "notebooks" / f"{NAME}.py", self.checkout)
        self.socket_path = str(folder / "service.sock")
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(self.socket_path)
        os.chmod(self.socket_path, 0o777)
        self.server.listen(8)
        self.server.settimeout(0)
        self.paths = [str(self.checkout), str(ROOT / "notebooks" / f"{NAME}.py"), "/etc/shadow"]

    def accepted(self) -> int:
        count = 0
        while True:
            try:
                self.server.accept()[0].close()
                count += 1
            except OSError:
                return count


@pytest.fixture(scope="module")
def outside():
    # Not under /tmp, which every sandbox replaces with its own.
    folder = Path(tempfile.mkdtemp(prefix="gbai-outside-", dir="/var/tmp"))
    os.chmod(folder, 0o755)
    state = Outside(folder)
    yield state
    state.server.close()
    remove_tree(folder)


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """The course of notebook 1, made once; each identity grades a copy."""
    require_confinement()
    folder = tmp_path_factory.mktemp("hostile") / "course"
    subprocess.run([sys.executable, "-m", "notebooks._tools", "assignments", "01", "--output", str(folder)],
                   cwd=ROOT, check=True, capture_output=True)
    return folder


def _hand_in(folder: Path, outside: Outside) -> None:
    source = nbformat.read(folder / "source" / NAME / f"{NAME}.ipynb", as_version=4)
    probe = PROBE + (f"print('PROBE ' + _json.dumps(_probe({outside.paths!r}, "
                                          f"{[outside.socket_path]!r}, 0)))\n\n")
    bomb = PROBE + f"_bombed = _probe([], [], {BOMB}, keep=True)\n_bombed.pop('secret')\n" \
                                        f"print('BOMB ' + _json.dumps(_bombed))\n\n"
    flood = "import sys as _sys\n\nfor _ in range(200):\n    _sys.stdout.write('x' * 2**20)\n\n"
    students = {"honest": source, "prober": _with(source, "nb01_ex1_solution", probe),
                "bomber": _with(source, "nb01_ex2_solution", bomb),
                "flooder": _with(source, "nb01_ex1_solution", flood), ".eve": source,
                # An error raised inside gbai: its traceback names gbai's files, by absolute path in the kernel.
                "crasher": _with(source, "nb01_ex3_solution", "gbai.Instance([[1.5, 0.2]], threshold=0.3)\n\n")}
    for student, notebook in students.items():
        (folder / "submitted" / student / NAME).mkdir(parents=True)
        nbformat.write(notebook, folder / "submitted" / student / EXPECTED)
    # A notebook that is a link to the instructor's version, and a student folder that links to a folder holding it.
    (folder / "submitted" / "linker" / NAME).mkdir(parents=True)
    (folder / "submitted" / "linker" / EXPECTED).symlink_to(folder / "source" / NAME / f"{NAME}.ipynb")
    (folder / "submitted" / "folderlink").symlink_to(folder / "source")


def _grade(released: Path, outside: Outside, identity: str, tmp_path_factory) -> dict:
    """Hand in the class in a copy of the course and grade it with make autograde's command, then make feedback's."""
    base = Path(tempfile.mkdtemp(prefix=f"gbai-hostile-{identity}-"))
    folder = base / "course"
    shutil.copytree(released, folder)
    _hand_in(folder, outside)
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "TQDM_DISABLE": "1", "GBAI_TEST_SECRET": SECRET,
                   "PYTHONDONTWRITEBYTECODE": "1"}
    wrap = list
    if identity == "user" and os.getuid() == 0:
        uid = 65534
        environment["HOME"] = str(base / "home")
        (base / "home").mkdir()
        for path in [base, *base.rglob("*")]:
            os.lchown(path, uid, uid)
        os.chmod(base, 0o755)
        wrap = as_ordinary_user
    runs = {}
    for command in ("autograde", "feedback"):
        # No assignment selection: a hidden or linked student folder could hold any assignment.
        arguments = [command, "--output", str(folder)] + (["--timeout", "120"] if command == "autograde" else [])
        runs[command] = subprocess.run(wrap([sys.executable, "-m", "notebooks._tools", *arguments]), cwd=ROOT,
                                       capture_output=True, text=True, env=environment, timeout=900)
    return {"folder": folder, "accepted": outside.accepted(), **runs}


IDENTITIES = ["root", "user"] if os.getuid() == 0 else ["user"]


@pytest.fixture(scope="module", params=IDENTITIES)
def graded(request, released, outside, tmp_path_factory):
    result = _grade(released, outside, request.param, tmp_path_factory)
    yield result
    remove_tree(result["folder"].parent)


def _printed(folder: Path, student: str, marker: str) -> dict:
    notebook = nbformat.read(folder / "autograded" / student / NAME / f"{NAME}.ipynb", as_version=4)
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            for line in output.get("text", "").splitlines():
                if line.startswith(marker + " "):
                    return json.loads(line[len(marker) + 1:])
    raise AssertionError(f"{student} printed no {marker}")


def _scores(folder: Path):
    import pandas as pd

    return pd.read_csv(folder / "grades.csv", dtype={"reason": str}, keep_default_na=False)


def test_the_class_is_graded_confined_and_the_honest_student_gets_full_marks(graded):
    run = graded["autograde"]
    assert run.returncode == 3, run.stderr[-3000:]
    first = run.stdout.splitlines()[0]
    assert first.startswith("answers run confined (bubblewrap, as uid 65534 in a user namespace, no capabilities)")
    assert "no process limit" not in first
    scores = _scores(graded["folder"])
    for student in ("honest", "prober", "flooder"):
        mine = scores[(scores["student"] == student) & (scores["kind"] == "auto")]
        assert len(mine) == 3 and (mine["score"].astype(float) == mine["points"].astype(float)).all(), student
    assert graded["feedback"].returncode == 0, graded["feedback"].stderr[-3000:]


def test_an_answer_reaches_nothing_of_the_host_nor_the_teachers_environment(graded, outside):
    report = _printed(graded["folder"], "prober", "PROBE")
    assert report["CapEff"] == "0000000000000000" and report["mount"] != 0, report
    assert report["secret"] == {}, report
    for path in outside.paths:
        assert report[path] == "FileNotFoundError", (path, report)
    assert report[outside.socket_path] == "FileNotFoundError" and graded["accepted"] == 0, report
    # Nothing of the teacher's environment on any page a student sees, nor in the graded notebooks.
    for page in [*(graded["folder"] / "feedback").rglob("*.html"), *(graded["folder"] / "autograded").rglob("*.ipynb")]:
        assert SECRET not in page.read_text(errors="replace"), page
    # Nor a path of the teacher's machine: the crasher's page shows gbai's traceback by file name alone.
    crashed = (graded["folder"] / "feedback" / "crasher" / NAME / f"{NAME}.html").read_text()
    assert "ValueError" in crashed and "model.py" in crashed, crashed[-3000:]
    # (The prober's own cells name host paths, as its answer: the pages of the others must name none.)
    for page in (graded["folder"] / "feedback" / student / NAME / f"{NAME}.html" for student in ("honest", "crasher")):
        text = page.read_text(errors="replace")
        for host in {str(ROOT), str(Path(sys.prefix).resolve()), str(Path(sys.base_prefix).resolve())}:
            assert host not in text, (page, host)


def test_a_fork_bomb_and_a_flood_of_output_are_stopped_and_named(graded):
    from notebooks._tools.course.sandbox import OUTPUT_MB, PROCESSES

    folder, run = graded["folder"], graded["autograde"]
    bombed = _printed(folder, "bomber", "BOMB")
    assert bombed["forks"] < PROCESSES and bombed["fork error"] == "BlockingIOError", bombed
    lines = run.stdout.splitlines()
    # The bomb's processes live on: the cells after it may reach the limit too.
    assert any(line.startswith("bomber ") and re.search(r"; limit in exercise 2\b", line) for line in lines), lines
    assert any(line.startswith("flooder ") and line.endswith("; limit in exercise 1") for line in lines), lines
    assert (f"autograde: bomber/{EXPECTED}: exercise 2, your answer: the kernel reached its limit of {PROCESSES} "
            f"processes (cell nb01_ex2_solution)") in run.stderr.splitlines()
    scores = _scores(folder)
    limited = scores[scores["status"] == "limit"]
    named = set(zip(limited["student"], limited["exercise"].astype(int)))
    assert ("bomber", 2) in named and {exercise for student, exercise in named if student == "flooder"} == {1}
    assert all(f"limit of {PROCESSES} processes" in reason for reason in limited[limited["student"] == "bomber"]
               ["reason"])
    # 200 MB printed: the graded notebook and the feedback page keep a few MB and say what was cut.
    notebook = folder / "autograded" / "flooder" / NAME / f"{NAME}.ipynb"
    page = folder / "feedback" / "flooder" / NAME / f"{NAME}.html"
    for path in (notebook, page):
        assert path.stat().st_size < (OUTPUT_MB + 2) * 2**20, (path, path.stat().st_size)
        assert f"output cut here, the notebook's output is kept up to {OUTPUT_MB} MB" in path.read_text()
    assert "this cell's output was cut" in page.read_text()


def test_hidden_folders_and_links_are_refused_and_named_without_a_host_path(graded):
    folder, run = graded["folder"], graded["autograde"]
    assert run.stderr.splitlines()[:3] == [
        "autograde: .eve: is a folder whose name starts with a dot (hidden): rename it to the student's id; not graded",
        "autograde: folderlink: is a symbolic link, not a folder: hand in the notebook itself; not graded",
        f"autograde: linker/{EXPECTED}: is a symbolic link: hand in the file itself, not a link to it; not graded"]
    scores = _scores(folder)
    refused = scores[scores["status"] == "not graded"]
    assert sorted(refused["student"]) == [".eve", "folderlink", "linker"]
    assert not (folder / "autograded" / "linker").exists() and not (folder / "autograded" / "folderlink").exists()
    for student in (".eve", "folderlink", "linker"):
        pages = list((folder / "feedback" / student).rglob("*.html"))
        assert pages, student
        for page in pages:
            text = page.read_text()
            assert "not graded" in text and str(folder) not in text and "/tmp/" not in text, (page, text)


def test_formgraders_autograde_is_switched_off_with_a_message(released, tmp_path):
    # formgrader's button runs nbgrader's autograde with the course's nbgrader_config.py, as this command does.
    folder = tmp_path / "course"
    shutil.copytree(released, folder)
    (folder / "submitted" / "honest" / NAME).mkdir(parents=True)
    shutil.copy(folder / "source" / NAME / f"{NAME}.ipynb", folder / "submitted" / "honest" / EXPECTED)
    completed = subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "autograde", NAME, "--force"],
                               cwd=folder, capture_output=True, text=True,
                               env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    said = completed.stdout + completed.stderr
    assert completed.returncode != 0 and "grade with `make autograde`" in said, said[-3000:]
    assert not (folder / "autograded" / "honest" / NAME / f"{NAME}.ipynb").exists()


# Each protection taken out of the sandbox, one at a time: the same attack then succeeds.

def _sandboxed(code: str, weaken=None, cgroups: bool = False, memory_gb: float = 4) -> tuple[dict | str, dict]:
    """Run ``code`` in a grading sandbox (its command changed by ``weaken``); what it printed and the cap counters."""
    from notebooks._tools.course import sandbox

    confined = sandbox.confinement(memory_gb)
    if not cgroups:
        confined = sandbox.Confinement(confined.bwrap, memory_gb, confined.readable, (), confined.capabilities)
    with tempfile.TemporaryDirectory(prefix="gbai-weak-") as private, tempfile.TemporaryDirectory() as workdir:
        script, connection = Path(private) / "attack.py", Path(private) / "connection.json"
        script.write_text(code)
        connection.touch()
        groups = sandbox._new_cgroups(confined)
        try:
            command = sandbox.sandbox_command(confined, [sys.executable, str(script)], workdir, private,
                                              str(connection), groups)
            completed = subprocess.run(weaken(command) if weaken else command, capture_output=True, text=True,
                                       env={**os.environ, "GBAI_TEST_SECRET": SECRET}, timeout=300)
            hits = sandbox._cgroup_hits(groups)
        finally:
            sandbox._remove_cgroups(groups)
    assert completed.returncode == 0, completed.stderr[-2000:]
    text = completed.stdout.strip().splitlines()[-1]
    return (json.loads(text) if text.startswith("{") else text), hits


def _without(*options: str):
    """A change of a sandbox command that leaves out these options, each with the values after it in ``options``."""
    def weaken(command: list[str]) -> list[str]:
        out, index = [], 0
        while index < len(command):
            length = next((len(group) for group in _groups(options) if command[index:index + len(group)] == group), 0)
            if length:
                index += length
            else:
                out.append(command[index])
                index += 1
        return out
    return weaken


def _groups(options):
    groups, current = [], []
    for option in options:
        if option.startswith("--") and current:
            groups.append(current)
            current = []
        current.append(option)
    return [*groups, current]


def _attack(outside: Outside, forks: int = 0) -> str:
    return PROBE + (f"print(_json.dumps(_probe({outside.paths[:2]!r}, "
                                         f"{[outside.socket_path]!r}, {forks})))\n")


@pytest.mark.skipif(os.getuid() != 0, reason="the bind-mount escape needs root to start the sandbox")
def test_without_a_user_namespace_root_keeps_its_capabilities_and_mounts():
    code = "import subprocess, os\nos.mkdir('h')\nprint(subprocess.run(['mount', '--bind', '/', 'h']).returncode)\n"
    assert _sandboxed(code)[0] != "0"
    weaken = _without("--unshare-user", "--uid", "65534", "--gid", "65534", "--cap-drop", "ALL", "--disable-userns")
    assert _sandboxed(code, weaken)[0] == "0"


def test_without_the_allow_list_an_answer_reads_a_second_checkout_and_connects_to_host_sockets(outside, monkeypatch):
    from notebooks._tools.course import sandbox

    report, _ = _sandboxed(_attack(outside))
    assert [report[path] for path in [*outside.paths[:2], outside.socket_path]] == ["FileNotFoundError"] * 3
    assert outside.accepted() == 0
    monkeypatch.setattr(sandbox, "_allowed", lambda confined: ["--ro-bind", "/", "/"])
    report, _ = _sandboxed(_attack(outside))
    assert [report[path] for path in [*outside.paths[:2], outside.socket_path]] == ["read", "read", "connected"]
    assert outside.accepted() == 1


def test_without_a_clean_environment_the_teachers_secret_reaches_the_answer(outside):
    assert _sandboxed(_attack(outside))[0]["secret"] == {}
    assert _sandboxed(_attack(outside), _without("--clearenv"))[0]["secret"] == {"GBAI_TEST_SECRET": SECRET}


def test_without_the_process_limit_a_fork_bomb_goes_past_it(outside):
    from notebooks._tools.course.sandbox import PROCESSES

    forks = PROCESSES + 100
    cgroups = os.getuid() == 0
    report, hits = _sandboxed(_attack(outside, forks), cgroups=cgroups)
    assert report["forks"] < PROCESSES and (not cgroups or hits["pids"] > 0), (report, hits)
    report, _ = _sandboxed(_attack(outside, forks), _without(f"--nproc={PROCESSES}"))
    assert report["forks"] == forks, report


@pytest.mark.skipif(os.getuid() != 0, reason="a cgroup caps the memory of all of a kernel's processes: root only")
def test_without_the_cgroup_the_kernels_processes_together_pass_the_memory_limit():
    # Each child stays under the limit per process; together they pass it.
    survived, hits = _sandboxed(MEMORY, cgroups=True, memory_gb=CHILD_MB * CHILDREN / 2 / 1024)
    assert int(survived) < CHILDREN and hits["memory"] > 0, (survived, hits)
    assert _sandboxed(MEMORY, memory_gb=CHILD_MB * CHILDREN / 2 / 1024)[0] == str(CHILDREN)
