"""SavedModel exports of packaged models and trained runs, built on first use and kept in a cache.

A shipped model is one artifact in ``models/NAME`` (``model.keras``, its card, and its run's request
limits in ``assets/``). The TensorFlow Serving version directory is a build product of it:
``python -m lisa_tf export --model NAME --out DIR/NAME/1`` writes one where asked, and ``predict`` and
``serve`` build one on their first start into this cache, which later starts reuse (``lisa_tf.load(...)``,
``label-corpus`` and the spaCy component label through it when it is there, and through the ``.keras`` file
otherwise or with ``prefer_export=False``)::

    $LISA_TF_CACHE/exports/NAME-KEY/1/      (default cache: $XDG_CACHE_HOME/lisa_tf, else ~/.cache/lisa_tf)
    $LISA_TF_CACHE/exports/NAME-labelling-KEY/1/

``serve`` builds and serves the first, a whole TensorFlow Serving export. ``predict`` builds the second, the
labelling export: the token signatures only, without the text signatures and the checkpoint ops TensorFlow
Serving restores variables with (:func:`export.saved_model.export_model`'s ``labelling``), which restores about
a quarter faster; ``lisa_tf.load()`` and the rest label through it, else through the server's export (and
``predict`` too builds none when it finds only the server's: it labels alike).

``serve`` takes a run directory alike (``…/exports/RUN-KEY/1/``, its best weights, as ``export --run``
writes them). ``KEY`` is a hash of what the export is built from (:func:`model_files`: the package's
``model.keras`` and ``assets/``; the run's ``model.keras``, config, training-data sizes and trained
weights) and of the code that exports it (the Python files of lisa_tf, export and data_pipeline, and the
shipped frame index a sense model's meaning tables are built from), and, for ``predict --frames``, of the
user's own frame index merged into the export (:mod:`lisa_tf.decoding.own_frames`), so a new model file,
new weights, new limits, changed code or a new frame index get a new export, never a stale one. The
build is written beside its target and renamed into place (:mod:`lisa_tf.util.atomic_files`) under a file
lock (``.NAME-KEY.lock``): two servers starting at once build it once, and a killed build leaves no half
export behind.

Old exports do not pile up: each build records its source's resolved path (``.NAME-KEY.source``), and
once a new export of a source is built, :func:`remove_earlier_exports` removes the earlier exports of
that same source (the same path, and the same ``--frames`` file or none; a model of the same name
elsewhere keeps its own). A process that
labels or serves through an export holds a shared lock on ``.NAME-KEY.use`` while it runs
(:func:`hold_export`); an export whose build lock or use lock is held by anyone is left for a later
build to remove. A removed export is first renamed out of its name in one step, so a process finds it
whole or not at all (and then builds or falls back to the ``.keras`` file). The empty lock files stay
(deleting a lock file another process is about to lock would let two hold it). Exports built before
sources were recorded are never removed; deleting the cache directory is always safe while no
``serve`` or ``predict`` runs.

This module names and finds the cache's exports (what ``predict`` needs); building one is
:func:`export.cache_build.build_export`'s (the export package sits above lisa_tf).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pathlib
import re
import shutil
from typing import Iterator, Optional

from data_pipeline.errors import UserError
from data_pipeline.frame_index import DEFAULT_FRAME_INDEX
from data_pipeline.version_names import parse_version
from lisa_tf.packages.finding import KERAS_FILE, PACKAGE_ASSETS, ROOT, is_package

#: The environment variable naming the cache directory.
CACHE_ENV = "LISA_TF_CACHE"


class ExportCacheError(UserError):
    """The cache directory cannot be used (names it, why, and :data:`CACHE_ENV`)."""

    def __init__(self, directory: pathlib.Path, error: OSError):
        super().__init__(f"export cache {directory}: {error.strerror or error}; expected a writable directory "
                         f"(set {CACHE_ENV} to one)")


def cache_directory() -> pathlib.Path:
    """``$LISA_TF_CACHE``, else ``$XDG_CACHE_HOME/lisa_tf``, else ``~/.cache/lisa_tf``."""
    if os.environ.get(CACHE_ENV):
        return pathlib.Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "lisa_tf"


def _code_files() -> list[pathlib.Path]:
    """The Python files that build an export (lisa_tf, export, data_pipeline), and the shipped frame index
    (the meaning tables of a sense model's export are built from it: :mod:`lisa_tf.decoding.frame_meanings`)."""
    return sorted(p for top in ("lisa_tf", "export", "data_pipeline") for p in (ROOT / top).rglob("*.py")) + [
        DEFAULT_FRAME_INDEX]


def model_files(source: str | os.PathLike) -> list[pathlib.Path]:
    """The files an export of ``source`` is built from: a package's model file and the files under its
    ``assets/`` (at any depth); a run's model file, ``config.json``, ``vocab/vocab_info.json`` and its
    trained weights (``best/model.weights.h5``, ``final.weights.h5``), those of them it holds."""
    source = pathlib.Path(source)
    if is_package(source):
        return [source / KERAS_FILE] + sorted(p for p in (source / PACKAGE_ASSETS).rglob("*") if p.is_file())
    run_files = ("config.json", "vocab/vocab_info.json", "best/model.weights.h5", "final.weights.h5")
    return [source / KERAS_FILE] + [source / name for name in run_files if (source / name).is_file()]


def package_key(package: str | os.PathLike, frames: Optional[str | os.PathLike] = None) -> str:
    """16 hex digits of the SHA-256 of the files the export is built from (:func:`model_files` of a
    package or a run), of the code that exports it (and the frame index it reads) and of the user's own
    frame index ``frames`` merged into it (``export --frames``; None: none)."""
    package = pathlib.Path(package)
    digest = hashlib.sha256()
    for path in _code_files():
        digest.update(path.read_bytes())
    if frames is not None:
        digest.update(b"frames\n" + pathlib.Path(frames).read_bytes())
    for path in model_files(package):
        digest.update(f"{path.relative_to(package)}\n".encode())
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()[:16]


def export_base(package: str | os.PathLike, frames: Optional[str | os.PathLike] = None,
                labelling: bool = False) -> pathlib.Path:
    """The cached export's base path of a package or a run (``…/exports/NAME-KEY``: a TF Serving model
    base path; ``labelling``: ``…/exports/NAME-labelling-KEY``, the export the library labels through),
    built with the user's own frame index ``frames`` (None: none)."""
    package = pathlib.Path(package).resolve()
    kind = "-labelling" if labelling else ""
    return cache_directory() / "exports" / f"{package.name}{kind}-{package_key(package, frames)}"


def cached_export(package: str | os.PathLike, frames: Optional[str | os.PathLike] = None,
                  labelling: bool = False) -> Optional[pathlib.Path]:
    """The cached export's version directory (built with the user's own frame index ``frames``; None:
    none; ``labelling``: the labelling export) when it has been built (held for this process:
    :func:`hold_export`), else None."""
    base = export_base(package, frames, labelling)
    hold_export(base)
    version = base / "1"
    return version if (version / "saved_model.pb").exists() else None


def labelling_export(package: str | os.PathLike, frames: Optional[str | os.PathLike] = None) -> Optional[pathlib.Path]:
    """The built export the library labels a package through: its labelling export, else the server's (the
    same token signatures; a little slower to restore); None when neither is built. Held as
    :func:`cached_export` holds it."""
    return cached_export(package, frames, labelling=True) or cached_export(package, frames)


def _lock_file(base: pathlib.Path, kind: str) -> pathlib.Path:
    """``.NAME-KEY.lock`` (held while the export is built), ``.use`` (held while it is used) or
    ``.source`` (the recorded source path) beside the export base ``NAME-KEY``."""
    return base.with_name(f".{base.name}.{kind}")


#: the use locks this process holds (open files: a lock lasts while its file is open), by export base
_held: dict = {}


def hold_export(base: pathlib.Path) -> None:
    """Hold a shared lock on the export ``base``'s use file until this process ends, so no build
    removes it while this process labels or serves through it (waits while one is being removed). A
    cache that does not exist or cannot be written is not held (nothing there can be removed by us)."""
    if base in _held or not base.parent.is_dir():
        return
    try:
        handle = open(_lock_file(base, "use"), "a")
    except OSError:
        return
    fcntl.flock(handle, fcntl.LOCK_SH)
    _held[base] = handle


@contextlib.contextmanager
def _unused(base: pathlib.Path) -> Iterator[bool]:
    """Whether no process builds or uses the export ``base`` (its lock and use files locked
    exclusively, without waiting); the locks are held for the block."""
    handles = []
    try:
        for kind in ("lock", "use"):
            handles.append(open(_lock_file(base, kind), "a"))
            try:
                fcntl.flock(handles[-1], fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
        yield True
    finally:
        for handle in handles:
            handle.close()


def _source_record(source: str | os.PathLike, frames: Optional[str | os.PathLike]) -> str:
    """What :func:`record_source` writes: ``source``'s resolved path, and with a user's own frame index
    ``frames``, a tab and its resolved path (an export with other frames is another source's: the
    export without them is not removed by one with them, nor the other way)."""
    record = str(pathlib.Path(source).resolve())
    return record if frames is None else f"{record}\t{pathlib.Path(frames).resolve()}"


def record_source(base: pathlib.Path, source: str | os.PathLike, frames: Optional[str | os.PathLike] = None) -> None:
    """Record that the export ``base`` was built from ``source`` (its resolved path) and the user's own
    frame index ``frames`` (None: none)."""
    from lisa_tf.util.atomic_files import write_text

    write_text(_lock_file(base, "source"), _source_record(source, frames))


def remove_earlier_exports(base: pathlib.Path, source: str | os.PathLike,
                           frames: Optional[str | os.PathLike] = None) -> list[pathlib.Path]:
    """Remove the exports beside ``base`` recorded as built from the same ``source`` and ``frames``
    under another key, except those a process builds or uses (module docstring); returns the removed ones."""
    source = _source_record(source, frames)
    name = re.escape(base.name.rsplit("-", 1)[0])
    removed = []
    for record in sorted(base.parent.glob(".*.source")):
        other = base.with_name(record.name[1:-len(".source")])
        if other == base or not re.fullmatch(name + r"-[0-9a-f]{16}", other.name):
            continue
        try:
            if record.read_text(encoding="utf-8") != source:
                continue
        except OSError:
            continue  # removed meanwhile by another build
        with _unused(other) as unused:
            if not unused:
                continue
            if other.exists():
                doomed = other.with_name(f".{other.name}.removing-{os.getpid()}")
                os.replace(other, doomed)  # gone from its name in one step
                shutil.rmtree(doomed)
            record.unlink()
            removed.append(other)
    return removed


def latest_version(path: str | os.PathLike) -> pathlib.Path:
    """The SavedModel export at ``path``: the version directory itself, or the highest numbered version
    directory of a base path that holds a ``saved_model.pb`` (no TensorFlow needed to find it).

    Raises:
        FileNotFoundError: ``path`` holds no export (the message says what a model path may be).
    """
    path = pathlib.Path(path)
    if (path / "saved_model.pb").exists():
        return path
    versions = sorted((parse_version(p.name), p) for p in path.iterdir()
                      if parse_version(p.name) is not None and (p / "saved_model.pb").exists()) if path.is_dir() else []
    if not versions:
        raise FileNotFoundError(
            f"{path}: not a run directory ({KERAS_FILE}), a .keras file or a SavedModel export (saved_model.pb)"
        )
    return versions[-1][1]
