"""Shared fixtures: a real browser (the system's Chromium, driven by Playwright), and the built book.

Tests that look at pages as a reader does (``make lab`` in tests/test_lab.py, the book
in tests/test_classroom.py and tests/test_book_site.py) take the ``browser`` fixture.
Without a browser they skip with a one-line reason on a user's machine and fail in CI
(``CI`` set), where ``.ci/run`` installs Chromium. ``GBAI_BROWSER`` names the browser
to use. The ``book`` fixture builds the site once per test run, whichever worker asks first.
"""

import contextlib
import fcntl
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

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
ROOT = Path(__file__).resolve().parents[1]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(reason: str, test: str):
    """A missing browser fails the run in CI and skips the test elsewhere."""
    if in_ci():
        pytest.fail(f"CI must run the browser test of {test}, but {reason}")
    pytest.skip(f"{reason}: the browser test of {test} is skipped")


def find_browser() -> str | None:
    named = os.environ.get("GBAI_BROWSER")
    if named:
        return shutil.which(named) or (named if os.access(named, os.X_OK) else None)
    return next((found for found in map(shutil.which, BROWSERS) if found), None)


@pytest.fixture(scope="session")
def browser(request):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("Playwright is not installed (pip install -e '.[test]')", request.node.name)
    executable = find_browser()
    if executable is None:
        unavailable("no Chromium is installed (apt install chromium, or set GBAI_BROWSER)", request.node.name)
    # Chromium refuses to start as root with its sandbox on (containers, CI machines).
    arguments = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=arguments)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="session")
def book(tmp_path_factory) -> Path:
    """The site ``make book`` writes (``python -m notebooks._tools book``), built once for the whole run.

    ``make test`` runs the test files on two pytest-xdist workers, and the book's tests
    sit in two files: the first worker to ask builds the site (about 30 s of one core)
    in the folder both workers' temporary folders share, under a lock, and the other
    waits for it and reads the same site. The tests only read it.
    """
    pytest.importorskip("myst_nb", reason="the book extra is not installed: pip install -e '.[book]'")
    # Under xdist each worker's base folder is popen-gwN inside the run's own folder.
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    site = shared / "book" / "site"
    with open(shared / "book.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (site / "index.html").is_file():
            completed = subprocess.run([sys.executable, "-m", "notebooks._tools", "book", "--output", str(site)],
                                       cwd=ROOT, capture_output=True, text=True)
            assert completed.returncode == 0, completed.stderr[-3000:]
    return site


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def jupyter_server(command: list[str], port: int, token: str, log: Path, **popen):
    """Run ``command`` (a JupyterLab server on ``port``), logging to ``log``; yields its base URL once it answers.

    Waits at most two minutes for ``/api/status``, and stops the server's whole process
    group (a ``make`` target or a launcher script, and the server under it) afterwards.
    """
    with open(log, "w") as stream:
        server = subprocess.Popen(command, stdout=stream, stderr=subprocess.STDOUT, start_new_session=True, **popen)
    base = f"http://127.0.0.1:{port}"
    status = urllib.request.Request(f"{base}/api/status", headers={"Authorization": f"token {token}"})
    try:
        for _ in range(240):
            if server.poll() is not None:
                pytest.fail(f"{command[0]} stopped (exit {server.returncode}):\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(status, timeout=60):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)
        else:
            pytest.fail(f"{command[0]} did not answer:\n{log.read_text()[-3000:]}")
        yield base
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def require_confinement() -> None:
    """Fail, before any hostile code is handed in, when grading here would run answers unconfined.

    A hostile class graded unconfined as root really escapes (a mount, a fork bomb): it is
    never graded so, whatever the machine lacks.
    """
    from notebooks._tools.course.sandbox import confinement

    sandbox = confinement()
    if not sandbox.bwrap:
        pytest.fail(f"grading here would run answers unconfined ({sandbox.reason}): the hostile class is not graded")


def remove_tree(path: Path) -> None:
    """``shutil.rmtree(path)``, after unmounting whatever is mounted under it, so that removing a course never
    follows a mount an answer may have left into the rest of the machine."""
    prefix = str(Path(path).resolve()).rstrip("/") + "/"
    with open("/proc/self/mounts") as stream:
        points = [line.split()[1].encode().decode("unicode_escape") for line in stream]
    for point in sorted((point for point in points if point.startswith(prefix)), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], check=False)
    with open("/proc/self/mounts") as stream:
        left = [line.split()[1] for line in stream if line.split()[1].startswith(prefix)]
    assert not left, f"mounts left under {path}, not removed: {left}"
    shutil.rmtree(path, ignore_errors=True)


def as_ordinary_user(command: list[str], uid: int = 65534) -> list[str]:
    """``command`` prefixed to run as the ordinary user ``uid`` (and its own gid), when the tests run as root.

    The Python that runs the tests may live in a folder that user cannot enter (pyenv
    under ``/root``, mode 700): in a private mount namespace of the command alone, that
    folder is replaced by an empty one with the Python installation bound back in, then
    ``setpriv`` drops to ``uid``. Run as an ordinary user already, the command is
    returned as it is. Whatever the command writes must be owned by, or writable to, ``uid``.
    """
    import shlex
    import tempfile

    if os.getuid() != 0:
        return list(command)
    prefix = Path(sys.base_prefix).resolve()
    closed = next((folder for folder in reversed(prefix.parents) if not folder.stat().st_mode & 0o001), None)
    script = ""
    if closed is not None:
        hold, prefix, closed = (shlex.quote(str(path)) for path in (tempfile.mkdtemp(), prefix, closed))
        script = (f"mount --make-rprivate / && mount --bind {prefix} {hold} && mount -t tmpfs -o mode=755 tmpfs "
                  f"{closed} && mkdir -p {prefix} && mount --bind {hold} {prefix} && umount {hold} && ")
    script += f'exec setpriv --reuid={uid} --regid={uid} --clear-groups "$@"'
    return ["unshare", "--mount", "/bin/sh", "-c", script, "sh", *command]
