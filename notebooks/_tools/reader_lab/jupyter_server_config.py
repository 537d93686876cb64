# The reader's JupyterLab (make lab), started in notebooks/ with this folder on JUPYTER_CONFIG_PATH.
import sys
from pathlib import Path

import zmq

c = get_config()  # noqa: F821 (provided by the config loader)

sys.path.insert(0, str(Path(__file__).resolve().parent))

# Jupytext's pairing, plus: opening a notebook does not mark it unsaved, and saving it
# unchanged rewrites both files byte for byte (see reader_contents.py).
c.ServerApp.contents_manager_class = "reader_contents.ReaderContentsManager"

# The file browser shows the notebooks, not the book's and the tools' folders.
c.ContentsManager.hide_globs = ["__pycache__", "*.pyc", "*.pyo", ".DS_Store", "*~", "_book", "_tools"]

# nbgrader's teacher tools belong to make course-lab, not to the reader's Lab. A link to
# a notebook's executed copy opens its script (reader_redirect.py).
c.ServerApp.jpserver_extensions = {
    "reader_redirect": True,
    "nbgrader.server_extensions.formgrader": False,
    "nbgrader.server_extensions.validate_assignment": False,
    "nbgrader.server_extensions.assignment_list": False,
    "nbgrader.server_extensions.course_list": False,
}

# The kernel's messages are encrypted (CurveZMQ) when pyzmq can: the venv's kernel
# declares support for it, and unencrypted TCP makes every kernel log a warning.
if zmq.has("curve"):
    c.KernelManager.transport_encryption = "auto"
