"""The reader's JupyterLab (``make lab``): opening a notebook and saving it unchanged leaves the repository as it was.

Jupytext's contents manager pairs each percent script with its executed ``.ipynb``.
On top of it, this one treats the notebook metadata ``language_info`` as what it is,
a property of the kernel on this machine (Python's version down to the patch level),
not of the notebook:

* when Lab reads a notebook, its ``language_info`` is the one the kernel will report
  (:func:`kernel_language_info`), so Lab, which writes the kernel's block into the
  notebook as soon as the kernel answers, finds nothing to change and does not mark
  the tab unsaved;
* when Lab writes a ``.ipynb``, the file keeps the ``language_info`` it had on disk
  (none for the notebooks ``make figures`` stores), so a save without an edit
  rewrites the file byte for byte whatever Python the reader runs.

Each notebook is offered in one form, its script: the file browser does not list the
executed copy of a script, and the copy is not opened or saved as a notebook on its own
(HTTP 409 naming the script), and a ``/lab/tree`` link to it opens the script
(:class:`ScriptRedirectHandler`; this module is a server extension too). Two tabs of one
notebook would each run a kernel, keep their own edits, and the second save would meet
"File Changed".

The percent scripts never hold ``language_info`` (Jupytext leaves it out of the text).
"""

from __future__ import annotations

import copy
import inspect
import json
import logging
import os
import sys
from pathlib import Path
from urllib.parse import quote, unquote

from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from jupytext import AsyncTextFileContentsManager
from tornado import web
from tornado.log import gen_log
from tornado.routing import Matcher, Rule
from tornado.web import HTTPError
from tornado.websocket import WebSocketClosedError

__all__ = ["PairedCopyMatcher", "QuietLogFilter", "ReaderContentsManager", "ScriptRedirectHandler",
           "kernel_language_info", "keep_stored_language_info"]

LANGUAGE_INFO = "language_info"


def kernel_language_info(kernel_argv: list[str]) -> dict | None:
    """The ``language_info`` an IPython kernel started by ``kernel_argv`` reports, or None if unknown.

    Known when the kernel is ipykernel running on this server's interpreter (the venv's
    ``python3`` kernel that ``make install`` registers, or the one pip installs with
    ipykernel, as in the student kit): its kernel-info reply carries
    ``IPythonKernel.language_info``.
    """
    if not kernel_argv or "ipykernel_launcher" not in kernel_argv:
        return None
    # A kernel spec that names "python" (ipykernel's own, as pip installs it) runs the
    # server's interpreter: jupyter_client puts sys.executable in its place.
    if kernel_argv[0] in {"python", f"python{sys.version_info[0]}", "python{}.{}".format(*sys.version_info[:2])}:
        return copy.deepcopy(_ipython_language_info())
    try:
        same_python = Path(kernel_argv[0]).resolve() == Path(sys.executable).resolve()
    except OSError:
        return None
    return copy.deepcopy(_ipython_language_info()) if same_python else None


def _ipython_language_info() -> dict | None:
    try:
        from ipykernel.ipkernel import IPythonKernel
    except ImportError:
        return None
    return IPythonKernel.language_info


def keep_stored_language_info(model: dict, path: str, contents_manager) -> None:
    """Pre-save hook: the ``.ipynb`` written keeps the ``language_info`` of the file on disk (or has none)."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    metadata = model["content"].setdefault("metadata", {})
    stored = None
    os_path = contents_manager._get_os_path(path.strip("/"))
    if os.path.isfile(os_path):
        try:
            with open(os_path, encoding="utf-8") as stream:
                stored = json.load(stream).get("metadata", {}).get(LANGUAGE_INFO)
        except (OSError, ValueError, AttributeError):
            stored = None
    if stored is None:
        metadata.pop(LANGUAGE_INFO, None)
    else:
        metadata[LANGUAGE_INFO] = stored


class QuietLogFilter(logging.Filter):
    """Demotes the server's notices that a reader cannot act on.

    * "Notebook X is not trusted": every notebook cloned from a repository is untrusted
      on a new machine (Lab shows its HTML outputs sanitized); logged as information.
    * Tornado's "websocket_ping_timeout (90000) cannot be longer than the
      websocket_ping_interval (30000)": Jupyter Server's own keep-alive counts in
      milliseconds and defaults the timeout to three intervals; Tornado reads the same
      two numbers as seconds and clamps the timeout it never reaches (30000 s) to the
      interval. Nothing changes; logged as information.
    * asyncio's "Task exception was never retrieved ... WebSocketClosedError": a browser
      tab closed while the server was still writing to its websocket; what was lost was
      for that tab. Dropped.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], WebSocketClosedError):
            return False
        message = str(record.msg)
        if record.levelno == logging.WARNING and (
                message.endswith("is not trusted") or message.startswith("The websocket_ping_timeout")):
            record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        return True


class ReaderContentsManager(AsyncTextFileContentsManager):
    """Jupytext's contents manager with the kernel's ``language_info`` on reading and the file's on saving."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.register_pre_save_hook(keep_stored_language_info)
        quiet = QuietLogFilter()
        for log in (self.log, gen_log, logging.getLogger("asyncio")):
            if not any(isinstance(existing, QuietLogFilter) for existing in log.filters):
                log.addFilter(quiet)
        self._language_info: dict[str, dict | None] = {}

    def _kernel_language_info(self, kernel_name: str) -> dict | None:
        if kernel_name not in self._language_info:
            manager = getattr(self.parent, "kernel_spec_manager", None)
            try:
                argv = manager.get_kernel_spec(kernel_name).argv if manager is not None else []
            except Exception:  # no such kernel: Lab asks the reader to choose one
                argv = []
            self._language_info[kernel_name] = kernel_language_info(argv)
        return copy.deepcopy(self._language_info[kernel_name])

    async def _script_of(self, path: str) -> str | None:
        """The percent script paired with the notebook ``path`` (``NN_name.ipynb``), if there is one.

        Paired only where a Jupytext configuration pairs ``ipynb`` with ``py`` (``notebooks/jupytext.toml``):
        elsewhere, as in the student kit, a ``.py`` beside a notebook (an export, say) is a file of its own.
        """
        stem, extension = os.path.splitext(path.strip("/"))
        if extension != ".ipynb":
            return None
        config = await self.get_config(path.strip("/"), use_cache=True)
        formats = str(getattr(config, "formats", None) or "")
        if "ipynb" not in formats or "py" not in formats.replace("ipynb", ""):
            return None
        script = stem + ".py"
        exists = self.file_exists(script)
        if inspect.isawaitable(exists):
            exists = await exists
        return script if exists else None

    @staticmethod
    def _refused(path: str, script: str) -> HTTPError:
        return HTTPError(409, f"{path.strip('/')} is the executed copy of {script}: open {script}, which shows the "
                              "same notebook with its outputs (saving it writes both files)")

    async def save(self, model, path=""):
        # A tab on a copy (opened before, or by a path typed into Lab) cannot overwrite the pair.
        script = await self._script_of(path) if model.get("type") == "notebook" else None
        if script is not None:
            raise self._refused(path, script)
        return await super().save(model, path)

    async def get(self, path, content=True, type=None, format=None, **kwargs):
        # One form of each notebook: the executed copy of a script is not opened on its
        # own, where a second tab with its own kernel would drift from the script's.
        script = await self._script_of(path) if content and type != "file" else None
        if script is not None:
            raise self._refused(path, script)
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        # The file browser lists the scripts; a link to a copy opens its script (ScriptRedirectHandler).
        if content and model.get("type") == "directory" and model.get("content") is not None:
            model["content"] = [entry for entry in model["content"]
                                if entry.get("type") != "notebook" or await self._script_of(entry["path"]) is None]
        if content and model.get("type") == "notebook" and model.get("content") is not None:
            metadata = model["content"].metadata
            kernel = metadata.get("kernelspec", {}).get("name")
            info = self._kernel_language_info(kernel) if kernel else None
            if info is not None:
                metadata[LANGUAGE_INFO] = info
        return model


class PairedCopyMatcher(Matcher):
    """Matches ``<base>lab/tree/<path>.ipynb`` when ``<path>.py`` exists in the server's root folder."""

    def __init__(self, base_url: str, root_dir: str):
        self.prefix = url_path_join(base_url, "lab", "tree") + "/"
        self.root_dir = root_dir

    def match(self, request) -> dict | None:
        if not request.path.startswith(self.prefix) or not request.path.endswith(".ipynb"):
            return None
        path = unquote(request.path[len(self.prefix):])
        script = path[: -len(".ipynb")] + ".py"
        if ".." in path.split("/") or not os.path.isfile(os.path.join(self.root_dir, script)):
            return None
        return {"path_args": [], "path_kwargs": {"script": script}}


class ScriptRedirectHandler(JupyterHandler):
    """Sends the browser on to the script's page, keeping the query (``?reset``, a token)."""

    @web.authenticated
    def get(self, script: str) -> None:
        query = f"?{self.request.query}" if self.request.query else ""
        self.redirect(url_path_join(self.base_url, "lab", "tree", quote(script)) + query)


def _load_jupyter_server_extension(serverapp) -> None:
    # Ahead of every other route, JupyterLab's own /lab/tree/ included.
    matcher = PairedCopyMatcher(serverapp.base_url, os.path.abspath(serverapp.root_dir))
    serverapp.web_app.default_router.rules.insert(0, Rule(matcher, ScriptRedirectHandler))
