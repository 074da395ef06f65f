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
skipped and counted, with the reason, in :attr:`FrameIndex.counts` and :attr:`FrameIndex.skipped`; so
is a ``*.xml`` name of the directory that is no regular file (a FIFO would block the build forever).

Strings: no string of an index holds a control character (tab, newline, carriage return, escape,
bell, DEL, C1 controls), a line or paragraph separator, or a lone surrogate; roleset ids and function
tags, which key the export's meaning tables (one ``key<TAB>value`` per line, keys ``bark.01|ARG0``),
hold no white space and no ``|`` either. Tabs and line breaks would break those tables, other control
characters would reach a terminal as commands (colours, window titles), and a lone surrogate is not
UTF-8. XML character references (``&#9;``, ``&#10;``, ``&#124;``) can put any of them in an
attribute; the build refuses them, naming file, line and field. (``|`` is left to names and
descriptions, which are values of the tables, not keys: PropBank's own use it, ``[put|be] in a line``.)

A saved index is read only after it is checked, whole, against one schema (:func:`check_index_data`:
every key, type and shape :meth:`FrameIndex.to_json` writes, each JSON object's keys once, and
``counts`` agreeing with what the index holds), and only up to :data:`MAX_INDEX_BYTES` decompressed:
whatever is wrong is one :class:`~data_pipeline.errors.DataFormatError` naming the file and where in
it (``rolesets['bark.01'].roles[0].f``), before anything of it is used.

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
import re
import stat
import sys
import zlib
from typing import BinaryIO, Iterable, Optional, Sequence
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
#: Most bytes a saved index may decompress to. The shipped PropBank 3.4 index (11,205 rolesets, 28,617
#: roles) is 660,756 bytes of gzip that decompress to 3,468,004 (3.3 MiB); 32 MiB leaves room for frame
#: sets nearly ten times as large, while a file that decompresses to more (1.7 MB of gzip can hold 1 GiB
#: of spaces) is refused after MAX_INDEX_BYTES + 1 bytes, never read whole.
MAX_INDEX_BYTES = 32 << 20
#: Characters no string of an index may hold (module docstring): C0 and C1 control characters and DEL,
#: line and paragraph separators, lone surrogates.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
#: What a key of the export's meaning tables (roleset id, function tag) may not hold besides: white
#: space, and the ``|`` that joins roleset id and role label (``bark.01|ARG0``).
_NOT_IN_KEY = re.compile(r"[\s|]")
#: What a string of the index is expected to be, in messages.
TEXT = "a string without control characters (tab, newline, escape …)"
KEY = "a string without white space, '|' or control characters"
_CHARACTER_NAMES = {"\t": "a tab", "\n": "a newline", "\r": "a carriage return", "|": "'|'", " ": "a space"}


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
        counts: ``files`` (read), ``rolesets`` (kept), ``roles`` (of kept rolesets), ``skipped`` (all skipped
            rolesets), ``skipped_without_id``, ``skipped_duplicate_id``, ``role_links_not_kept`` (role links to
            resources other than VerbNet and FrameNet), ``files_not_regular`` (``*.xml`` names of the
            directory that are no regular file, not read; absent from indexes built before they were counted).
        skipped: one line per skipped roleset, ``file:line: why``, and per file not read, ``file: why``.
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

    def over(self, base: "FrameIndex") -> "FrameIndex":
        """This index merged over ``base``: every roleset of ``base``, a roleset of this index in place of
        ``base``'s of the same id (this one wins the clash, whole: name, lemma, aliases and roles), and
        the rolesets only this index has. What a user's own frame files do to the shipped PropBank index.

        The merged index is one :meth:`save` writes: ``source`` is ``base``'s, with this index's under
        keys prefixed ``over_`` (``over_repository`` …); ``counts`` and ``skipped`` are both indexes'
        summed (``rolesets`` and ``roles``: the merged index's own)."""
        rolesets = {**base.rolesets, **self.rolesets}
        counts = {key: base.counts.get(key, 0) + self.counts.get(key, 0)
                  for key in dict.fromkeys([*base.counts, *self.counts])}
        counts.update(rolesets=len(rolesets), roles=sum(len(r.roles) for r in rolesets.values()))
        source = {**base.source, **{f"over_{key}": value for key, value in self.source.items()}}
        return FrameIndex(rolesets=rolesets, source=source, counts=counts, skipped=base.skipped + self.skipped)

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
                without function tag, a string the index may not hold (module docstring: a tab, newline or
                other control character; white space or ``|`` in a roleset id or function tag), a path given
                that is no regular file (file and line named).
            UserError: ``source`` lacks one of its keys, or holds what a string of the index may not.
        """
        paths, shown, not_regular = _frame_paths(frames)
        missing = [key for key in ("repository", "commit", "licence", "attribution") if not source.get(key)]
        if missing:
            raise UserError(f"the frame index source needs {', '.join(missing)} (where the frame files come from)")
        for key, value in source.items():
            problem = _string_problem(value) if isinstance(value, str) else None
            if not isinstance(value, str) or problem:
                raise UserError(f"the frame index source {key}: expected {TEXT}, found {_found(value)}"
                                + (f" ({problem})" if problem else ""))
        rolesets: dict[str, Roleset] = {}
        first_seen: dict[str, str] = {}
        skipped: list[str] = []
        counts = {"files": len(paths), "rolesets": 0, "roles": 0, "skipped": 0, "skipped_without_id": 0,
                  "skipped_duplicate_id": 0, "role_links_not_kept": 0, "files_not_regular": len(not_regular)}
        for path, name in zip(paths, shown):
            root, lines = _parse_xml(path)
            if root.tag != "frameset":
                raise DataFormatError(path, lines[root], f"expected a <frameset> root element, found <{root.tag}>")
            for predicate in root.iter("predicate"):
                lemma = _field((predicate.get("lemma") or "").strip(), path, lines[predicate], "<predicate> lemma")
                if not lemma:
                    raise DataFormatError(path, lines[predicate], "expected a lemma attribute on <predicate>")
                for element in predicate.findall("roleset"):
                    where = f"{name}:{lines[element]}"
                    roleset_id = (element.get("id") or "").strip()
                    if not roleset_id:
                        skipped.append(f"{where}: a roleset of {lemma!r} without id")
                        counts["skipped_without_id"] += 1
                        continue
                    _field(roleset_id, path, lines[element], "<roleset> id", key=True)
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
        return cls(rolesets=rolesets, source=dict(source), counts=counts, skipped=tuple(not_regular + skipped))

    def to_json(self) -> dict:
        """The index as the JSON object :meth:`save` writes (empty link lists left out)."""
        return {
            "format": FORMAT, "source": self.source, "counts": self.counts, "skipped": list(self.skipped),
            "rolesets": {rid: roleset_to_json(r) for rid, r in self.rolesets.items()},
        }

    def save(self, path: str | os.PathLike) -> None:
        """Write the index as gzip JSON, byte for byte the same for the same index (sorted keys, mtime 0).

        Raises:
            DataFormatError: the index is not one :meth:`load` reads (:func:`check_index_data`: an index
                made by hand, not by :meth:`from_frame_files`); nothing is written.
        """
        data = self.to_json()
        check_index_data(data, f"the index to write to {os.fspath(path)}")
        text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
        compressed = gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)
        path = pathlib.Path(path)
        scratch = path.with_name(f".{path.name}.partial")
        scratch.write_bytes(compressed)
        os.replace(scratch, path)

    @classmethod
    def load(cls, path: str | os.PathLike = DEFAULT_FRAME_INDEX) -> "FrameIndex":
        """Read an index :meth:`save` wrote (by default the shipped one), once all of it is checked
        against the schema (:func:`check_index_data`): a wrong index is refused whole, before any
        command labels, exports or prints with it.

        Raises:
            FileNotFoundError: no file at ``path``.
            DataFormatError: not a regular file; not gzip-compressed UTF-8 JSON; more than
                :data:`MAX_INDEX_BYTES` decompressed; JSON nested deeper than Python's parser reads; or
                not the schema (the message says where in the file, ``rolesets['bark.01'].roles[0].f``,
                and what was expected).
        """
        data = _read_json(path)
        check_index_data(data, path)
        rolesets = {rid: roleset_from_json(rid, entry) for rid, entry in data["rolesets"].items()}
        return cls(rolesets=rolesets, source=data["source"], counts=data["counts"], skipped=tuple(data["skipped"]))


def roleset_to_json(roleset: Roleset) -> dict:
    """A roleset as the index file holds it under its id (empty link lists left out)."""
    def role(r: Role) -> dict:
        data = {"n": r.number, "f": r.function, "descr": r.description}
        if r.vn_roles:
            data["vn"] = [list(pair) for pair in r.vn_roles]
        if r.fn_roles:
            data["fn"] = [list(pair) for pair in r.fn_roles]
        return data

    return {"name": roleset.name, "lemma": roleset.lemma, "aliases": [list(a) for a in roleset.aliases],
            "roles": [role(r) for r in roleset.roles]}


def roleset_from_json(roleset_id: str, entry: dict) -> Roleset:
    """The :class:`Roleset` ``roleset_id`` of an index file's entry (:func:`roleset_to_json`), already checked."""
    roles = tuple(Role(number=r["n"], function=r["f"], description=r["descr"],
                       vn_roles=tuple(tuple(p) for p in r.get("vn", ())),
                       fn_roles=tuple(tuple(p) for p in r.get("fn", ()))) for r in entry["roles"])
    return Roleset(id=roleset_id, name=entry["name"], lemma=entry["lemma"],
                   aliases=tuple(tuple(a) for a in entry["aliases"]), roles=roles)


def _frame_paths(frames: str | os.PathLike | Iterable[str | os.PathLike]) -> tuple[list[str], list[str], list[str]]:
    """The frame files to read; the names skipped rolesets are reported under (a directory's files by
    their name in it, so an index does not record where its builder kept the frame files); and a
    directory's ``*.xml`` names that are no regular file (a FIFO, a socket, a device, a directory, a
    broken link), one ``name: why`` line each: not read (a FIFO's reader waits for a writer, for ever),
    and reported. Paths given one by one are all read (:func:`_parse_xml` refuses what is no regular file)."""
    if isinstance(frames, (str, os.PathLike)):
        if not os.path.isdir(frames):
            raise UserError(f"{os.fspath(frames)}: expected a directory of PropBank frame files (*.xml)")
        names, not_regular = [], []
        for name in sorted(p.name for p in pathlib.Path(frames).glob("*.xml")):
            try:
                mode = os.stat(os.path.join(frames, name)).st_mode
            except FileNotFoundError:
                not_regular.append(f"{name}: not a regular file (a broken link); not read")
                continue
            if stat.S_ISREG(mode):
                names.append(name)
            else:
                not_regular.append(f"{name}: not a regular file ({_file_kind(mode)}); not read")
        if not names:
            besides = f" ({len(not_regular)} *.xml not regular files)" if not_regular else ""
            raise DataFormatError(frames, None, f"expected PropBank frame files (*.xml) in this directory, found "
                                                f"none{besides}")
        return [os.path.join(frames, name) for name in names], names, not_regular
    paths = [os.fspath(p) for p in frames]
    return paths, paths, []


def _file_kind(mode: int) -> str:
    """What a file that is not a regular one is, from its ``st_mode``: ``"a FIFO"``, ``"a directory"`` …"""
    kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _open_regular(path: str | os.PathLike) -> BinaryIO:
    """``path`` open for binary reading, once it is a regular file. It is opened without waiting (the
    open of a FIFO waits for a writer, for ever) and refused unless it is regular, so what is read is
    the file that was checked.

    Raises:
        FileNotFoundError, OSError: as :func:`open`.
        DataFormatError: no regular file.
    """
    nonblocking = getattr(os, "O_NONBLOCK", 0)
    descriptor = os.open(path, os.O_RDONLY | nonblocking)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise DataFormatError(path, None, f"expected a regular file, found {_file_kind(mode)}")
        if nonblocking:
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


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
    with _open_regular(path) as handle:
        try:
            parser.ParseFile(handle)
        except expat.ExpatError as error:
            raise DataFormatError(path, error.lineno, f"expected well-formed XML: {expat.ErrorString(error.code)} "
                                                      f"at column {error.offset + 1}") from None
    return builder.close(), lines


def _roleset(element: ElementTree.Element, roleset_id: str, lemma: str, path: str,
             lines: dict[ElementTree.Element, int], counts: dict[str, int]) -> Roleset:
    """The roleset ``element``, each string checked (:func:`_field`: file, line and field named)."""
    def text(value: Optional[str], node: ElementTree.Element, what: str) -> str:
        return _field((value or "").strip(), path, lines[node], f"roleset {roleset_id}: {what}")

    name = text(element.get("name"), element, "name")
    aliases = tuple((text(alias.text, alias, "<alias>"),
                     _field(alias.get("pos", ""), path, lines[alias], f"roleset {roleset_id}: <alias> pos"))
                    for alias in element.findall("aliases/alias"))
    roles = []
    for role in element.findall("roles/role"):
        number = (role.get("n") or "").strip().upper()
        if number not in ROLE_NUMBERS:
            raise DataFormatError(path, lines[role], f"roleset {roleset_id}: expected a role number n of 0-9, A or M, "
                                                     f"found {_shown(role.get('n'))}")
        function = (role.get("f") or "").strip().upper()
        function = "" if function in _NO_TAG else function
        _field(function, path, lines[role], f"roleset {roleset_id}: role n={number}: function tag f", key=True)
        if number == "M" and not function:
            raise DataFormatError(path, lines[role], f"roleset {roleset_id}: expected a function tag f on the "
                                                     f"n=\"M\" role (its label is ARGM-<tag>)")
        description = text(role.get("descr"), role, f"role n={number}: descr")
        links: dict[str, dict[tuple[str, str], None]] = {"vn": {}, "fn": {}}
        for link in role.iter("rolelink"):
            kind = _LINK_RESOURCES.get((link.get("resource") or "").strip().lower())
            if kind is None:
                counts["role_links_not_kept"] += 1
                continue
            links[kind][(text(link.get("class"), link, f"role n={number}: <rolelink> class"),
                         text(link.text, link, f"role n={number}: <rolelink>"))] = None
        for vnrole in role.iter("vnrole"):  # PropBank 3.1 and earlier
            links["vn"][(text(vnrole.get("vncls"), vnrole, f"role n={number}: <vnrole> vncls"),
                         text(vnrole.get("vntheta"), vnrole, f"role n={number}: <vnrole> vntheta"))] = None
        roles.append(Role(number=number, function=function, description=description,
                          vn_roles=tuple(links["vn"]), fn_roles=tuple(links["fn"])))
    return Roleset(id=roleset_id, name=name, lemma=lemma, aliases=aliases, roles=tuple(roles))


def _shown(text: Optional[str], limit: int = 40) -> str:
    """``text`` quoted for a message, its control and other unprintable characters escaped (``'\\x1b'``:
    a message goes to a terminal) and cut after ``limit`` characters."""
    if text is None:
        return "None"
    return repr(text[:limit]) + ("…" if len(text) > limit else "")


def _found(value: object) -> str:
    """What a JSON value is, for a message: ``null``, ``123``, ``'bark.01'``, ``a list of 1 item``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _shown(value)
    if isinstance(value, (int, float)):
        number = repr(value)
        return number if len(number) <= 40 else number[:40] + "…"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'' if len(value) == 1 else 's'}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _string_problem(value: str, key: bool = False) -> Optional[str]:
    """What ``value`` holds that a string of the index may not (module docstring; ``key``: a roleset
    id or function tag, which may hold no white space or ``|`` either), ``"a tab at character 4"``;
    None when nothing."""
    found = _CONTROL.search(value) or (_NOT_IN_KEY.search(value) if key else None)
    if found is None:
        return None
    character = found.group()
    if character in _CHARACTER_NAMES:
        name = _CHARACTER_NAMES[character]
    elif "\ud800" <= character <= "\udfff":
        name = f"a lone surrogate {ascii(character)}"
    elif _CONTROL.match(character):
        name = f"the control character {ascii(character)}"
    else:
        name = f"white space {ascii(character)}"
    return f"{name} at character {found.start() + 1}"


def _field(value: str, path: str, line: int, what: str, key: bool = False) -> str:
    """``value``, a string read from a frame file, once it is one the index may hold (module
    docstring; ``key``: a roleset id or function tag).

    Raises:
        DataFormatError: naming the file, the line and ``what`` (``roleset bark.01: role n=0: function tag f``).
    """
    problem = _string_problem(value, key)
    if problem:
        raise DataFormatError(path, line, f"{what}: expected {KEY if key else TEXT}, found {_shown(value)} "
                                          f"({problem})")
    return value


class _RepeatedKey(dict):
    """A JSON object that gives a key more than once (a JSON reader keeps the last, silently: a roleset
    of an index would be lost without a word), with the key, for the schema check to name."""

    repeated: str


def _json_object(pairs: list[tuple[str, object]]) -> dict:
    """``json``'s ``object_pairs_hook``: the object, marked (:class:`_RepeatedKey`) when a key repeats."""
    data = dict(pairs)
    if len(data) < len(pairs):
        seen: set[str] = set()
        data = _RepeatedKey(data)
        data.repeated = next(key for key, _ in pairs if key in seen or seen.add(key))
    return data


def _read_json(path: str | os.PathLike) -> object:
    """The JSON value of the gzip file ``path``, decompressing at most :data:`MAX_INDEX_BYTES` + 1 bytes.

    Raises:
        FileNotFoundError: no file at ``path``.
        DataFormatError: no regular file, not gzip, larger than the limit decompressed, not UTF-8 JSON,
            or JSON nested deeper than Python's parser reads (no index is: it is 7 deep).
    """
    try:
        with _open_regular(path) as file, gzip.GzipFile(fileobj=file, mode="rb") as handle:
            data = handle.read(MAX_INDEX_BYTES + 1)
    except FileNotFoundError:
        raise
    except (OSError, EOFError, zlib.error) as error:
        raise DataFormatError(path, None, f"expected a gzip-compressed JSON frame index ({error})") from None
    if len(data) > MAX_INDEX_BYTES:
        raise DataFormatError(path, None, f"expected a frame index of at most {MAX_INDEX_BYTES:,} bytes decompressed "
                                          f"(MAX_INDEX_BYTES; the PropBank 3.4 index is 3,468,004), found more")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DataFormatError(path, None, f"expected a gzip-compressed JSON frame index in UTF-8 ({error})") from None
    del data
    try:
        return json.loads(text, object_pairs_hook=_json_object)
    except RecursionError:
        raise DataFormatError(path, None, "expected a frame index (JSON objects and lists nested 7 deep), found "
                                          "JSON nested too deep to read") from None
    except ValueError as error:  # json.JSONDecodeError, and a number of more digits than Python converts
        raise DataFormatError(path, None, f"expected a gzip-compressed JSON frame index ({error})") from None


_SOURCE_KEYS = ("repository", "commit", "licence", "attribution")
_COUNT_KEYS = ("files", "rolesets", "roles", "skipped", "skipped_without_id", "skipped_duplicate_id",
               "role_links_not_kept")


def check_index_data(data: object, path: str | os.PathLike | None) -> None:
    """Check the JSON of a saved index (:meth:`FrameIndex.to_json`) against its one schema, whole,
    before any of it is used: a JSON reader takes anything that parses, and an index used unchecked
    fails far from its cause (a traceback while labelling, a TensorFlow error while exporting,
    escape sequences on a terminal) or not at all (a roleset lost to a repeated key).

    The schema, every object's keys given once and no other keys:

    * the index: ``format`` (:data:`FORMAT`), ``source``, ``counts``, ``skipped``, ``rolesets``;
    * ``source``: non-empty strings ``repository``, ``commit``, ``licence``, ``attribution``, and any
      other key the builder was given, a string;
    * ``counts``: whole numbers of at least 0, the seven :meth:`FrameIndex.from_frame_files` counts
      (and ``files_not_regular`` where counted), agreeing with the index: ``rolesets`` its rolesets,
      ``roles`` their roles, ``skipped`` the sum of ``skipped_without_id`` and ``skipped_duplicate_id``,
      and with ``files_not_regular`` the lines of ``skipped``;
    * ``skipped``: a list of strings;
    * ``rolesets``: roleset id (non-empty; a key: no white space, no ``|``) → ``name``, ``lemma``
      (non-empty), ``aliases`` (``[word, part of speech]`` pairs), ``roles`` (a list of ``n``: one of
      :data:`ROLE_NUMBERS`; ``f``, the function tag, a key, required for an ``M`` role; ``descr``;
      optionally ``vn`` and ``fn``, ``[class, role]`` and ``[frame, frame element]`` pairs);
    * every string without control characters, line separators or lone surrogates (module docstring).

    Raises:
        DataFormatError: the first difference, naming ``path``, where in the JSON
            (``rolesets['bark.01'].roles[0].vn[1]``), what was expected and what was found.
    """
    def fail(where: str, expected: str, found: str):
        raise DataFormatError(path, None, f"{where}: expected {expected}, found {found}")

    def an_object(value: object, where: str, expected: str, required: Sequence[str],
                  optional: Optional[Sequence[str]] = ()) -> dict:
        """``value`` once it is an object with the ``required`` keys, each once, and (``optional``
        None: any) no keys besides them and the ``optional`` ones."""
        if not isinstance(value, dict):
            fail(where, expected, _found(value))
        if isinstance(value, _RepeatedKey):
            fail(where, f"{expected}, each key once", f"{_shown(value.repeated)} more than once")
        for key in required:
            if key not in value:
                fail(where, expected, f"no {key!r}")
        if optional is not None:
            unknown = sorted(set(value).difference(required, optional))
            if unknown:
                fail(where, expected, f"{_shown(unknown[0])} besides")
        return value

    def a_string(value: object, where: str, key: bool = False, empty: bool = True) -> None:
        expected = KEY if key else TEXT
        if not isinstance(value, str):
            fail(where, expected, _found(value))
        problem = _string_problem(value, key)
        if problem:
            fail(where, expected, f"{_shown(value)} ({problem})")
        if not value and not empty:
            fail(where, f"a non-empty {expected[2:]}", "''")

    def pairs(value: object, where: str, pair: str) -> None:
        if not isinstance(value, list):
            fail(where, f"a list of {pair} pairs", _found(value))
        for i, item in enumerate(value):
            if not isinstance(item, list) or len(item) != 2:
                fail(f"{where}[{i}]", f"a {pair} pair (a list of 2 strings)", _found(item))
            a_string(item[0], f"{where}[{i}][0]")
            a_string(item[1], f"{where}[{i}][1]")

    def whole_number(value: object, where: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            fail(where, "a whole number of at least 0", _found(value))
        return value

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = _found(data.get("format")) if isinstance(data, dict) else _found(data)
        raise DataFormatError(path, None, f"expected a frame index of format {FORMAT!r}, found {found}")
    an_object(data, "the index", "a frame index (format, source, counts, skipped, rolesets)",
              ("format", "source", "counts", "skipped", "rolesets"))
    source = an_object(data["source"], "source", f"where the frame files come from ({', '.join(_SOURCE_KEYS)})",
                       _SOURCE_KEYS, None)
    for key, value in source.items():
        a_string(value, f"source[{_shown(key)}]", empty=key not in _SOURCE_KEYS)
    counts = an_object(data["counts"], "counts", f"the index's counts ({', '.join(_COUNT_KEYS)})", _COUNT_KEYS,
                       ("files_not_regular",))
    for key, value in counts.items():
        whole_number(value, f"counts.{key}")
    skipped = data["skipped"]
    if not isinstance(skipped, list):
        fail("skipped", "a list of strings (the rolesets and files skipped)", _found(skipped))
    for i, line in enumerate(skipped):
        a_string(line, f"skipped[{i}]")
    rolesets = an_object(data["rolesets"], "rolesets", "an object of roleset id → roleset", (), None)
    roles_read = 0
    for rid, entry in rolesets.items():
        where = f"rolesets[{_shown(rid)}]"
        a_string(rid, f"{where} (the roleset id)", key=True, empty=False)
        an_object(entry, where, "a roleset (name, lemma, aliases, roles)", ("name", "lemma", "aliases", "roles"))
        a_string(entry["name"], f"{where}.name")
        a_string(entry["lemma"], f"{where}.lemma", empty=False)
        pairs(entry["aliases"], f"{where}.aliases", "[word, part of speech]")
        roles = entry["roles"]
        if not isinstance(roles, list):
            fail(f"{where}.roles", "a list of roles", _found(roles))
        roles_read += len(roles)
        for i, role in enumerate(roles):
            at = f"{where}.roles[{i}]"
            an_object(role, at, "a role (n, f, descr; vn, fn where linked)", ("n", "f", "descr"), ("vn", "fn"))
            if not isinstance(role["n"], str) or role["n"] not in ROLE_NUMBERS:
                fail(f"{at}.n", "a role number: one of 0-9, A or M", _found(role["n"]))
            a_string(role["f"], f"{at}.f", key=True)
            if role["n"] == "M" and not role["f"]:
                fail(f"{at}.f", "the function tag of an n 'M' role (its label is ARGM-<tag>)", "''")
            a_string(role["descr"], f"{at}.descr")
            if "vn" in role:
                pairs(role["vn"], f"{at}.vn", "[VerbNet class, thematic role]")
            if "fn" in role:
                pairs(role["fn"], f"{at}.fn", "[FrameNet frame, frame element]")
    for key, actual, what in (("rolesets", len(rolesets), "the rolesets the index holds"),
                              ("roles", roles_read, "the roles of its rolesets"),
                              ("skipped", counts["skipped_without_id"] + counts["skipped_duplicate_id"],
                               "counts.skipped_without_id + counts.skipped_duplicate_id")):
        if counts[key] != actual:
            fail(f"counts.{key}", f"{actual:,} ({what})", f"{counts[key]:,}")
    if len(skipped) != counts["skipped"] + counts.get("files_not_regular", 0):
        fail("skipped", f"{counts['skipped'] + counts.get('files_not_regular', 0):,} lines (counts.skipped and "
                        "counts.files_not_regular)", f"{len(skipped):,}")


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
          f"role links to other resources not kept: {c['role_links_not_kept']}; *.xml not regular files, not "
          f"read: {c['files_not_regular']}; wrote {args.out} ({os.path.getsize(args.out):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
