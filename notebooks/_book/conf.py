"""Sphinx configuration of the gbai book (``make book``; see ``notebooks/_tools/book/build.py``).

The build folder holds this file, ``index.md`` and the guides (their links rewritten
for one folder by ``book.pages.book_links``), every executed notebook as rewritten
for its page (``notebooks/_tools/book/pages.py``), the generated API page, the
bibliography ``references.bib`` and MathJax 3 (copied from the
``django-static-mathjax`` package), so the book is built without a network and reads
equations offline. Notebooks are never executed here.
"""

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.util.images import get_image_size
from sphinx.writers.html5 import HTML5Translator

project = "gbai"
author = "gbai developers"
copyright = "gbai developers"
html_title = "gbai"

extensions = ["myst_nb", "sphinx_togglebutton", "sphinx.ext.autodoc", "sphinx.ext.autosummary",
              "sphinxcontrib.bibtex"]
myst_enable_extensions = ["dollarmath", "amsmath"]
# Headings get the anchors the code host gives them, so "teaching.md#5-grade" works in both.
myst_heading_anchors = 3
nb_execution_mode = "off"  # the pages show the outputs stored by `make figures`
exclude_patterns = ["_build", "jupyter_execute", ".doctrees", "**.ipynb_checkpoints", "_downloads_src"]

# Figures with a caption are numbered through the book in reading order ("Figure 1"), except a
# rerun of one of the paper's figures, whose caption opens with the paper's number for it.
numfig = True
numfig_format = {"figure": "Figure %s"}
#: The anchor of such a rerun (given by notebooks/_tools/book/pages.py: paper-figure-1a).
PAPER_FIGURE_ANCHOR = "paper-figure-"

# The API page: one page per public name, from the docstrings.
autosummary_generate = True
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": False}
add_module_names = False

# The references page and the citations link to paper/references.bib (copied in as references.bib).
bibtex_bibfiles = ["references.bib"]
bibtex_default_style = "plain"
bibtex_reference_style = "author_year"

html_theme = "sphinx_book_theme"
# One search box: the field at the top of the sidebar (none in the top bar).
html_theme_options = {"show_toc_level": 2, "home_page_in_toc": True, "navbar_persistent": []}
html_sidebars = {"**": ["navbar-logo.html", "search-button-field.html", "sbt-sidebar-nav.html"]}
html_static_path = ["_static", "_mathjax"]  # MathJax lives outside _static: only its entry script is loaded
html_css_files = ["gbai.css"]
html_last_updated_fmt = None
html_show_sourcelink = False

# MathJax 3 served with the site instead of a CDN.
mathjax_path = "mathjax/tex-mml-chtml.js"

# Exercise solutions start collapsed behind one kind of button: a solution cell with its
# check (source and output, cells tagged `solution`) and a written answer (a `toggle` block).
togglebutton_selector = ".toggle, .cell.tag_solution"
togglebutton_hint = "Show solution"
togglebutton_hint_hide = "Hide solution"


def _no_builtin_docstrings(app, what, name, obj, options, lines):
    """Constants (a dict, a tuple) would show the docstring of their type: show none."""
    if not callable(obj) and type(obj).__module__ == "builtins" and getattr(obj, "__doc__", None) == type(obj).__doc__:
        lines.clear()


def _paper_figures_keep_their_number(app, env):
    """Take the reruns of the paper's figures out of the book's numbering and number the rest 1, 2, ...

    Sphinx numbers every figure with a caption; a caption of the book carries one number,
    so a rerun keeps the paper's (which opens its caption) and the others close up.
    """
    numbered = sorted((number, docname, figure)
                      for docname, kinds in env.toc_fignumbers.items()
                      for figure, number in kinds.get("figure", {}).items())
    count = 0
    for _, docname, figure in numbered:
        figures = env.toc_fignumbers[docname]["figure"]
        if figure.startswith(PAPER_FIGURE_ANCHOR):
            del figures[figure]  # the HTML writer then gives its caption no number
        else:
            count += 1
            figures[figure] = (count,)
    return []


#: Where a name may wrap: after "_" or "/" before a letter or digit, after "." "," "=" ":" before
#: a letter (so 0.31 stays whole), and between the words of CamelCase (Action|Elimination, CSSLUCB|Plus).
_NAME_BREAK = re.compile(r"(?<=[_/])(?=[A-Za-z0-9])|(?<=[.,=:])(?=[A-Za-z])"
                         r"|(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: What is never rewritten: code blocks and cell outputs, formulas (MathJax reads their text), raw HTML.
_VERBATIM = (nodes.literal_block, nodes.doctest_block, nodes.math, nodes.math_block, nodes.raw)
#: A character no page holds, standing for a break while Sphinx writes and escapes the text.
_MARK = "\ue000"


class _BookTranslator(HTML5Translator):
    """Sphinx's HTML writer, with a line break allowed (``<wbr>``) between the words of a name.

    A name such as ``01_problem_setup`` or ``gbai.plotting.plot_confidence_intervals`` is
    one word to the browser: in a narrow column (a table at 390 px, a page title) it would
    be cut between any two letters, or overflow. In code, headings and signatures the
    writer marks where it may wrap between its parts instead; the search index, built from
    the document, keeps each name whole.
    """

    def visit_Text(self, node):
        holder = node.parent
        while holder is not None and not isinstance(holder, _VERBATIM):
            if isinstance(holder, (nodes.literal, nodes.title, addnodes.desc_signature)):
                start = len(self.body)
                super().visit_Text(nodes.Text(_NAME_BREAK.sub(_MARK, node.astext())))
                self.body[start:] = [part.replace(_MARK, "<wbr>") for part in self.body[start:]]
                return
            holder = holder.parent
        super().visit_Text(node)


def _images_open_their_file(app, doctree, docname):
    """Give each image its width in pixels, so that Sphinx links it to its file (html_scaled_image_link).

    The stylesheet shrinks a figure to the text column: on a phone an 828 px figure is
    drawn 342 px wide and its tick labels become unreadable; a tap opens it full size.
    """
    for image in doctree.findall(nodes.image):
        if {"width", "height", "scale"} & set(image.attributes):
            continue  # sized by its page: Sphinx links it already
        size = get_image_size(app.srcdir / image["uri"])
        if size is not None:
            image["width"] = f"{size[0]}px"


def setup(app):
    app.set_translator("html", _BookTranslator)
    app.connect("doctree-resolved", _images_open_their_file)
    app.connect("autodoc-process-docstring", _no_builtin_docstrings)
    # After Sphinx has numbered the figures (its handler runs at the default priority, 500).
    app.connect("env-get-updated", _paper_figures_keep_their_number, priority=900)
