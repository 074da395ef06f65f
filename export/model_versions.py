"""SavedModel versions under a TensorFlow Serving model base path: finding, reading and loading them.

A model base path holds numeric version directories::

    MODEL_BASE_PATH/
      1/saved_model.pb  1/variables/ ...
      2/saved_model.pb  2/variables/ ...

:func:`load_version` loads one directory and describes its signatures from the ``serve`` meta
graph (so nothing here knows which model it serves); :func:`find_versions` lists the candidates;
:class:`VersionManager` keeps the newest versions loaded while the server runs, polling the base path
as TensorFlow Serving's file-system source does (``--file_system_poll_wait_seconds``), and reports
each version's state in TensorFlow Serving's ``model_version_status`` shape (:class:`VersionStatus`).
"""

from __future__ import annotations

import dataclasses
import gc
import os
import pathlib
import threading
import weakref
from typing import Any, Callable, Optional, Sequence

from data_pipeline.errors import DataFormatError
from data_pipeline.version_names import MAX_VERSION, parse_version
from data_pipeline.input_limits import TrainingSizes, training_sizes
from export.request_limits import RequestLimits
from data_pipeline.word_pieces import PIECE_FUNCTION, SETTINGS_FILE as WORD_PIECES_FILE
from export.serving_codec import InputSpec, Signature
from export.warmup import replay_warmup_requests
from lisa_tf.util.graph_passes import without_idle_passes


@dataclasses.dataclass
class ModelVersion:
    """One loaded version directory.

    Args:
        version: the directory's number.
        path: the version directory.
        signatures: runnable signatures by name.
        signature_def_json: every ``SignatureDef`` of the ``serve`` meta graph as TensorFlow Serving
            prints it in ``/metadata`` (proto field names, default values included).
        module: the loaded SavedModel (keeps its variables alive).
        training_sizes: the run's ``train.batch_tokens`` (``assets/config.json``) and its training data's
            longest sentence and token (``assets/vocab_info.json``), the defaults of the request limits
            (:class:`~export.request_limits.RequestLimits`); each ``None`` where the export records none.
        warmup_requests: how many warm-up requests were replayed at load (:mod:`export.warmup`).
        word_pieces: the counter of its contextual encoder's word pieces
            (:class:`~data_pipeline.word_pieces.WordPieceCounter`), or ``None`` without an encoder.
    """

    version: int
    path: pathlib.Path
    signatures: dict
    signature_def_json: dict
    module: Any = None
    training_sizes: TrainingSizes = TrainingSizes()
    warmup_requests: int = 0
    word_pieces: Any = None


def _dtype_name(enum_value: int) -> str:
    from tensorflow.core.framework import types_pb2

    return types_pb2.DataType.Name(enum_value)


def _read_meta_graph(version_dir: pathlib.Path):
    """The ``serve``-tagged ``MetaGraphDef`` of ``saved_model.pb`` (or ``.pbtxt``)."""
    from google.protobuf import text_format
    from tensorflow.core.protobuf import saved_model_pb2

    from google.protobuf.message import DecodeError

    saved_model = saved_model_pb2.SavedModel()
    binary = version_dir / "saved_model.pb"
    try:
        if binary.exists():
            saved_model.ParseFromString(binary.read_bytes())
        else:
            text_format.Parse((version_dir / "saved_model.pbtxt").read_text(encoding="utf-8"), saved_model)
    except (DecodeError, text_format.ParseError, UnicodeDecodeError, OSError) as error:
        raise DataFormatError(version_dir, None, f"expected a SavedModel proto in saved_model.pb(txt), reading it "
                                                 f"failed: {type(error).__name__}: {error}") from None
    for meta_graph in saved_model.meta_graphs:
        if "serve" in meta_graph.meta_info_def.tags:
            return meta_graph
    tags = [list(m.meta_info_def.tags) for m in saved_model.meta_graphs]
    raise DataFormatError(version_dir, None, f"expected a meta graph tagged 'serve', found tag sets {tags}")


def _message_to_json(message) -> dict:
    """A proto as TensorFlow Serving's JSON printer writes it: proto field names, defaults printed."""
    from google.protobuf import json_format

    try:
        return json_format.MessageToDict(
            message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    except TypeError:  # protobuf < 5.26 names the option differently
        return json_format.MessageToDict(
            message, preserving_proto_field_name=True, including_default_value_fields=True)


#: Ops that only ``tensorflow_text`` registers, used by exports of models with a contextual encoder
#: (keras-hub's BERT word-piece tokenizer); other exports need core TensorFlow only.
TF_TEXT_OPS = frozenset({"CaseFoldUTF8", "FastWordpieceTokenizeWithOffsets", "NormalizeUTF8", "RegexSplitWithOffsets"})


def _register_ops(meta_graph) -> None:
    """Import ``tensorflow_text`` when the graph needs one of :data:`TF_TEXT_OPS` (it registers them
    on import); a core-only export loads without it."""
    graph = meta_graph.graph_def
    ops = {n.op for n in graph.node} | {n.op for f in graph.library.function for n in f.node_def}
    if ops & TF_TEXT_OPS:
        import tensorflow_text  # noqa: F401  (registers the ops)


def _resource_handles(module) -> list:
    """The handles of the resources (lookup tables) a loaded SavedModel created."""
    import tensorflow as tf

    return [trackable.resource_handle for trackable in tf.train.TrackableView(module).descendants()
            if isinstance(trackable, tf.saved_model.experimental.TrackableResource)]


def _destroy_resources(handles: list) -> None:
    """Destroy the resources (lookup tables) of a version nothing uses any more.

    TensorFlow gives each load of a SavedModel its own lookup tables, named for that load, and keeps
    them until they are destroyed, whatever becomes of the Python objects (a restored
    ``StaticHashTable`` has nothing that destroys it): the vocabulary tables of a LISA export, about
    12 MB, would otherwise stay in the server for every version that failed its warm-up or was replaced.

    Called by the garbage collector, which may run it in the middle of any trace or while a graph is being
    built: the ops run eagerly, always. As ops of a function being traced they captured the handles (an
    export traced then failed to save: "an 'untracked' resource") and left the tables alive; in a graph
    they failed ("Attempting to capture an EagerTensor").
    """
    import tensorflow as tf
    from tensorflow.python.eager import context

    with context.eager_mode():
        for handle in handles:
            try:
                tf.raw_ops.DestroyResourceOp(resource=handle, ignore_lookup_error=True)
            except tf.errors.OpError:
                pass  # already gone with its owner


class _Resources:
    """The lookup tables of one loaded version, destroyed when the last thing holding this object lets it
    go: every :class:`_HeldFunction` of its signatures, which its record holds. A request that took
    a signature before its version was unloaded holds it until it is answered, so the tables outlive every
    request that can still read them, and no longer (a failed or replaced version frees them at once)."""

    def __init__(self, module):
        self.release = weakref.finalize(self, _destroy_resources, _resource_handles(module))
        self.release.atexit = False


class _HeldFunction:
    """A signature's function that keeps its version's :class:`_Resources` alive while it is held;
    called (without the idle graph passes: :mod:`lisa_tf.util.graph_passes`) and read as the function itself."""

    __slots__ = ("function", "resources", "__weakref__")

    def __init__(self, function, resources: _Resources):
        self.function = function
        self.resources = resources

    def __call__(self, *args, **kwargs):
        with without_idle_passes():  # the warm-up's graph is the requests' graph
            return self.function(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.function, name)


def load_version(version: int, version_dir: os.PathLike | str, warmup: bool = True,
                 limits: RequestLimits = RequestLimits()) -> ModelVersion:
    """Load one SavedModel version directory, describe its signatures and (``warmup``, what a server
    wants) replay its warm-up requests (:func:`export.warmup.replay_warmup_requests`), so that its first
    client is served as fast as the rest; a one-off command that calls one signature passes False. A
    version that fails here leaves none of its lookup tables behind, and a loaded one none once it is
    unloaded and its last request answered (:class:`_Resources`).

    Args:
        version: the version's number.
        version_dir: its directory.
        warmup: replay the warm-up records.
        limits: the server's request limits (``None`` fields: the version's defaults), which the warm-up
            records must meet as any request does.

    Raises:
        DataFormatError: the directory is not a loadable SavedModel, or a warm-up record fails or is
            over the limits.
    """
    import tensorflow as tf

    version_dir = pathlib.Path(version_dir)
    meta_graph = _read_meta_graph(version_dir)
    _register_ops(meta_graph)
    try:
        module = tf.saved_model.load(str(version_dir), tags=["serve"])
    except (OSError, ValueError, tf.errors.OpError) as error:
        raise DataFormatError(version_dir, None, f"expected a loadable SavedModel, loading failed: {error}") from error
    resources = _Resources(module)  # the tables go when nothing holds the version or one of its signatures
    signatures = {}
    for name, signature_def in meta_graph.signature_def.items():
        if name not in module.signatures:
            continue  # e.g. __saved_model_init_op: listed in metadata, never run by clients
        inputs = {}
        for key in sorted(signature_def.inputs):
            info = signature_def.inputs[key]
            shape = None
            if not info.tensor_shape.unknown_rank:
                shape = tuple(None if d.size < 0 else int(d.size) for d in info.tensor_shape.dim)
            inputs[key] = InputSpec(key, _dtype_name(info.dtype), shape)
        signatures[name] = Signature(
            name=name,
            inputs=inputs,
            outputs=sorted(signature_def.outputs),
            method_name=signature_def.method_name,
            function=_HeldFunction(module.signatures[name], resources),
        )
    signature_def_json = {name: _message_to_json(sd) for name, sd in sorted(meta_graph.signature_def.items())}
    sizes, pieces = training_sizes(version_dir), _word_piece_counter(version_dir, module)
    replayed = replay_warmup_requests(version_dir, signatures, limits.resolve(sizes, pieces)) if warmup else 0
    return ModelVersion(version, version_dir, signatures, signature_def_json, module, sizes, replayed, pieces)


def _word_piece_counter(version_dir: pathlib.Path, module):
    """The counter of the version's encoder's word pieces (``assets/word_pieces.json``, which an export
    with a contextual encoder carries), or ``None``: a model without one makes no pieces. It cuts words
    with the export's own function of words to pieces (:data:`~data_pipeline.word_pieces.PIECE_FUNCTION`,
    restored with ``module``), or, in an export without one, with a tokenizer of the file's settings."""
    path = version_dir / "assets" / WORD_PIECES_FILE
    if not path.is_file():
        return None
    from data_pipeline.word_pieces import WordPieceCounter

    return WordPieceCounter.read(path, tokenize=getattr(module, PIECE_FUNCTION, None))


def _scan(base: pathlib.Path) -> tuple:
    """``({version: dir}, [version names without saved_model.pb], [numeric-looking names that are no
    version])`` under ``base``; names that are not numbers at all are not versions and not listed."""
    versions, skipped, ignored = {}, [], []
    for child in sorted(base.iterdir()):
        if not (child.name.isdigit() and child.is_dir()):  # numeric-looking: a version, or one logged as none
            continue
        number = parse_version(child.name)
        if number is None:
            ignored.append(child.name)
        elif (child / "saved_model.pb").exists() or (child / "saved_model.pbtxt").exists():
            versions[number] = child
        else:
            skipped.append(child.name)
    return dict(sorted(versions.items())), skipped, ignored


def find_versions(model_base_path: os.PathLike | str, warn: Callable[[str], None] = print) -> dict:
    """Numeric version directories under ``model_base_path`` that hold a SavedModel, by version.

    Directories whose name is not a number are not versions (TensorFlow Serving ignores them too, and
    so names of other digits than ASCII, and numbers over :data:`MAX_VERSION`: the version manager
    logs those); numeric directories without ``saved_model.pb`` are skipped and reported through
    ``warn``.

    Args:
        model_base_path: the model base path.
        warn: receives one line naming the skipped directories.

    Returns:
        ``{version: directory}``, ascending.

    Raises:
        DataFormatError: the path does not exist or holds no servable version.
    """
    base = pathlib.Path(model_base_path)
    if not base.is_dir():
        raise DataFormatError(base, None, "expected a model base path directory holding numeric version "
                                          "directories (1/, 2/, ...), found no such directory")
    versions, skipped, _ = _scan(base)
    if skipped:
        warn(f"skipped {len(skipped)} numeric director{'y' if len(skipped) == 1 else 'ies'} without "
             f"saved_model.pb under {base}: {', '.join(skipped)}")
    if not versions:
        found = sorted(p.name for p in base.iterdir())
        raise DataFormatError(base, None, "expected numeric version directories containing saved_model.pb "
                                          f"(e.g. {base}/1/saved_model.pb), found {found or 'an empty directory'}")
    return versions




# --------------------------------------------------------------------------------------------------
# The version manager
# --------------------------------------------------------------------------------------------------

#: TensorFlow Serving's ``ManagerState`` names, as ``GET /v1/models/NAME`` reports them.
START, LOADING, AVAILABLE, UNLOADING, END = "START", "LOADING", "AVAILABLE", "UNLOADING", "END"


@dataclasses.dataclass(frozen=True)
class VersionStatus:
    """One version's state, an entry of TensorFlow Serving's ``model_version_status``.

    Args:
        version: the version number.
        state: ``START``, ``LOADING``, ``AVAILABLE``, ``UNLOADING`` or ``END`` (unloaded, or failed).
        error_code: ``OK``, or ``UNKNOWN`` when loading failed.
        error_message: why loading failed (``""`` when it did not).
    """

    version: int
    state: str
    error_code: str = "OK"
    error_message: str = ""

    def to_json(self) -> dict:
        """The entry as TensorFlow Serving's JSON (version as a string, ``status`` object)."""
        return {"version": str(self.version), "state": self.state,
                "status": {"error_code": self.error_code, "error_message": self.error_message}}


def _fingerprint(version_dir: pathlib.Path) -> tuple:
    """Files and their newest modification time: a failed version is retried once it changes."""
    newest, count = 0, 0
    for root, _, files in os.walk(version_dir):
        for name in files:
            try:
                newest = max(newest, os.stat(os.path.join(root, name)).st_mtime_ns)
            except OSError:
                continue
            count += 1
    return count, newest


def _release_failed_versions() -> None:
    """Free the memory of the versions that failed to load.

    A loaded SavedModel's functions are TensorFlow graphs (``FuncGraph``: its operations, tensors and
    the native graph behind them) made of reference cycles, which only Python's cyclic collector frees;
    among the hundreds of thousands of long-lived objects of a server it seldom makes a full pass, so
    every version that failed its warm-up would keep its graphs (megabytes for a LISA export) for a long
    while, and a stream of such versions would grow the server by as much each. Nothing refers to a
    failed version once its load has been reported, so one full collection frees it.
    """
    gc.collect()


class VersionManager:
    """Serves the newest versions under a model base path, as TensorFlow Serving's file-system source
    and ``latest`` version policy do.

    Every :meth:`poll` lists the numeric version directories, loads the ``num_versions`` highest that
    have not failed, and only then unloads the versions no longer wanted, so a model stays available
    while it changes version. A version that fails to load is logged once (one line naming its
    directory), reported ``END`` with its error in :meth:`statuses`, and not retried until its files
    change; the versions that load keep being served, and the memory of the failed one is freed by the
    poll that tried it. :meth:`start` polls every ``poll_seconds`` from a daemon thread.

    Args:
        model_base_path: directory of numeric version directories.
        num_versions: how many of the highest versions to serve (``latest { num_versions }``).
        poll_seconds: seconds between polls; 0 polls only at :meth:`start` (as
            ``--file_system_poll_wait_seconds=0`` does).
        warn: receives one line per version that fails to load.
        loader: ``loader(version, directory) -> ModelVersion`` (default :func:`load_version`).
    """

    def __init__(self, model_base_path: os.PathLike | str, num_versions: int = 1, poll_seconds: float = 1.0,
                 warn: Callable[[str], None] = print, loader: Callable[[int, pathlib.Path], ModelVersion] = None):
        if num_versions < 1:
            raise ValueError(f"num_versions must be >= 1, found {num_versions}")
        self.base = pathlib.Path(model_base_path)
        self.num_versions = num_versions
        self.poll_seconds = poll_seconds
        self.warn = warn
        self.loader = loader or load_version
        self._loaded: dict = {}
        self._failed: dict = {}  # version -> fingerprint of the directory that failed
        self._states: dict = {}  # version -> VersionStatus
        self._available: dict = {}
        self._ignored: set = set()  # directory names logged as no version
        self._lock = threading.Lock()
        self._poll_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def available(self) -> dict:
        """The versions being served, ``{version: ModelVersion}`` ascending (a snapshot)."""
        return self._available

    def statuses(self) -> list:
        """Every version seen, highest first, as :class:`VersionStatus`."""
        with self._lock:
            return [self._states[v] for v in sorted(self._states, reverse=True)]

    def _set(self, status: VersionStatus) -> None:
        with self._lock:
            self._states[status.version] = status

    def poll(self) -> None:
        """Bring the served versions in line with the base path once (see the class description)."""
        with self._poll_lock:
            candidates, _, ignored = _scan(self.base) if self.base.is_dir() else ({}, [], [])
            for name in sorted(set(ignored) - self._ignored):
                self.warn(f"directory {self.base / name} is ignored: a version directory's name is ASCII digits of "
                          f"a number up to {MAX_VERSION} (as TensorFlow Serving reads it)")
            self._ignored.update(ignored)
            for version in [v for v in self._failed if v in candidates]:
                if _fingerprint(candidates[version]) != self._failed[version]:
                    del self._failed[version]  # changed since it failed: try again
            failed = False
            while True:
                wanted = [v for v in sorted(candidates, reverse=True) if v not in self._failed][: self.num_versions]
                to_load = [v for v in wanted if v not in self._loaded]
                if not to_load:
                    break
                for version in to_load:
                    failed |= not self._load(version, candidates[version])
            if wanted:  # else nothing loadable is left on disk: keep serving what is loaded
                for version in [v for v in self._loaded if v not in wanted]:
                    self._set(VersionStatus(version, UNLOADING))
                    del self._loaded[version]
                    self._set(VersionStatus(version, END))
                self._available = dict(sorted(self._loaded.items()))
            if failed:  # once the versions that loaded are served
                _release_failed_versions()

    def _load(self, version: int, directory: pathlib.Path) -> bool:
        """Load one version; one that fails is logged, reported and remembered. Returns whether it loaded."""
        self._set(VersionStatus(version, LOADING))
        try:
            self._loaded[version] = self.loader(version, directory)
        except Exception as error:  # noqa: BLE001 - whatever breaks one version must not stop serving the others
            self._failed[version] = _fingerprint(directory)
            text = error.message if isinstance(error, DataFormatError) else str(error)
            reason = " ".join(text.split()) or type(error).__name__
            self._set(VersionStatus(version, END, "UNKNOWN", f"could not load {directory}: {reason}"))
            self.warn(f"version {version} at {directory} failed to load and is skipped: {reason}")
            return False
        self._set(VersionStatus(version, AVAILABLE))
        return True

    def start(self) -> "VersionManager":
        """Poll once, then keep polling from a daemon thread when ``poll_seconds > 0``.

        Returns:
            This manager.

        Raises:
            DataFormatError: the base path is missing, holds no version directory, or none loaded.
        """
        find_versions(self.base, self.warn)
        self.poll()
        if not self._available:
            failed = "; ".join(s.error_message for s in self.statuses() if s.error_message)
            raise DataFormatError(self.base, None, f"expected a loadable SavedModel version, none loaded: {failed}")
        if self.poll_seconds > 0:
            self._thread = threading.Thread(target=self._poll_forever, name="model-version-poll", daemon=True)
            self._thread.start()
        return self

    def _poll_forever(self) -> None:
        """Poll until :meth:`stop`; a poll that fails is logged in one line and the next one runs."""
        while not self._stop.wait(self.poll_seconds):
            try:
                self.poll()
            except Exception as error:  # noqa: BLE001 - e.g. the base path went away: keep what is served
                reason = " ".join(str(error).split()) or type(error).__name__
                self.warn(f"polling {self.base} failed, serving the loaded versions: {type(error).__name__}: {reason}")

    def stop(self) -> None:
        """Stop polling (the loaded versions stay usable)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)


__all__: Sequence[str] = ["AVAILABLE", "END", "LOADING", "MAX_VERSION", "ModelVersion", "START", "UNLOADING",
                          "VersionManager", "VersionStatus", "find_versions", "load_version", "parse_version"]
