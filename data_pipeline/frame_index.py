"""The PropBank frame index: every roleset's name, lemma, aliases and roles, read from the frame files.

A PropBank frame file (``frames/<lemma>.xml`` of the ``propbank/propbank-frames`` repository) holds one
``<frameset>`` of ``<predicate lemma="…">`` entries, each with its ``<roleset id="bark.01" name="…">``:

```
<roleset id="bark.01" name="vocalize like a dog">
  <aliases><alias pos="v">bark</alias><alias pos="n">barking</alias></aliases>
  <roles>
    <role descr="barker" f="PAG" n="0">
      <rolelinks><rolelink class="manner_speaking-37.3" resource="VerbNet" version="verbnet3.4">agent</rolelink>
                 <rolelink class="Communication_noise" resource="FrameNet" version="1.7">speaker</rolelink></rolelinks>
    </role> …
```

:class:`FrameIndex` keeps, per roleset, its id, name, the predicate's lemma (phrasal ones as in the file,
``pick_up``), its aliases (word, part of speech) and its roles (:class:`Role`: number, function tag,
description, VerbNet and FrameNet roles). The VerbNet role links of the current format
(``<rolelink resource="VerbNet" class="…">theta</rolelink>``) and of PropBank 3.1 and earlier
(``<vnrole vncls="…" vntheta="…"/>``) are both read; a link given once per VerbNet version is kept
once (the version is not kept). Examples, notes, usage notes, lexical links, argument aliases and
multi-word descriptions are not read.

Bad input: a file that is not well-formed XML, or a roleset, role or predicate missing what the index
needs, raises :class:`~data_pipeline.errors.DataFormatError` naming the file and line. A roleset
without an id, or with the id of a roleset read before it (files are read in sorted path order), is
skipped and counted, with the reason, in :attr:`FrameIndex.counts` and :attr:`FrameIndex.skipped`.

The index is saved as gzip-compressed JSON with sorted keys and an mtime-0 gzip header, so the same
frame files give the same bytes. Build one (the shipped ``data/propbank-frames/frames.json.gz`` is
built so, from the commit named in its ``ATTRIBUTION``)::

    python -m data_pipeline.frame_index build FRAMES_DIR --out frames.json.gz \\
        --repository https://github.com/propbank/propbank-frames --commit COMMIT
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import pathlib
import sys
from typing import Iterable, Optional, Sequence
from xml.etree import ElementTree
from xml.parsers import expat

from data_pipeline.errors import DataFormatError, UserError

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _shipped_frames() -> pathlib.Path:
    """Where the shipped frame index is: ``data/propbank-frames`` of the repository; after ``pip install
    .``, the installed copy (``data_pipeline/propbank_frames``, pyproject.toml)."""
    repository = ROOT / "data" / "propbank-frames"
    return repository if repository.is_dir() else pathlib.Path(__file__).resolve().parent / "propbank_frames"


#: the frame index shipped with the repository (PropBank frames, see the ATTRIBUTION and LICENSE beside it)
DEFAULT_FRAME_INDEX = _shipped_frames() / "frames.json.gz"
#: ``format`` of a saved index
FORMAT = "lisa_tf.frame_index/1"
#: the role numbers a frame file may give (upper-cased: ``n="m"`` is ``M``)
ROLE_NUMBERS = frozenset("0123456789AM")
_LINK_RESOURCES = {"verbnet": "vn", "framenet": "fn"}
_NO_TAG = frozenset({"", "-"})


@dataclasses.dataclass(frozen=True)
class Role:
    """One role of a roleset.

    Attributes:
        number: ``"0"`` … ``"6"``, ``"A"`` or ``"M"`` (the file's ``n``, upper-cased).
        function: the function tag, upper-cased and stripped (``"PAG"``, ``"PPT"``, ``"GOL"``, ``"LOC"``);
            ``""`` where the file gives none (``f=""`` or ``f="-"``).
        description: the file's ``descr`` (``"barker"``).
        vn_roles: ``(VerbNet class, thematic role)`` pairs in file order, each once
            (``("manner_speaking-37.3", "agent")``).
        fn_roles: ``(FrameNet frame, frame element)`` pairs in file order, each once
            (``("Communication_noise", "speaker")``); a role may link to several.
    """

    number: str
    function: str
    description: str
    vn_roles: tuple[tuple[str, str], ...] = ()
    fn_roles: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """The argument label the SRL data uses: ``ARG0`` … ``ARG5``, ``ARGA``, or ``ARGM-`` + function tag."""
        return f"ARGM-{self.function}" if self.number == "M" else f"ARG{self.number}"


@dataclasses.dataclass(frozen=True)
class Roleset:
    """One roleset (predicate sense) of a frame file.

    Attributes:
        id: the roleset id, ``"bark.01"``.
        name: its name, ``"vocalize like a dog"`` (``""`` where the file gives none).
        lemma: the lemma of the ``<predicate>`` it belongs to, ``"bark"`` or ``"pick_up"``.
        aliases: ``(word, part of speech)`` pairs as in the file (``("barking", "n")``; parts of speech
            ``v`` verb, ``n`` noun, ``j`` adjective, ``l`` light-verb construction, ``m`` multi-word …).
        roles: the roles in file order.
    """

    id: str
    name: str
    lemma: str
    aliases: tuple[tuple[str, str], ...]
    roles: tuple[Role, ...]

    def role(self, label: str) -> Optional[Role]:
        """The role whose :attr:`Role.label` is ``label`` (``"ARG2"``), or ``None``."""
        return next((r for r in self.roles if r.label == label), None)


@dataclasses.dataclass
class FrameIndex:
    """Rolesets by id, with where they come from.

    Attributes:
        rolesets: roleset id → :class:`Roleset`.
        source: where the frame files come from: ``repository``, ``commit``, ``licence``, ``attribution``.
        counts: ``files``, ``rolesets`` (kept), ``roles`` (of kept rolesets), ``skipped`` (all skipped
            rolesets), ``skipped_without_id``, ``skipped_duplicate_id``, ``role_links_not_kept`` (role links to
            resources other than VerbNet and FrameNet).
        skipped: one line per skipped roleset, ``file:line: why``.
    """

    rolesets: dict[str, Roleset]
    source: dict[str, str]
    counts: dict[str, int]
    skipped: tuple[str, ...] = ()
    _by_word: dict[str, list[str]] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self):
        by_word: dict[str, set[str]] = {}
        for roleset in self.rolesets.values():
            for word in (roleset.lemma, *(word for word, _ in roleset.aliases)):
                by_word.setdefault(word, set()).add(roleset.id)
        self._by_word = {word: sorted(ids) for word, ids in by_word.items()}

    def __len__(self) -> int:
        return len(self.rolesets)

    def roleset(self, roleset_id: str) -> Optional[Roleset]:
        """The roleset ``roleset_id`` (``"bark.01"``), or ``None`` when the index lacks it."""
        return self.rolesets.get(roleset_id)

    def rolesets_of(self, lemma: str) -> list[str]:
        """Ids (sorted) of the rolesets whose predicate lemma or one of whose alias words is ``lemma``
        (exactly, case included: ``"barking"`` finds ``bark.01`` through its noun alias)."""
        return list(self._by_word.get(lemma, ()))

    def lemmas(self) -> list[str]:
        """Every word :meth:`rolesets_of` answers for (predicate lemmas and alias words), sorted."""
        return sorted(self._by_word)

    @classmethod
    def from_frame_files(cls, frames: str | os.PathLike | Iterable[str | os.PathLike],
                         source: dict[str, str]) -> "FrameIndex":
        """Read frame files into an index.

        Args:
            frames: a directory (its ``*.xml`` files are read in sorted name order) or frame file paths
                (read in the order given).
            source: ``repository``, ``commit``, ``licence`` and ``attribution`` of the frame files, kept as
                :attr:`source` and saved with the index.

        Raises:
            DataFormatError: a file that is not well-formed XML or not a ``<frameset>``, a directory without
                ``*.xml`` files, a predicate without ``lemma``, a role without a valid ``n``, an ``ARGM`` role
                without function tag (file and line named).
        """
        paths, shown = _frame_paths(frames)
        missing = [key for key in ("repository", "commit", "licence", "attribution") if not source.get(key)]
        if missing:
            raise UserError(f"the frame index source needs {', '.join(missing)} (where the frame files come from)")
        rolesets: dict[str, Roleset] = {}
        first_seen: dict[str, str] = {}
        skipped: list[str] = []
        counts = {"files": len(paths), "rolesets": 0, "roles": 0, "skipped": 0, "skipped_without_id": 0,
                  "skipped_duplicate_id": 0, "role_links_not_kept": 0}
        for path, name in zip(paths, shown):
            root, lines = _parse_xml(path)
            if root.tag != "frameset":
                raise DataFormatError(path, lines[root], f"expected a <frameset> root element, found <{root.tag}>")
            for predicate in root.iter("predicate"):
                lemma = (predicate.get("lemma") or "").strip()
                if not lemma:
                    raise DataFormatError(path, lines[predicate], "expected a lemma attribute on <predicate>")
                for element in predicate.findall("roleset"):
                    where = f"{name}:{lines[element]}"
                    roleset_id = (element.get("id") or "").strip()
                    if not roleset_id:
                        skipped.append(f"{where}: a roleset of {lemma!r} without id")
                        counts["skipped_without_id"] += 1
                        continue
                    if roleset_id in rolesets:
                        skipped.append(f"{where}: roleset {roleset_id} already read from {first_seen[roleset_id]}")
                        counts["skipped_duplicate_id"] += 1
                        continue
                    roleset = _roleset(element, roleset_id, lemma, path, lines, counts)
                    rolesets[roleset_id] = roleset
                    first_seen[roleset_id] = where
                    counts["roles"] += len(roleset.roles)
        counts["rolesets"] = len(rolesets)
        counts["skipped"] = len(skipped)
        return cls(rolesets=rolesets, source=dict(source), counts=counts, skipped=tuple(skipped))

    def to_json(self) -> dict:
        """The index as the JSON object :meth:`save` writes (empty link lists left out)."""
        def role(r: Role) -> dict:
            data = {"n": r.number, "f": r.function, "descr": r.description}
            if r.vn_roles:
                data["vn"] = [list(pair) for pair in r.vn_roles]
            if r.fn_roles:
                data["fn"] = [list(pair) for pair in r.fn_roles]
            return data

        return {
            "format": FORMAT, "source": self.source, "counts": self.counts, "skipped": list(self.skipped),
            "rolesets": {rid: {"name": r.name, "lemma": r.lemma, "aliases": [list(a) for a in r.aliases],
                               "roles": [role(x) for x in r.roles]} for rid, r in self.rolesets.items()},
        }

    def save(self, path: str | os.PathLike) -> None:
        """Write the index as gzip JSON, byte for byte the same for the same index (sorted keys, mtime 0)."""
        text = json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
        data = gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)
        path = pathlib.Path(path)
        scratch = path.with_name(f".{path.name}.partial")
        scratch.write_bytes(data)
        os.replace(scratch, path)

    @classmethod
    def load(cls, path: str | os.PathLike = DEFAULT_FRAME_INDEX) -> "FrameIndex":
        """Read an index :meth:`save` wrote (by default the shipped one).

        Raises:
            DataFormatError: not a gzip JSON frame index, or a roleset entry without the expected fields.
        """
        try:
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as error:
            if isinstance(error, FileNotFoundError):
                raise
            raise DataFormatError(path, None, f"expected a gzip-compressed JSON frame index ({error})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            found = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise DataFormatError(path, None, f"expected a frame index of format {FORMAT!r}, found {found!r}")
        rolesets = {}
        for rid, entry in data["rolesets"].items():
            try:
                roles = tuple(Role(number=r["n"], function=r["f"], description=r["descr"],
                                   vn_roles=tuple(tuple(p) for p in r.get("vn", ())),
                                   fn_roles=tuple(tuple(p) for p in r.get("fn", ()))) for r in entry["roles"])
                rolesets[rid] = Roleset(id=rid, name=entry["name"], lemma=entry["lemma"],
                                        aliases=tuple(tuple(a) for a in entry["aliases"]), roles=roles)
            except (KeyError, TypeError, AttributeError) as error:
                raise DataFormatError(path, None, f"roleset {rid!r}: expected name, lemma, aliases and roles "
                                                  f"(n, f, descr) ({type(error).__name__}: {error})") from None
        return cls(rolesets=rolesets, source=data["source"], counts=data["counts"], skipped=tuple(data["skipped"]))


def _frame_paths(frames: str | os.PathLike | Iterable[str | os.PathLike]) -> tuple[list[str], list[str]]:
    """The frame files to read, and the names skipped rolesets are reported under (a directory's files by
    their name in it, so an index does not record where its builder kept the frame files)."""
    if isinstance(frames, (str, os.PathLike)):
        if not os.path.isdir(frames):
            raise UserError(f"{os.fspath(frames)}: expected a directory of PropBank frame files (*.xml)")
        names = sorted(p.name for p in pathlib.Path(frames).glob("*.xml"))
        if not names:
            raise DataFormatError(frames, None, "expected PropBank frame files (*.xml) in this directory, found none")
        return [os.path.join(frames, name) for name in names], names
    paths = [os.fspath(p) for p in frames]
    return paths, paths


def _parse_xml(path: str) -> tuple[ElementTree.Element, dict[ElementTree.Element, int]]:
    """The file's element tree and the 1-based line each element starts on."""
    builder = ElementTree.TreeBuilder()
    lines: dict[ElementTree.Element, int] = {}
    parser = expat.ParserCreate()

    def start(tag: str, attrs: dict[str, str]) -> None:
        lines[builder.start(tag, attrs)] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    with open(path, "rb") as handle:
        try:
            parser.ParseFile(handle)
        except expat.ExpatError as error:
            raise DataFormatError(path, error.lineno, f"expected well-formed XML: {expat.ErrorString(error.code)} "
                                                      f"at column {error.offset + 1}") from None
    return builder.close(), lines


def _roleset(element: ElementTree.Element, roleset_id: str, lemma: str, path: str,
             lines: dict[ElementTree.Element, int], counts: dict[str, int]) -> Roleset:
    aliases = tuple(((alias.text or "").strip(), alias.get("pos", "")) for alias in element.findall("aliases/alias"))
    roles = []
    for role in element.findall("roles/role"):
        number = (role.get("n") or "").strip().upper()
        if number not in ROLE_NUMBERS:
            raise DataFormatError(path, lines[role], f"roleset {roleset_id}: expected a role number n of 0-9, A or M, "
                                                     f"found {role.get('n')!r}")
        function = (role.get("f") or "").strip().upper()
        function = "" if function in _NO_TAG else function
        if number == "M" and not function:
            raise DataFormatError(path, lines[role], f"roleset {roleset_id}: expected a function tag f on the "
                                                     f"n=\"M\" role (its label is ARGM-<tag>)")
        links: dict[str, dict[tuple[str, str], None]] = {"vn": {}, "fn": {}}
        for link in role.iter("rolelink"):
            kind = _LINK_RESOURCES.get((link.get("resource") or "").strip().lower())
            if kind is None:
                counts["role_links_not_kept"] += 1
                continue
            links[kind][((link.get("class") or "").strip(), (link.text or "").strip())] = None
        for vnrole in role.iter("vnrole"):  # PropBank 3.1 and earlier
            links["vn"][((vnrole.get("vncls") or "").strip(), (vnrole.get("vntheta") or "").strip())] = None
        roles.append(Role(number=number, function=function, description=(role.get("descr") or "").strip(),
                          vn_roles=tuple(links["vn"]), fn_roles=tuple(links["fn"])))
    return Roleset(id=roleset_id, name=(element.get("name") or "").strip(), lemma=lemma, aliases=aliases,
                   roles=tuple(roles))


def attribution(repository: str, commit: str, licence: str) -> str:
    """The default attribution line of an index built from ``repository`` at ``commit``."""
    return (f"PropBank frame files, {repository} at commit {commit}, licensed under {licence}; "
            "rolesets and roles extracted by data_pipeline/frame_index.py")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command-line entry point: ``build`` reads frame files, writes the index and prints its counts."""
    parser = argparse.ArgumentParser(prog="python -m data_pipeline.frame_index", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="build a frame index from a directory of PropBank frame files")
    build.add_argument("frames", metavar="FRAMES_DIR",
                       help="directory of frame files (*.xml), e.g. a checkout's frames/")
    build.add_argument("--out", required=True, help="index to write, e.g. data/propbank-frames/frames.json.gz")
    build.add_argument("--repository", required=True, help="where the frame files come from (URL)")
    build.add_argument("--commit", required=True, help="the commit (or release) of the frame files")
    build.add_argument("--licence", default="CC BY-SA 4.0", help="the frame files' licence (default: CC BY-SA 4.0)")
    build.add_argument("--attribution", help="attribution text (default: one naming repository, commit and licence)")
    args = parser.parse_args(argv)
    source = {"repository": args.repository, "commit": args.commit, "licence": args.licence,
              "attribution": args.attribution or attribution(args.repository, args.commit, args.licence)}
    try:
        index = FrameIndex.from_frame_files(args.frames, source)
        index.save(args.out)
    except (UserError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for line in index.skipped:
        print(f"skipped: {line}")
    c = index.counts
    print(f"files {c['files']}, rolesets {c['rolesets']}, roles {c['roles']}, skipped {c['skipped']} "
          f"({c['skipped_without_id']} without id, {c['skipped_duplicate_id']} duplicate id); "
          f"role links to other resources not kept: {c['role_links_not_kept']}; wrote {args.out} "
          f"({os.path.getsize(args.out):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
