"""Where a notebook writes its figures: the committed ``figures/`` only under ``make figures``.

A reader who runs a notebook with other parameters (the large-sweeps page's papermill
command, JupyterLab) gets the figures beside the run, in ``gbai-figures/`` of the
kernel's working directory, or in ``$GBAI_FIGURES_DIR``; ``make figures`` sets that
variable to the repository's ``figures/`` (tests/test_pipeline.py checks it does).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gbai.plotting import figures_dir

ROOT = Path(__file__).resolve().parents[1]


def _state(folder: Path) -> dict[str, tuple[int, bytes]]:
    return {path.name: (path.stat().st_mtime_ns, path.read_bytes()) for path in sorted(folder.glob("*"))}


def test_the_figures_folder_is_the_variable_or_beside_the_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GBAI_FIGURES_DIR", raising=False)
    assert figures_dir() == tmp_path / "gbai-figures"
    monkeypatch.setenv("GBAI_FIGURES_DIR", str(tmp_path / "mine"))
    assert figures_dir() == tmp_path / "mine"


def test_a_notebook_run_from_the_repository_root_leaves_the_committed_figures(tmp_path):
    # The large-sweeps page's command, typed at the repository root: its kernel starts there.
    pytest.importorskip("papermill", reason="the notebooks extra is not installed: pip install -e '.[notebooks]'")
    committed, mine = ROOT / "figures", ROOT / "gbai-figures"
    before, mine_before = _state(committed), set(_state(mine)) if mine.is_dir() else None
    environment = {key: value for key, value in os.environ.items() if key != "GBAI_FIGURES_DIR"}
    environment.update(GBAI_CACHE_DIR=str(tmp_path / "cache"), TQDM_DISABLE="1", JUPYTER_PREFER_ENV_PATH="1")
    command = (f"{sys.executable} -m jupytext --to ipynb -o - notebooks/01_problem_setup.py | {sys.executable} "
               f"-m papermill - {tmp_path / 'my_run.ipynb'} -k python3 -p quick True --no-progress-bar")
    try:
        completed = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=ROOT, env=environment,
                                   capture_output=True, text=True, timeout=600)
        assert completed.returncode == 0, completed.stderr[-3000:]
        assert (tmp_path / "my_run.ipynb").stat().st_size > 1000
        written = _state(mine)
        assert {"setup_table1.png", "setup_table1.pdf", "setup_table1.csv"} <= set(written), sorted(written)
        assert _state(committed) == before, "the run wrote into the committed figures/"
    finally:
        # The run's own files go; a folder the reader had keeps what was in it before.
        if mine_before is None:
            shutil.rmtree(mine, ignore_errors=True)
        else:
            for path in mine.glob("*"):
                if path.name not in mine_before:
                    path.unlink()
