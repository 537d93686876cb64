"""The result cache: keys follow the source of every module a result depends on, found by reading imports."""

import shutil
from pathlib import Path

import numpy as np
import pytest

import gbai
from gbai import cache

PACKAGE = Path(gbai.__file__).parent


@pytest.fixture
def copy_of_the_package(tmp_path, monkeypatch):
    """A copy of the package that the cache reads instead of the real one, for editing."""
    fake = tmp_path / "gbai"
    shutil.copytree(PACKAGE, fake, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "_PACKAGE", fake)
    monkeypatch.setattr(cache, "_FINGERPRINTS", {})
    return fake


def _fingerprints():
    cache._FINGERPRINTS.clear()
    return {name: gbai.code_fingerprint(name) for name in gbai.ALGORITHMS}


def _touch(path: Path) -> None:
    path.write_text(path.read_text() + "\n# edited\n")


def test_the_closure_follows_imports():
    files = {str(path.relative_to(PACKAGE)) for path in cache.source_files(gbai.ALGORITHMS["betting"].modules)}
    # Betting-GBAI imports the alternatives, which import the divergences: both are covered.
    assert {"beyond/betting.py", "fast/rewards.py", "paper/engine.py", "paper/rewards.py"} <= files
    assert any(name.startswith(("limits/", "lower_bounds/")) and "alternatives" in name for name in files)
    assert "plotting.py" not in files and not any(name.startswith("tools/") for name in files)
    css = {str(path.relative_to(PACKAGE)) for path in cache.source_files(gbai.ALGORITHMS["css-lucb"].modules)}
    assert {"paper/css_lucb.py", "fast/paper.py", "asrun/variants.py"} <= css
    assert not any(name.startswith("beyond/") for name in css)


def test_editing_a_module_changes_exactly_the_keys_that_depend_on_it(copy_of_the_package):
    fake = copy_of_the_package
    before = _fingerprints()
    _touch(fake / "plotting.py")
    _touch(fake / "tools" / "cli.py")
    assert _fingerprints() == before
    _touch(fake / "beyond" / "lma_glr.py")
    after = _fingerprints()
    assert [name for name in before if after[name] != before[name]] == ["lma-glr"]
    _touch(fake / "asrun" / "variants.py")  # the as-run options route the paper's algorithms
    changed = {name for name, value in _fingerprints().items() if value != after[name]}
    assert changed == {"css-lucb", "ae", "feasibility-then-bai"}
    after = _fingerprints()
    alternatives = next(path for path in fake.rglob("alternatives.py"))
    _touch(alternatives)  # the GLR statistic and the empirical answer
    changed = {name for name, value in _fingerprints().items() if value != after[name]}
    assert changed == {"lma-glr", "betting"}
    before = _fingerprints()
    _touch(fake / "simulation.py")  # the runner changes every key
    assert all(value != before[name] for name, value in _fingerprints().items())


def test_cached_results_are_read_back_and_recomputed_when_unreadable(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return {"value": np.array([1.5, 2.5])}

    first = cache.cached("test", {"x": 1}, ["gbai.cache"], compute, tmp_path)
    second = cache.cached("test", {"x": 1}, ["gbai.cache"], compute, tmp_path)
    assert len(calls) == 1 and np.array_equal(first["value"], second["value"])
    path = cache.result_path(tmp_path, "test", {"x": 1}, ["gbai.cache"])
    path.write_bytes(b"garbage")
    cache.cached("test", {"x": 1}, ["gbai.cache"], compute, tmp_path)
    assert len(calls) == 2
    cache.cached("test", {"x": 2}, ["gbai.cache"], compute, tmp_path)
    assert len(calls) == 3
    assert cache.cached("test", {"x": 1}, ["gbai.cache"], compute, None) and len(calls) == 4


def test_writes_are_atomic(tmp_path, monkeypatch):
    def broken_savez(stream, **data):
        stream.write(b"half a file")
        raise OSError("disk full")

    monkeypatch.setattr(cache.np, "savez", broken_savez)
    with pytest.raises(OSError, match="disk full"):
        cache.store(tmp_path / "ab" / "entry.npz", {"answer": np.zeros(1)})
    assert not list(tmp_path.rglob("*"))[1:]  # only the folder itself, no partial files


def test_the_cache_is_where_the_large_sweeps_page_says(monkeypatch, tmp_path):
    root = Path(__file__).resolve().parents[1]
    page = " ".join((root / "notebooks" / "_book" / "large-sweeps.md").read_text().split())
    makefile = (root / "Makefile").read_text()
    monkeypatch.delenv("GBAI_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache.default_cache_dir() == Path.home() / ".cache" / "gbai" and "by default `~/.cache/gbai`" in page
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.default_cache_dir() == tmp_path / "gbai" and "`$XDG_CACHE_HOME/gbai` when that is set" in page
    monkeypatch.setenv("GBAI_CACHE_DIR", str(tmp_path / "mine"))
    assert cache.default_cache_dir() == tmp_path / "mine"
    # make's own runs: the folder the page names for them.
    assert "export GBAI_CACHE_DIR ?= $(CURDIR)/.cache/gbai" in makefile and "set it to `.cache/gbai`" in page
