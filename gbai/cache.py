"""One result cache for simulated runs and computed limits.

Each result is one ``.npz`` file under ``cache_dir/<kind>/``, named by a hash of
its inputs and of the source of every ``gbai`` module it depends on: the modules
named, and every module they import, found by reading their import statements
(:func:`source_files`). Editing any of those files gives new keys, so a stale
result is never read; editing anything else (plots, notebooks, another algorithm)
keeps the cache. Files are written under a temporary name and renamed into
place, so an interrupted run never leaves half a result.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from .version import __version__

__all__ = ["cached", "default_cache_dir", "fingerprint", "load", "result_path", "source_files", "store"]

_PACKAGE = Path(__file__).resolve().parent
#: Modules whose imports are not followed: the registry and the package's front
#: page import every algorithm, but a run depends only on its own algorithm's modules.
_BOUNDARIES = {"gbai", "gbai.algorithms"}


def default_cache_dir() -> Path:
    """``$GBAI_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/gbai`` (``~/.cache/gbai``)."""
    if os.environ.get("GBAI_CACHE_DIR"):
        return Path(os.environ["GBAI_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gbai"


def _module_file(name: str) -> Path | None:
    """The source file of module ``gbai.x.y`` (``x/y.py`` or ``x/y/__init__.py``), if there is one."""
    parts = name.split(".")[1:]
    base = _PACKAGE.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(name: str, path: Path) -> set[str]:
    """The ``gbai`` modules that module ``name`` (file ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "gbai"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            elif (node.module or "").split(".")[0] == "gbai":
                target = node.module
            else:
                continue
            # ``from package import module`` imports the module; ``from module import name`` the module.
            submodules = {f"{target}.{alias.name}" for alias in node.names if _module_file(f"{target}.{alias.name}")}
            found |= submodules or {target}
    return found


def source_files(modules: Iterable[str]) -> list[Path]:
    """The source files of ``modules`` and of every ``gbai`` module they import, recursively."""
    seen: dict[str, Path] = {}
    pending = list(modules)
    while pending:
        name = pending.pop()
        path = _module_file(name)
        if name in seen or path is None or name == "gbai":
            continue
        seen[name] = path
        if name not in _BOUNDARIES:
            pending.extend(_imports(name, path))
    return sorted(set(seen.values()))


_FINGERPRINTS: dict[tuple[str, ...], str] = {}


def fingerprint(modules: Iterable[str]) -> str:
    """A hash of the package version and the source of :func:`source_files` of ``modules``."""
    key = tuple(sorted(set(modules)))
    if key not in _FINGERPRINTS:
        digest = hashlib.sha256(__version__.encode())
        for path in source_files(key):
            digest.update(str(path.relative_to(_PACKAGE)).encode())
            digest.update(path.read_bytes())
        _FINGERPRINTS[key] = digest.hexdigest()[:16]
    return _FINGERPRINTS[key]


def result_path(cache_dir: Path, kind: str, payload: dict, modules: Iterable[str]) -> Path:
    """Where the result of ``payload`` (JSON-ready inputs) computed by ``modules`` is stored."""
    text = json.dumps({"inputs": payload, "code": fingerprint(modules)}, sort_keys=True, separators=(",", ":"))
    key = hashlib.sha256(text.encode()).hexdigest()
    return Path(cache_dir) / kind / key[:2] / f"{key}.npz"


def load(path: Path) -> dict[str, np.ndarray] | None:
    """A stored result, or None when it is missing or unreadable (then it is recomputed)."""
    try:
        with np.load(path) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError, KeyError, EOFError):
        return None


def store(path: Path, data: dict[str, np.ndarray]) -> None:
    """Write a result atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, **data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def cached(kind: str, payload: dict, modules: Iterable[str], compute: Callable[[], dict[str, np.ndarray]],
           cache_dir: str | Path | None = "default") -> dict[str, np.ndarray]:
    """The stored result of ``payload`` if there is one, else ``compute()`` stored.

    ``cache_dir=None`` skips the cache.
    """
    if cache_dir is None:
        return compute()
    path = result_path(default_cache_dir() if cache_dir == "default" else Path(cache_dir), kind, payload, modules)
    stored = load(path)
    if stored is None:
        stored = compute()
        store(path, stored)
    return stored
