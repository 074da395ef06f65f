"""Files and directories written whole or not at all: beside the target, then renamed into place.

A command killed at any moment (``kill -9``, a full disk, a power cut) must leave either the old
file or the new one, never a truncated JSON, a 0-byte ``model.keras`` or a model directory with half
its assets. Every file a command writes for a user is therefore written to a sibling in the same
directory (same file system, so the rename is one metadata operation), flushed to disk, then moved
over the target with :func:`os.replace`, which POSIX makes atomic. Directories (a packaged model, an
export version) are built under a hidden sibling name and swapped in with ``renameat2(...,
RENAME_EXCHANGE)`` where Linux provides it: old and new trade places in one step, and the old one is
deleted afterwards. Elsewhere the old directory is first moved aside and moved back by
:func:`recover_directory` if the kill lands between the two renames.

Scratch siblings are named ``.partial-XXXX.NAME``: hidden, ending like the target (Keras insists on
``.keras`` and ``.weights.h5``), ignored by TensorFlow Serving's version poller (which takes only
numeric names), and removed by the next write of the same target.

Example:

>>> import pathlib, tempfile
>>> target = pathlib.Path(tempfile.mkdtemp()) / "scores.json"
>>> write_text(target, '{"f1": 71.2}\\n')
>>> target.read_text()
'{"f1": 71.2}\\n'
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import glob
import os
import pathlib
import shutil
import tempfile
from typing import Iterator

from data_pipeline.errors import UserError

#: The start of scratch siblings' names (``.partial-k3j2.model.keras``).
PARTIAL = ".partial-"
_RANDOM_CHARACTERS = 8  # the length of tempfile's random names
#: Where a directory is kept while it is being replaced on systems without an atomic exchange.
_ASIDE = ".replaced"


def _scratch_pattern(target: pathlib.Path) -> str:
    return f"{PARTIAL}*.{glob.escape(target.name)}"


def remove_scratch(target: str | os.PathLike) -> int:
    """Delete the scratch siblings an interrupted write of ``target`` left; returns how many."""
    target = pathlib.Path(target)
    removed = 0
    if not target.parent.is_dir():
        return 0
    for leftover in target.parent.glob(_scratch_pattern(target)):
        if leftover.name[len(PARTIAL) + _RANDOM_CHARACTERS:] != f".{target.name}":
            continue  # the scratch of another target whose name ends like this one
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)
        removed += 1
    return removed


def _fsync_directory(directory: pathlib.Path) -> None:
    try:
        handle = os.open(directory, os.O_RDONLY)
    except OSError:  # some file systems do not open directories
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


@contextlib.contextmanager
def partial_file(target: str | os.PathLike) -> Iterator[pathlib.Path]:
    """A path to write ``target``'s new content to; on leaving the block it replaces ``target``.

    If the block raises, ``target`` is left as it was and the partial file is deleted.

    Args:
        target: the file to replace (its directory must exist).

    Yields:
        A sibling path (``.partial-XXXX.NAME``) that does not exist yet.
    """
    target = pathlib.Path(target)
    remove_scratch(target)
    handle, name = tempfile.mkstemp(prefix=PARTIAL, suffix=f".{target.name}", dir=target.parent)
    os.close(handle)
    partial = pathlib.Path(name)
    partial.unlink()  # writers such as h5py or zipfile create the file themselves
    try:
        yield partial
        if not partial.exists():
            raise FileNotFoundError(f"{partial}: the writer did not create the file")
        with open(partial, "rb") as written:
            os.fsync(written.fileno())
        os.replace(partial, target)
        _fsync_directory(target.parent)
    finally:
        partial.unlink(missing_ok=True)


def write_text(target: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """Replace ``target`` by ``text``, whole or not at all."""
    with partial_file(target) as partial:
        partial.write_text(text, encoding=encoding)


def write_bytes(target: str | os.PathLike, data: bytes) -> None:
    """Replace ``target`` by ``data``, whole or not at all."""
    with partial_file(target) as partial:
        partial.write_bytes(data)


def _exchange_function():
    """libc's ``renameat2`` when this system has it (Linux, glibc >= 2.28), else ``None``."""
    if not hasattr(os, "uname") or os.uname().sysname != "Linux":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        function = libc.renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


_RENAMEAT2 = _exchange_function()
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(first: pathlib.Path, second: pathlib.Path) -> bool:
    """Swap two paths in one step; False when the system or file system cannot."""
    if _RENAMEAT2 is None:
        return False
    result = _RENAMEAT2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE)
    return result == 0


def recover_directory(target: str | os.PathLike) -> bool:
    """Put back a directory that a replacement interrupted between its two renames moved aside.

    Returns:
        True when ``target`` was missing and its moved-aside copy was restored.
    """
    target = pathlib.Path(target)
    aside = target.with_name(f".{target.name}{_ASIDE}")
    if target.exists() or not aside.is_dir():
        return False
    os.rename(aside, target)
    return True


@contextlib.contextmanager
def partial_directory(target: str | os.PathLike) -> Iterator[pathlib.Path]:
    """An empty sibling directory to build ``target``'s new content in; on leaving the block it
    takes ``target``'s place (the old directory, if any, is then deleted).

    If the block raises, ``target`` is left as it was and the partial directory is deleted.

    Args:
        target: the directory to create or replace (its parent is created if missing).

    Yields:
        The new, empty sibling directory (``.partial-XXXX.NAME``).
    """
    target = pathlib.Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    recover_directory(target)
    remove_scratch(target)
    partial = pathlib.Path(tempfile.mkdtemp(prefix=PARTIAL, suffix=f".{target.name}", dir=target.parent))
    try:
        yield partial
        _fsync_tree(partial)
        if not target.exists():
            os.rename(partial, target)
        elif not _exchange(partial, target):
            aside = target.with_name(f".{target.name}{_ASIDE}")
            shutil.rmtree(aside, ignore_errors=True)
            os.rename(target, aside)
            os.rename(partial, target)
            shutil.rmtree(aside, ignore_errors=True)
        # after an exchange ``partial`` holds the old directory
        _fsync_directory(target.parent)
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)


def check_writable(target: str | os.PathLike, flag: str) -> pathlib.Path:
    """Check, before any work, that ``target`` can be written (its directory is created if missing).

    Args:
        target: the file a command will write at the end.
        flag: the option that named it, for the message (``--out``).

    Returns:
        ``target`` as a path.

    Raises:
        UserError: one line naming the flag, the path and why it cannot be written.
    """
    target = pathlib.Path(target)
    if target.is_dir():
        raise UserError(f"{flag} {target}: is a directory; expected a file path")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=PARTIAL, suffix=f".{target.name}", dir=target.parent)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise UserError(f"{flag} {target}: cannot be written ({error.strerror or error}); expected a path in a "
                        "writable directory") from None
    return target


def _fsync_tree(directory: pathlib.Path) -> None:
    for root, _, files in os.walk(directory):
        for name in files:
            with open(os.path.join(root, name), "rb") as written:
                os.fsync(written.fileno())
        _fsync_directory(pathlib.Path(root))


__all__ = ["PARTIAL", "check_writable", "partial_directory", "partial_file", "recover_directory", "remove_scratch", "write_bytes",
           "write_text"]
