"""The lock: ``make install`` installs exact, hashed versions of what ``pyproject.toml`` names.

``requirements.lock`` is generated from ``pyproject.toml`` and every extra by ``make
lock`` (uv's universal resolution, every Python that ``requires-python`` admits, on Linux
and macOS). A dependency added to or dropped from ``pyproject.toml`` without refreshing
the lock fails here, and so does a supported Python for which the lock installs nothing.
``make install`` with any other Python stops at once with one line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from conftest import in_ci
from packaging.markers import Marker, default_environment

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PLATFORMS = ("linux", "darwin")


def _name(requirement: str) -> str:
    """The normalised project name of a requirement string (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1)).lower()


def _entries() -> list[tuple[str, str, list[str]]]:
    """Each locked package: its name, its pinned line and the lines of its ``# via`` note."""
    entries, current = [], None
    for line in LOCK.read_text().splitlines():
        if line and not line[0].isspace() and not line.startswith("#"):
            current = (_name(line), line, [])
            entries.append(current)
        elif current is not None and line.strip().startswith("#"):
            current[2].append(re.sub(r"^#\s*(via\s+)?", "", line.strip()))
    return entries


def test_the_lock_and_pyproject_name_the_same_packages():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    named = {_name(requirement) for requirement in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        named |= {_name(requirement) for requirement in extra}
    direct = {name for name, _, via in _entries() if "gbai (pyproject.toml)" in via}
    assert direct == named, (f"pyproject.toml only: {sorted(named - direct)}; lock only: {sorted(direct - named)}; "
                             "run make lock")


def test_every_locked_package_is_pinned_with_hashes():
    text = LOCK.read_text()
    entries = _entries()
    assert len(entries) > 50
    for name, line, _ in entries:
        assert re.match(r"^[A-Za-z0-9._-]+==[^\s;]+", line), f"{name} is not pinned exactly: {line}"
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])
    for block in blocks:
        assert "--hash=sha256:" in block, f"no hash: {block.splitlines()[0]}"


def supported_pythons() -> list[tuple[int, int]]:
    """The minor versions ``requires-python`` admits; the Makefile reads it the same way, so it must be ">=3.A,<3.B"."""
    declared = PYPROJECT["project"]["requires-python"]
    form = re.fullmatch(r">=3\.(\d+),<3\.(\d+)", declared)
    assert form, f'requires-python should read ">=3.A,<3.B" (the Makefile parses it), not "{declared}"'
    low, high = map(int, form.groups())
    assert low < high, declared
    return [(3, minor) for minor in range(low, high)]


def _environment(platform: str, version: tuple[int, int], patch: int) -> dict[str, str]:
    return default_environment() | {"sys_platform": platform, "platform_system": platform.capitalize(),
                                    "python_version": "%d.%d" % version,
                                    "python_full_version": "%d.%d.%d" % (*version, patch),
                                    "implementation_name": "cpython", "platform_python_implementation": "CPython"}


def test_the_lock_is_resolved_for_every_supported_python_and_no_other():
    environments = [Marker(marker) for marker in PYPROJECT["tool"]["uv"]["environments"]]
    supported = supported_pythons()
    for platform in PLATFORMS:
        for version in [(3, supported[0][1] - 1), *supported, (3, supported[-1][1] + 1)]:
            covered = any(marker.evaluate(_environment(platform, version, 0)) for marker in environments)
            assert covered == (version in supported), (
                f"[tool.uv] environments {'miss' if covered is False else 'admit'} Python %d.%d on {platform}, "
                f"requires-python says otherwise" % version)
    assert "make lock" in LOCK.read_text().splitlines()[1], "the lock's header should name the command that made it"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_lock_pins_every_dependency_once_for_every_supported_python(platform):
    project = PYPROJECT["project"]
    direct = {_name(requirement) for requirement in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        direct |= {_name(requirement) for requirement in extra}
    pins = [(name, Marker(line.split(";", 1)[1].rstrip(" \\")) if ";" in line else None)
            for name, line, _ in _entries()]
    for version in supported_pythons():
        for patch in (0, 20):  # a marker may split a minor version (python_full_version >= '3.11.5')
            environment = _environment(platform, version, patch)
            installed = [name for name, marker in pins if marker is None or marker.evaluate(environment)]
            twice = sorted({name for name in installed if installed.count(name) > 1})
            assert not twice, f"Python %d.%d.%d on {platform}: pinned more than once: {twice}" % (*version, patch)
            missing = sorted(direct - set(installed))
            assert not missing, (f"Python %d.%d.%d on {platform}: the lock installs no {missing}; run make lock"
                                 % (*version, patch))


def _unsupported_python() -> tuple[str, str] | None:
    """A Python on this machine that gbai does not support, and its version ("3.10"), if one runs."""
    supported = {"%d.%d" % version for version in supported_pythons()}
    candidates = [str(Path.home() / ".pyenv/versions/3.10.13/bin/python"),
                  *(f"python3.{minor}" for minor in range(6, 20))]
    for candidate in candidates:
        found = shutil.which(candidate)
        if not found:
            continue
        run = subprocess.run([found, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=30)
        if run.returncode == 0 and run.stdout.strip() not in supported:
            return found, run.stdout.strip()
    return None


def test_make_install_refuses_an_unsupported_python_at_once_with_one_line(tmp_path):
    unsupported = _unsupported_python()
    if unsupported is None:
        if in_ci():
            pytest.fail("CI must check that make install refuses an unsupported Python, but none runs here")
        pytest.skip("no unsupported Python on this machine to try make install with")
    python, version = unsupported
    for name in ("Makefile", "pyproject.toml", "requirements.lock"):
        shutil.copy(ROOT / name, tmp_path / name)
    environment = {key: value for key, value in os.environ.items() if not key.startswith("MAKE")}
    run = subprocess.run(["make", "install", f"PYTHON={python}"], cwd=tmp_path, env=environment,
                         capture_output=True, text=True, timeout=60)
    supported = supported_pythons()
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout == "" and len(run.stderr.splitlines()) == 1, run.stdout + run.stderr
    assert ("supports Python %d.%d to %d.%d" % (*supported[0], *supported[-1])) in run.stderr, run.stderr
    assert f"PYTHON={python} is Python {version}" in run.stderr, run.stderr
    assert not (tmp_path / ".venv").exists(), "make install created a venv before refusing the Python"
