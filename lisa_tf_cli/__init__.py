"""The command line, ``python -m lisa_tf <command>``: the top of the project.

It sits above the library (:mod:`lisa_tf`) and the server package (:mod:`export`), and nothing below
imports it except ``lisa_tf/__main__.py``, which hands ``python -m lisa_tf`` to :func:`lisa_tf_cli.main.main`.

- :mod:`~lisa_tf_cli.main`: the parser and the entry point.
- :mod:`~lisa_tf_cli.commands`: one module per command.
- :mod:`~lisa_tf_cli.experiments`: the papers' experiments end to end (``experiments``).
"""
