"""SavedModel versions under a TensorFlow Serving model base path: finding, reading and loading them.

A model base path holds numeric version directories::

    MODEL_BASE_PATH/
      1/saved_model.pb  1/variables/ ...
      2/saved_model.pb  2/variables/ ...

:func:`load_version` loads one directory and describes its signatures from the ``serve`` meta
graph (so nothing here knows which model it serves); :func:`find_versions` lists the candidates.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from typing import Any, Callable, Optional, Sequence

from data_pipeline.errors import DataFormatError
from export.request_limits import training_token_budget
from export.serving_codec import InputSpec, Signature


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
        training_token_budget: the run's ``train.batch_tokens`` from ``assets/config.json``, the
            default of the request limits (:class:`~export.request_limits.RequestLimits`); ``None``
            for exports without a run config.
    """

    version: int
    path: pathlib.Path
    signatures: dict
    signature_def_json: dict
    module: Any = None
    training_token_budget: Optional[int] = None


def _dtype_name(enum_value: int) -> str:
    from tensorflow.core.framework import types_pb2

    return types_pb2.DataType.Name(enum_value)


def _read_meta_graph(version_dir: pathlib.Path):
    """The ``serve``-tagged ``MetaGraphDef`` of ``saved_model.pb`` (or ``.pbtxt``)."""
    from google.protobuf import text_format
    from tensorflow.core.protobuf import saved_model_pb2

    saved_model = saved_model_pb2.SavedModel()
    binary = version_dir / "saved_model.pb"
    if binary.exists():
        saved_model.ParseFromString(binary.read_bytes())
    else:
        text_format.Parse((version_dir / "saved_model.pbtxt").read_text(encoding="utf-8"), saved_model)
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


def load_version(version: int, version_dir: os.PathLike | str) -> ModelVersion:
    """Load one SavedModel version directory and describe its signatures.

    Raises:
        DataFormatError: the directory is not a loadable SavedModel.
    """
    import tensorflow as tf

    version_dir = pathlib.Path(version_dir)
    meta_graph = _read_meta_graph(version_dir)
    try:
        module = tf.saved_model.load(str(version_dir), tags=["serve"])
    except (OSError, ValueError, tf.errors.OpError) as error:
        raise DataFormatError(version_dir, None, f"expected a loadable SavedModel, loading failed: {error}") from error
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
            function=module.signatures[name],
        )
    signature_def_json = {name: _message_to_json(sd) for name, sd in sorted(meta_graph.signature_def.items())}
    return ModelVersion(version, version_dir, signatures, signature_def_json, module,
                        training_token_budget(version_dir))


def find_versions(model_base_path: os.PathLike | str, warn: Callable[[str], None] = print) -> dict:
    """Numeric version directories under ``model_base_path`` that hold a SavedModel, by version.

    Directories whose name is not a number are not versions (TensorFlow Serving ignores them too);
    numeric directories without ``saved_model.pb`` are skipped and reported through ``warn``.

    Raises:
        DataFormatError: the path does not exist or holds no servable version.
    """
    base = pathlib.Path(model_base_path)
    if not base.is_dir():
        raise DataFormatError(base, None, "expected a model base path directory holding numeric version "
                                          "directories (1/, 2/, ...), found no such directory")
    versions, skipped = {}, []
    for child in sorted(base.iterdir()):
        if not (child.is_dir() and child.name.isdigit()):
            continue
        if (child / "saved_model.pb").exists() or (child / "saved_model.pbtxt").exists():
            versions[int(child.name)] = child
        else:
            skipped.append(child.name)
    if skipped:
        warn(f"skipped {len(skipped)} numeric director{'y' if len(skipped) == 1 else 'ies'} without "
             f"saved_model.pb under {base}: {', '.join(skipped)}")
    if not versions:
        found = sorted(p.name for p in base.iterdir())
        raise DataFormatError(base, None, "expected numeric version directories containing saved_model.pb "
                                          f"(e.g. {base}/1/saved_model.pb), found {found or 'an empty directory'}")
    return dict(sorted(versions.items()))



def load_model(model_base_path: os.PathLike | str, warn: Callable[[str], None] = print) -> dict:
    """Load every version under ``model_base_path``; returns ``{version: ModelVersion}``."""
    return {number: load_version(number, path) for number, path in find_versions(model_base_path, warn).items()}


__all__: Sequence[str] = ["ModelVersion", "find_versions", "load_model", "load_version"]
