"""Open the course's notebooks in JupyterLab: ``python lab.py``, run from the student kit's folder.

The student kit (``kit.py``) ships this script as ``lab.py`` beside ``notebooks/`` and the
reader's Lab configuration as ``lab/`` (``reader_lab/``). It starts JupyterLab on
``notebooks/`` with that configuration, so that, as in ``make lab``, opening a notebook
marks nothing unsaved (Lab writes the kernel's ``language_info`` into a notebook as soon as
the kernel answers; ``reader_contents.py`` gives the notebook that block when it is read)
and Lab's news pop-up stays away. Extra arguments go to JupyterLab (``--port=8890``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parent
    environment = dict(os.environ)
    # The kit's configuration first; the venv's kernel before any kernel of the user's.
    environment["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
        [str(here / "lab"), *filter(None, [environment.get("JUPYTER_CONFIG_PATH")])])
    environment.setdefault("JUPYTER_PREFER_ENV_PATH", "1")
    command = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={here / 'notebooks'}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # Jupyter refuses to run as root without it (containers)
    try:
        return subprocess.call(command + argv, env=environment)
    except KeyboardInterrupt:  # Ctrl-C stops Lab, which has said so itself
        return 130


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
