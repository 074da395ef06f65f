"""The rolesets of a frame index looked up by id, without reading the whole index in every process.

A frame is shown with its sense's name and its roles' meanings (:mod:`lisa_tf.decoding.frame_meanings`),
which need only the rolesets of the senses labelled. Reading the shipped PropBank index whole (11,205
rolesets: decompress, parse the JSON, check it, build every roleset) takes 0.9–1.4 s, paid by each new process
before its first frame. :class:`RolesetLookup` reads the index whole once, the first time a process on this
machine asks, into an SQLite table of roleset id → its JSON entry in the user's cache; later processes
open that table and read the rolesets they show, one query each::

    $LISA_TF_CACHE/frame-index/NAME-KEY.sqlite   (the cache of lisa_tf.packages.export_cache)

``KEY`` is a hash of the index file's bytes, so a changed index gets a new table, never a stale one. The
table is written beside its place and renamed into it, whole or not at all; where the cache cannot be
written, the process keeps the index it read in memory and labels the same.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sqlite3
import threading
from typing import Optional

from data_pipeline.frame_index import FrameIndex, Roleset, roleset_from_json, roleset_to_json
from lisa_tf.packages.export_cache import cache_directory

#: The cache's folder of roleset tables.
FOLDER = "frame-index"


def table_path(index_path: str | os.PathLike) -> pathlib.Path:
    """Where the roleset table of the index file ``index_path`` is kept (its name and a hash of its bytes)."""
    index_path = pathlib.Path(index_path)
    key = hashlib.sha256(index_path.read_bytes()).hexdigest()[:16]
    return cache_directory() / FOLDER / f"{index_path.name.split('.')[0]}-{key}.sqlite"


class RolesetLookup:
    """The rolesets of the index file ``path`` by id, as :meth:`FrameIndex.roleset` gives them (module
    docstring). Safe to share between threads.

    Raises:
        FileNotFoundError, DataFormatError: as :meth:`FrameIndex.load` (the first read of an index only).
    """

    def __init__(self, path: str | os.PathLike):
        self.path = pathlib.Path(path)
        self._lock = threading.Lock()
        self._found: dict[str, Optional[Roleset]] = {}
        self._index: Optional[FrameIndex] = None
        self._table: Optional[sqlite3.Connection] = None
        table = table_path(self.path)
        if table.is_file():
            try:
                self._table = sqlite3.connect(f"file:{table}?mode=ro", uri=True, check_same_thread=False)
                return
            except sqlite3.Error:  # unreadable: read the index itself
                pass
        self._index = FrameIndex.load(self.path)  # checked whole before anything is written
        _write_table(self._index, table)

    def roleset(self, roleset_id: str) -> Optional[Roleset]:
        """The roleset ``roleset_id`` (``"bark.01"``), or ``None`` when the index lacks it."""
        if self._index is not None:
            return self._index.roleset(roleset_id)
        with self._lock:
            if roleset_id not in self._found:
                row = self._table.execute("SELECT entry FROM rolesets WHERE id = ?", (roleset_id,)).fetchone()
                self._found[roleset_id] = roleset_from_json(roleset_id, json.loads(row[0])) if row else None
            return self._found[roleset_id]


def _write_table(index: FrameIndex, table: pathlib.Path) -> None:
    """``index``'s rolesets as the table at ``table``, written beside it and renamed into place; nothing
    when the cache cannot be written (the caller keeps the index in memory)."""
    partial = table.with_name(f".{table.name}.{os.getpid()}.partial")
    try:
        table.parent.mkdir(parents=True, exist_ok=True)
        partial.unlink(missing_ok=True)
        with sqlite3.connect(partial) as connection:
            connection.execute("CREATE TABLE rolesets (id TEXT PRIMARY KEY, entry TEXT NOT NULL)")
            connection.executemany("INSERT INTO rolesets VALUES (?, ?)",
                                   ((rid, json.dumps(roleset_to_json(r), ensure_ascii=False))
                                    for rid, r in index.rolesets.items()))
        connection.close()
        os.replace(partial, table)
    except (OSError, sqlite3.Error):
        try:
            partial.unlink(missing_ok=True)
        except OSError:  # no cache directory to have written in
            pass
