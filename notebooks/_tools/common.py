"""What the notebook tools share: notebook scripts, choice by prefix, files, kernel sockets, MathJax, missing tools.

The ground floor of the tools (:mod:`notebooks._tools`): every concern imports it, and it imports none of them.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["MissingPrerequisite", "copy_mathjax", "ipc_prefix", "mathjax_folder", "nbgrader_meta", "notebook_scripts",
           "replace_atomically", "require", "select", "select_students"]


def select(names: list[str] | None, known: list[str], what: str) -> list[str]:
    """The ``known`` names starting with one of ``names`` (all of them without ``names``)."""
    if not names:
        return known
    chosen = [item for item in known if any(item.startswith(name) for name in names)]
    unknown = [name for name in names if not any(item.startswith(name) for item in known)]
    if unknown:
        raise ValueError(f"no {what} matches {', '.join(unknown)}; known: {', '.join(known) or 'none'}")
    return chosen


def select_students(students: list[str] | None, known: list[str], where: Path) -> list[str]:
    """The students asked for (exact ids), all ``known`` ones without a request."""
    missing = [student for student in students or [] if student not in known]
    if missing:
        raise ValueError(f"no submission of {', '.join(missing)} in {where}; students: {', '.join(known) or 'none'}")
    return list(students) if students else known


def notebook_scripts(folder: Path, names: list[str] | None = None) -> list[Path]:
    """The numbered percent scripts of ``folder`` (optionally those whose stem starts with a name)."""
    scripts = {path.stem: path for path in sorted(folder.glob("[0-9][0-9]_*.py"))}
    return [scripts[stem] for stem in select(names, list(scripts), "notebook")]


def replace_atomically(text: str, target: Path) -> None:
    """Write ``text`` to ``target`` through a temporary file beside it: a reader never sees half a file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def nbgrader_meta(cell) -> dict:
    """A cell's nbgrader metadata (empty for a cell nbgrader does not know)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def ipc_prefix() -> str:
    """Where one kernel puts its sockets: an absolute path (the kernel runs in the
    notebook's folder, nbgrader elsewhere) that is short (Unix sockets allow about 100
    characters), in a private folder removed at exit.

    Each call makes a new folder. jupyter_client numbers IPC sockets by the first file
    names not yet taken, so two kernels started at the same moment in one folder pick
    the same sockets and read each other's messages ("Invalid Signature").
    """
    folder = tempfile.mkdtemp(prefix="gbai-ipc-")
    atexit.register(shutil.rmtree, folder, True)
    return os.path.join(folder, "kernel")


class MissingPrerequisite(RuntimeError):
    """A tool a command needs is not installed; the message says how to install it."""


def require(modules: dict[str, str], extra: str, command: str) -> None:
    """Raise :class:`MissingPrerequisite` naming every package of ``modules`` (module -> package) not installed."""
    missing = [package for module, package in modules.items() if importlib.util.find_spec(module) is None]
    if missing:
        raise MissingPrerequisite(
            f"{command} needs {', '.join(missing)}: run `make install` or pip install -e '.[{extra}]'")


def mathjax_folder(parts: tuple[str, ...], command: str, extra: str) -> Path:
    """The es5 build of MathJax 3 in the package django-static-mathjax, which ``command`` takes ``parts`` of."""
    spec = importlib.util.find_spec("mathjax")
    folder = Path(spec.origin).parent / "static" / "mathjax" / "es5" if spec and spec.origin else None
    if folder is None or not (folder / parts[0]).exists():
        raise MissingPrerequisite(f"{command} needs MathJax 3 from the package django-static-mathjax: "
                                  f"run `make install` or pip install -e '.[{extra}]'")
    return folder


def copy_mathjax(source: Path, parts: tuple[str, ...], target: Path) -> None:
    """Copy ``parts`` of the es5 build ``source`` (:func:`mathjax_folder`) and MathJax's licence into ``target``."""
    for part in parts:
        if (source / part).is_dir():
            shutil.copytree(source / part, target / part, dirs_exist_ok=True)
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / part, target / part)
    shutil.copy2(source.parent / "LICENSE", target / "LICENSE")
