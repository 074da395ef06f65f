"""MkDocs hooks of the documentation site (``mkdocs.yml``): the command-line reference is rendered from
the commands' own argparse parsers, so a flag added, renamed or removed shows on the site as it is; the
docstrings' cross-reference roles (``:class:`~pkg.Name```, written for Python's help and editors) are
shown as the code names they mark."""

from __future__ import annotations

import os
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: A docstring role before its rendered name, and the ``~`` that shortens ``pkg.mod.Name`` to ``Name``.
ROLE = re.compile(r":(?:class|mod|func|meth|data|attr|exc):<code>~?([\w.]+)</code>")
#: Where ``docs/reference/cli.md`` wants every command's ``--help``.
MARKER = "<!-- every command's help -->"


def commands_help() -> str:
    """``## name`` and the ``--help`` text of each ``python -m lisa_tf`` command, in name order."""
    import argparse

    if str(ROOT) not in sys.path:  # `mkdocs build` without PYTHONPATH (MkDocs restores sys.path after loading hooks)
        sys.path.insert(0, str(ROOT))
    from lisa_tf.cli import build_parser

    os.environ["COLUMNS"] = "110"  # argparse wraps to the terminal: a fixed width gives the same page anywhere
    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    sections = []
    for name, command in sorted(commands.choices.items()):
        command.prog = f"python -m lisa_tf {name}"
        sections.append(f"## {name}\n\n```text\n{command.format_help().rstrip()}\n```\n")
    return "\n".join(sections)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, commands_help())
    return markdown


def _short(match: "re.Match[str]") -> str:
    name = match.group(1)
    return f"<code>{name.rsplit('.', 1)[-1] if match.group(0).find('~') >= 0 else name}</code>"


def on_page_content(html: str, page, config, files) -> str:
    return ROLE.sub(_short, html)
