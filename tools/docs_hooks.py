"""MkDocs hooks of the documentation site (``mkdocs.yml``): the command-line reference is rendered from
the commands' own argparse parsers, so a flag added, renamed or removed shows on the site as it is; the
spaCy page's displaCy picture is drawn from the ``lisa_srl`` pipeline and the shipped model as the site
is built; the docstrings' cross-reference roles (``:class:`~pkg.Name```, written for Python's help and
editors) are shown as the code names they mark."""

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
#: Where ``docs/spacy.md`` wants its displaCy picture, and the sentence it draws.
DISPLACY_MARKER = "<!-- displaCy picture -->"
DISPLACY_SENTENCE = "The dog barked at the mailman."
#: displaCy's colours of the roles drawn (any other label keeps displaCy's grey).
ROLE_COLOURS = {"V": "#ffd166", "ARG0": "#8ecae6", "ARG1": "#95d5b2", "ARG2": "#f4a261", "ARG3": "#e9c46a",
                "ARG4": "#cdb4db"}


def _importable() -> None:
    if str(ROOT) not in sys.path:  # `mkdocs build` without PYTHONPATH (MkDocs restores sys.path after loading hooks)
        sys.path.insert(0, str(ROOT))


def commands_help() -> str:
    """``## name`` and the ``--help`` text of each ``python -m lisa_tf`` command, in name order."""
    import argparse

    _importable()
    from lisa_tf_cli.main import build_parser

    os.environ["COLUMNS"] = "110"  # argparse wraps to the terminal: a fixed width gives the same page anywhere
    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    sections = []
    for name, command in sorted(commands.choices.items()):
        command.prog = f"python -m lisa_tf {name}"
        sections.append(f"## {name}\n\n```text\n{command.format_help().rstrip()}\n```\n")
    return "\n".join(sections)


def displacy_picture(sentence: str = DISPLACY_SENTENCE) -> str:
    """The first frame of ``sentence`` labelled by ``spacy.blank("en")`` + sentencizer + ``lisa_srl``
    (the shipped model), its roles labelled with their meanings by ``displacy_frame`` and drawn by
    ``displacy.render(style="span", manual=True)``: one block of HTML."""
    _importable()
    import spacy
    from spacy import displacy

    from lisa_tf_spacy import displacy_frame

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl")
    doc = nlp(sentence)
    if not doc._.frames:
        raise RuntimeError(f"docs/spacy.md: the shipped model finds no frame in {sentence!r} to draw")
    data = displacy_frame(doc, doc._.frames[0]["spans_key"])
    # a label is the role's code, then its meaning (``ARG2 hearer``): the code picks the colour
    colours = {s["label"]: ROLE_COLOURS.get(s["label"].split()[0], "#d9d9f3") for s in data["spans"]}
    html = displacy.render(data, style="span", manual=True, options={"colors": colours})
    # one block without blank lines, which Markdown would end the HTML block at
    return " ".join(line.strip() for line in html.splitlines() if line.strip())


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, commands_help())
    if DISPLACY_MARKER in markdown:
        return markdown.replace(DISPLACY_MARKER, displacy_picture())
    return markdown


def _short(match: "re.Match[str]") -> str:
    name = match.group(1)
    return f"<code>{name.rsplit('.', 1)[-1] if match.group(0).find('~') >= 0 else name}</code>"


def on_page_content(html: str, page, config, files) -> str:
    return ROLE.sub(_short, html)
