"""Sphinx configuration of the gbai book (``make book``; see ``notebooks/_tools/book.py``).

The build folder holds this file, ``index.md``, a copy of every executed notebook and
MathJax 3 (copied from the ``django-static-mathjax`` package), so the book is built
without a network and reads equations offline. Notebooks are never executed here.
"""

project = "gbai"
author = "gbai developers"
copyright = "gbai developers"
html_title = "gbai: constrained best arm identification in grouped bandits"

extensions = ["myst_nb", "sphinx_togglebutton"]
myst_enable_extensions = ["dollarmath", "amsmath"]
nb_execution_mode = "off"  # the pages show the outputs stored by `make figures`
exclude_patterns = ["_build", "jupyter_execute", ".doctrees", "**.ipynb_checkpoints"]

html_theme = "sphinx_book_theme"
html_theme_options = {"show_toc_level": 2, "home_page_in_toc": True}
html_static_path = ["_static", "_mathjax"]  # MathJax lives outside _static: only its entry script is loaded
html_css_files = ["gbai.css"]
html_last_updated_fmt = None
html_show_sourcelink = False

# MathJax 3 served with the site instead of a CDN.
mathjax_path = "mathjax/tex-mml-chtml.js"

# Exercise solutions (cells tagged `solution`) start collapsed behind a button.
togglebutton_selector = ".toggle, .admonition.dropdown, .tag_solution .cell_input"
togglebutton_hint = "Show solution"
togglebutton_hint_hide = "Hide solution"
