"""The reader's JupyterLab, as ``make lab`` and the student kit's ``python lab.py`` open it: one launcher.

``make lab`` runs it on the repository's ``notebooks/`` with ``reader_lab/`` beside it; the student kit
ships it as ``lab.py`` beside ``notebooks/`` and ``reader_lab/`` as ``lab/``, the layout it takes when
run as a script (it imports no other tool: it runs alone there). With that configuration opening a
notebook marks nothing unsaved, and Lab's news pop-up stays away. Extra arguments go to JupyterLab.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str], configuration: Path = HERE / "lab", notebooks: Path = HERE / "notebooks") -> int:
    """Run JupyterLab on ``notebooks`` with the Lab configuration folder ``configuration`` (the kit's by default)."""
    environment = dict(os.environ)
    # This configuration first; the venv's kernel before any kernel of the user's.
    environment["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
        [str(configuration), *filter(None, [environment.get("JUPYTER_CONFIG_PATH")])])
    environment.setdefault("JUPYTER_PREFER_ENV_PATH", "1")
    command = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={notebooks}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # Jupyter refuses to run as root without it (containers)
    try:
        return subprocess.call(command + argv, env=environment)
    except KeyboardInterrupt:  # Ctrl-C stops Lab, which has said so itself
        return 130


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
