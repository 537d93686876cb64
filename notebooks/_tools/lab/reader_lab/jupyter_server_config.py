# The reader's JupyterLab (make lab, the kit's lab.py: ../launch.py), with this folder on JUPYTER_CONFIG_PATH.
import importlib.util
import sys
from pathlib import Path

import zmq

c = get_config()  # noqa: F821 (provided by the config loader)

# reader_contents.py, loaded from its file (this folder is not on the import path) as the extension named below.
_file = Path(__file__).resolve().with_name("reader_contents.py")
_spec = importlib.util.spec_from_file_location(_file.stem, _file)
sys.modules[_file.stem] = _reader = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reader)

# Jupytext's pairing, plus: opening a notebook does not mark it unsaved, and saving it
# unchanged rewrites both files byte for byte (see reader_contents.py).
c.ServerApp.contents_manager_class = _reader.ReaderContentsManager

# The file browser shows the notebooks, not the book's and the tools' folders.
c.ContentsManager.hide_globs = ["__pycache__", "*.pyc", "*.pyo", ".DS_Store", "*~", "_book", "_tools"]

# nbgrader's teacher tools belong to make course-lab, not to the reader's Lab. A link to
# a notebook's executed copy opens its script (reader_contents.py, as an extension).
c.ServerApp.jpserver_extensions = {
    "reader_contents": True,
    "nbgrader.server_extensions.formgrader": False,
    "nbgrader.server_extensions.validate_assignment": False,
    "nbgrader.server_extensions.assignment_list": False,
    "nbgrader.server_extensions.course_list": False,
}

# The kernel's messages are encrypted (CurveZMQ) when pyzmq can: the venv's kernel
# declares support for it, and unencrypted TCP makes every kernel log a warning.
if zmq.has("curve"):
    c.KernelManager.transport_encryption = "auto"
