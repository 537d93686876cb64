"""The notebook tools: a package by concern (``run/``, ``book/``, ``course/``, ``lab/``, and :mod:`.common`, which they
share) with one command line, ``python -m notebooks._tools COMMAND`` (:mod:`.__main__`), which every ``make``
target of the notebooks runs. The ``gbai`` library never imports them.
"""
