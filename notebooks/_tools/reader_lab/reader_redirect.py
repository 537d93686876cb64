"""The reader's JupyterLab (``make lab``): a link to a notebook's executed copy opens its script.

Each notebook is a pair, the percent script ``NN_name.py`` and its executed copy
``NN_name.ipynb``, and the reader's Lab offers the script alone (``reader_contents.py``):
a second tab on the copy would run its own kernel and drift from the first. A URL
``/lab/tree/NN_name.ipynb`` (a bookmark, a link typed from the README) is sent on to
``/lab/tree/NN_name.py``, which shows the same notebook with its outputs.
"""

from __future__ import annotations

import os
from urllib.parse import quote, unquote

from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from tornado import web
from tornado.routing import Matcher, Rule

__all__ = ["PairedCopyMatcher", "ScriptRedirectHandler"]


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
