"""The book: the executed notebooks rendered as a static site with Sphinx and MyST-NB (``make book``).

Nothing is executed: the pages show the outputs ``make figures`` stored. The Sphinx
sources live in ``notebooks/_book``; each notebook is rewritten for its page by
:mod:`.pages`; the API page is generated from the ``__all__`` of
``gbai``, ``gbai.studies`` and ``gbai.plotting``; the references page reads ``paper/references.bib``, the
report's bibliography. MathJax 3 comes from the PyPI package ``django-static-mathjax``
and is copied into the site, so equations render offline.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from ..common import copy_mathjax, mathjax_folder, notebook_scripts, require
from .pages import book_links, prepare_page

__all__ = ["build_book"]

#: What the site needs from MathJax 3's es5 build: the combined TeX/MathML -> HTML
#: component, its fonts, the TeX extensions it loads on demand (ams, ...), and the
#: context menu with its accessibility parts.
_MATHJAX_PARTS = ("tex-mml-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions", "ui", "a11y", "sre")


#: The pages the build writes beside those of ``notebooks/_book`` (which may link them).
GENERATED_PAGES = ("api.md",)

#: Where the page sources (.py and the stored .ipynb) are kept for the download links.
DOWNLOADS = "_downloads_src"


#: The modules of the API page, each with its heading: what ``import gbai`` gives, the
#: studies above the runs, and the plots.
API_MODULES = {"gbai": "The package `gbai`", "gbai.studies": "Studies: `gbai.studies`",
               "gbai.plotting": "Plots: `gbai.plotting`"}


def public_api() -> dict[str, str]:
    """Each public name the notebooks may use, and the object the API page documents for it."""
    import importlib

    names: dict[str, str] = {}
    for module in API_MODULES:
        for name in importlib.import_module(module).__all__:
            names.setdefault(name, f"{module}.{name}")
    return names


def api_page(public: dict[str, str]) -> str:
    """The API page: an autosummary table (with one page per entry) for each module of :data:`API_MODULES`."""
    sections = []
    for module, heading in API_MODULES.items():
        names = [name for name, target in public.items() if target == f"{module}.{name}"]
        if names:
            rows = "\n".join(f"   {name}" for name in sorted(names, key=str.lower))
            sections.append(f"## {heading}\n\n```{{eval-rst}}\n.. currentmodule:: {module}\n\n.. autosummary::\n"
                            f"   :toctree: api\n   :nosignatures:\n\n{rows}\n```\n")
    return ("# API reference\n\nThe public API of `gbai`, built from the docstrings: what `import gbai` "
            "provides, the studies that turn sweeps into figures and claims, then the plotting helpers. The "
            "notebooks link each name here where they first use it.\n\n" + "\n".join(sections))


def build_book(notebooks: Path, output: Path, work: Path | None = None) -> Path:
    """Render the executed ``notebooks/NN_*.ipynb`` into a static site in ``output``.

    Nothing is executed: the pages show the outputs stored by ``make figures``. The
    Sphinx sources (``conf.py``, the landing page, the guides) live in
    ``notebooks/_book``; they (their links rewritten by :func:`.pages.book_links`)
    and the notebooks are copied into ``work`` (default ``output`` + ``-src``) with
    MathJax, and ``sphinx-build -W`` turns every warning into a failure. Returns
    the landing page.
    """
    require({"sphinx": "sphinx", "myst_nb": "myst-nb", "sphinx_book_theme": "sphinx-book-theme",
              "sphinx_togglebutton": "sphinx-togglebutton"}, "book", "make book")
    mathjax = mathjax_folder(_MATHJAX_PARTS, "make book", "book")
    sources = notebooks / "_book"
    if not (sources / "conf.py").exists():
        raise FileNotFoundError(f"no book sources: {sources / 'conf.py'} is missing")
    pages = [script.with_suffix(".ipynb") for script in notebook_scripts(notebooks)]
    unexecuted = [page.name for page in pages if not page.exists()]
    if unexecuted:
        raise FileNotFoundError(f"notebooks without an executed .ipynb (run `make figures`): {unexecuted}")
    output = output.resolve()
    work = (work or output.with_name(output.name + "-src")).resolve()
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(sources, work, ignore=shutil.ignore_patterns("__pycache__"))
    # The pages link as the code host resolves them; the book is one flat folder.
    for markdown in sorted(work.glob("*.md")):
        text = markdown.read_text(encoding="utf-8")
        markdown.write_text(book_links(text, sources, {page.stem for page in pages}), encoding="utf-8")
    bibliography = notebooks.resolve().parent / "paper" / "references.bib"
    if not bibliography.exists():
        raise FileNotFoundError(f"no bibliography: {bibliography} is missing")
    shutil.copy2(bibliography, work / "references.bib")
    public = public_api()
    (work / GENERATED_PAGES[0]).write_text(api_page(public), encoding="utf-8")
    import nbformat

    stems = {int(page.stem[:2]): page.stem for page in pages}
    # The figures' data files: the whole of a table that a notebook prints truncated.
    figures = notebooks.resolve().parent / "figures"
    datasets = {path.name: path.read_text(encoding="utf-8") for path in sorted(figures.glob("*.csv"))}
    (work / DOWNLOADS).mkdir()
    for page in pages:
        shutil.copy2(page, work / DOWNLOADS / page.name)
        shutil.copy2(page.with_suffix(".py"), work / DOWNLOADS / page.with_suffix(".py").name)
        notebook = nbformat.read(page, as_version=4)
        tables: dict[str, str] = {}
        nbformat.write(prepare_page(notebook, page.stem, stems, public, DOWNLOADS, tables, datasets),
                       work / page.name)
        for name, text in tables.items():
            (work / DOWNLOADS / name).write_text(text, encoding="utf-8")
    copy_mathjax(mathjax, _MATHJAX_PARTS, work / "_mathjax" / "mathjax")
    # MyST-NB writes a jupyter_execute/ folder beside the HTML folder: keep it in `work`.
    html = work / "_build" / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
               "-d", str(work / "_build" / "doctrees"), str(work), str(html)]
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError("sphinx-build failed:\n" + (completed.stderr or completed.stdout).strip())
    if output.exists():
        shutil.rmtree(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(html, output)
    return output / "index.html"
