"""The lock: ``make install`` installs exact, hashed versions of what ``pyproject.toml`` names.

``requirements.lock`` is generated from ``pyproject.toml`` and every extra by ``make
lock`` (uv's universal resolution, Python 3.11-3.12 on Linux and macOS). A dependency
added to or dropped from ``pyproject.toml`` without refreshing the lock fails here.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"


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


def test_the_lock_covers_linux_and_macos_for_python_3_11_and_3_12():
    environments = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["environments"]
    for platform in ("linux", "darwin"):
        assert any(f"sys_platform == '{platform}'" in marker and "python_version >= '3.11'" in marker
                   and "python_version < '3.13'" in marker for marker in environments), platform
    assert "make lock" in LOCK.read_text().splitlines()[1], "the lock's header should name the command that made it"
