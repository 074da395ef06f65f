"""A user's own frame files, as a user writes them (PropBank's frame file XML), and the index the
project's own ``python -m data_pipeline.frame_index build`` makes of them: a made-up verb, ``blorf``
(blorf.01, two roles), and ``kill.01`` redefined (another name, and two roles where PropBank's has three)."""

from __future__ import annotations

import pathlib

from data_pipeline import frame_index

def frame_file(lemma: str, roleset: str, name: str, roles: list[tuple[str, str, str]], aliases=None) -> str:
    """A PropBank frame file of one predicate with one roleset: ``roles`` ``(n, f, descr)``; ``aliases``
    verb alias words (default: the lemma)."""
    alias = "".join(f'<alias pos="v">{word}</alias>' for word in (aliases or [lemma]))
    role = "".join(f'\n        <role descr="{d}" f="{f}" n="{n}"/>' for n, f, d in roles)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<frameset>\n  <predicate lemma="{lemma}">\n'
            f'    <roleset id="{roleset}" name="{name}">\n      <aliases>{alias}</aliases>\n      <roles>{role}\n'
            f'      </roles>\n    </roleset>\n  </predicate>\n</frameset>\n')


BLORF = frame_file("blorf", "blorf.01", "fasten with a blorf", [("0", "PAG", "fastener"), ("1", "PPT", "thing fastened")])
KILL = frame_file("kill", "kill.01", "end the life of", [("0", "PAG", "slayer"), ("1", "PPT", "slain")])


def build_own_frames(directory: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    """``directory/frames.json.gz``: the index ``frame_index build`` makes of the frame files ``files``
    (name → XML), written to ``directory/xml``."""
    xml = directory / "xml"
    xml.mkdir(parents=True)
    for name, text in files.items():
        (xml / name).write_text(text, encoding="utf-8")
    out = directory / "frames.json.gz"
    assert frame_index.main(["build", str(xml), "--out", str(out), "--repository", "https://example.org/our-frames",
                             "--commit", "1"]) == 0
    return out
