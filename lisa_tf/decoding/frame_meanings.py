"""What a labelled frame means: its roleset's name and each argument's role, read from a PropBank frame index.

Every output of a model with a sense head takes its meanings from here: :func:`lisa_tf.labelling.predictor.frame`
(``lisa_tf.load(...).predict``, ``predict``'s text, JSONL and CoNLL-2012 output, ``label-corpus``
records) and the label tables of a SavedModel export (:func:`tables`, looked up in-graph by the REST
and gRPC signatures and drawn by the demo page), so a frame reads the same everywhere.

A predicate's sense is a pair ``(roleset id, source)``; ``source`` says where the roleset comes from:

* ``"model"``: the model chose it among the rolesets it knows for the word;
* ``"frame_index"``: a fallback, the frame index's first roleset for the word, which the model does not
  know (marked ``?`` in the text output: ``bark.01?``);
* ``"none"``: no roleset is known for the word (roleset id ``""``; no sense is shown).

The meanings, for a roleset the index holds (``bark.01``, "vocalize like a dog"):

* the predicate's ``sense_name``, the roleset's name (``None`` where the index lacks the roleset, or
  gives it no name);
* for an argument whose role the roleset has, its ``description`` (``"barker"``), ``function_tag``
  (``"PAG"``) and ``vn_role``, the first VerbNet thematic role linked to it (``"agent"``); a key whose
  value is unknown is left out of the argument (most modifiers, ``ARGM-TMP``, are no role of their
  roleset and have none). A continuation or reference argument (``C-ARG1``, ``R-ARG0``) takes the
  meaning of the role it continues or refers to.

Meanings are the index's strings with their runs of white space made one space, so they fit one line
of a TSV table. The index is the shipped PropBank one, with a user's own index (``frames=PATH``, ``--frames``)
merged over it (:func:`frame_index`: the user's roleset wins a clash of ids, the shipped ones the user's
files do not give keep their meanings); the rolesets of lemmas it adds become senses of their words
through the model's lexicon (:mod:`lisa_tf.decoding.own_frames`). It is loaded once per process and
path, when the first sense is labelled: a model without a sense head never loads it.
"""

from __future__ import annotations

import functools
import os
import pathlib
import re
import sys
from typing import Optional

from data_pipeline.errors import UserError
from data_pipeline.frame_index import DEFAULT_FRAME_INDEX, FrameIndex

#: Where a predicate's roleset comes from (module docstring).
SOURCES = ("none", "model", "frame_index")
#: The prefix of a continuation or reference argument, dropped to find its role (Python ``re`` and
#: TensorFlow's RE2 read it alike: the export strips it in-graph with the same pattern).
ROLE_PREFIX = "^[RC]-"
#: What joins a roleset id and a role label in the export's role tables (``bark.01|ARG0``).
ROLE_KEY = "|"
#: The argument keys :func:`role_meaning` may give, and the export's per-argument output of each.
ARGUMENT_KEYS = {"description": "argument_descriptions", "function_tag": "argument_function_tags",
                 "vn_role": "argument_vn_roles"}


class FrameIndexError(UserError):
    """A frame index path that cannot be used: names the option and the path, and what is expected."""


def check_frames(path: Optional[str | os.PathLike], option: str = "frames") -> Optional[pathlib.Path]:
    """``path`` as a path once it names a file (``None``: the shipped index, nothing to check).

    Raises:
        FrameIndexError: no such file.
    """
    if path is None:
        return None
    path = pathlib.Path(path)
    if not path.is_file():
        raise FrameIndexError(f"{option} {path}: no such file; expected a frame index (frames.json.gz, built with "
                              "python -m data_pipeline.frame_index build FRAMES_DIR --out PATH ...)")
    return path


def attribution_files(path: Optional[str | os.PathLike] = None) -> dict[str, pathlib.Path]:
    """The ``ATTRIBUTION`` and ``LICENSE`` files beside the frame index at ``path`` (``None``: the shipped
    one: PropBank's frame files, CC BY-SA 4.0), those that exist: what a model or an export that shows
    the index's meanings carries with it."""
    directory = pathlib.Path(path if path is not None else DEFAULT_FRAME_INDEX).parent
    return {name: directory / name for name in ("ATTRIBUTION", "LICENSE") if (directory / name).is_file()}


def frame_index(path: Optional[str | os.PathLike] = None) -> FrameIndex:
    """The frame index the meanings are read from: the shipped one (``DEFAULT_FRAME_INDEX``) with, when
    ``path`` names a user's own index, that index merged over it (:meth:`FrameIndex.over`: its rolesets
    win a clash of ids, the shipped ones it does not give stay). Read once per process and path."""
    return _load(os.path.abspath(path if path is not None else DEFAULT_FRAME_INDEX))


def meanings_index(path: Optional[str | os.PathLike] = None):
    """What a frame's meanings are read from: the rolesets by id (``.roleset(id)``) of the shipped index
    looked up in its cached table (:class:`~lisa_tf.decoding.roleset_lookup.RolesetLookup`: no process but
    the first reads it whole), or, when ``path`` names a user's own index, the merged index of
    :func:`frame_index`. Once per process and path."""
    if path is not None:
        return frame_index(path)
    return _shipped_lookup()


@functools.lru_cache(maxsize=1)
def _shipped_lookup():
    from lisa_tf.decoding.roleset_lookup import RolesetLookup

    return RolesetLookup(DEFAULT_FRAME_INDEX)


def own_frame_index(path: str | os.PathLike) -> FrameIndex:
    """The index at ``path`` alone, not merged: the rolesets and lemmas a user's own frame files give
    (:mod:`lisa_tf.decoding.own_frames` adds them to a model's lexicon). Read once per process and path."""
    return _read(os.path.abspath(path))


@functools.lru_cache(maxsize=4)
def _load(path: str) -> FrameIndex:
    shipped = _read(os.path.abspath(DEFAULT_FRAME_INDEX))
    if path == os.path.abspath(DEFAULT_FRAME_INDEX):
        return shipped
    own = _read(path)
    replaced = sorted(set(own.rolesets) & set(shipped.rolesets))
    if replaced:  # reported once per process and index, where the merge is made
        print(f"frames {path}: {len(replaced)} of its rolesets replace the shipped ones of the same id "
              f"({', '.join(replaced[:5])}{', ...' if len(replaced) > 5 else ''})", file=sys.stderr)
    return own.over(shipped)


@functools.lru_cache(maxsize=4)
def _read(path: str) -> FrameIndex:
    return FrameIndex.load(path)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def base_role(label: str) -> str:
    """The role an argument label names: ``C-ARG1`` and ``R-ARG1`` → ``ARG1``."""
    return re.sub(ROLE_PREFIX, "", label)


def sense_name(index: FrameIndex, roleset_id: str) -> Optional[str]:
    """The roleset's name (``"vocalize like a dog"``), or ``None`` where the index lacks it or gives none."""
    roleset = index.roleset(roleset_id) if roleset_id else None
    return _one_line(roleset.name) or None if roleset is not None else None


def role_meaning(index: FrameIndex, roleset_id: str, label: str) -> dict:
    """What the argument ``label`` of roleset ``roleset_id`` means: ``description``, ``function_tag`` and
    ``vn_role``, those that are known (``{}`` when the roleset lacks the role)."""
    roleset = index.roleset(roleset_id) if roleset_id else None
    role = roleset.role(base_role(label)) if roleset is not None else None
    if role is None:
        return {}
    meaning = {"description": _one_line(role.description), "function_tag": role.function,
               "vn_role": _one_line(role.vn_roles[0][1]) if role.vn_roles else ""}
    return {key: value for key, value in meaning.items() if value}


def sense_fields(index: FrameIndex, roleset_id: str, source: str) -> dict:
    """A predicate's ``sense`` (``None`` for source ``"none"``), ``sense_source`` and ``sense_name``.

    Raises:
        ValueError: ``source`` is not one of :data:`SOURCES`.
    """
    if source not in SOURCES:
        raise ValueError(f"sense source: expected one of {', '.join(SOURCES)}, found {source!r}")
    roleset_id = roleset_id if source != "none" else ""
    return {"sense": roleset_id or None, "sense_source": source, "sense_name": sense_name(index, roleset_id)}


def shown_role(argument: dict) -> str:
    """An argument's label as the text output shows it: ``ARG0 barker`` (its description when known)."""
    return f"{argument['role']} {argument['description']}" if argument.get("description") else argument["role"]


def heading(predicate: dict) -> str:
    """A frame's heading in the text output: ``barked (bark.01, vocalize like a dog)``; a fallback
    roleset is marked ``?`` (``barked (bark.01?, vocalize like a dog)``), a predicate without a roleset
    (or of a model without senses) is its word alone."""
    sense = predicate.get("sense")
    if not sense:
        return predicate["text"]
    mark = "?" if predicate.get("sense_source") == "frame_index" else ""
    name = f", {predicate['sense_name']}" if predicate.get("sense_name") else ""
    return f"{predicate['text']} ({sense}{mark}{name})"


def tables(index: FrameIndex) -> dict[str, list[tuple[str, str]]]:
    """The export's meaning tables, ``(key, value)`` rows with the strings :func:`sense_name` and
    :func:`role_meaning` give (unknown values left out): ``sense_names`` keyed by roleset id, and per
    key of :data:`ARGUMENT_KEYS` a table keyed by ``roleset|label`` (``bark.01|ARG0``)."""
    out: dict[str, list[tuple[str, str]]] = {"sense_names": []} | {key: [] for key in ARGUMENT_KEYS}
    for roleset_id in sorted(index.rolesets):
        name = sense_name(index, roleset_id)
        if name:
            out["sense_names"].append((roleset_id, name))
        labels = dict.fromkeys(role.label for role in index.rolesets[roleset_id].roles)  # the first of a label
        for label in labels:
            for key, value in role_meaning(index, roleset_id, label).items():
                out[key].append((f"{roleset_id}{ROLE_KEY}{label}", value))
    return out
