"""TensorFlow Serving's REST API over a SavedModel directory, in the standard library.

Serves any SavedModel laid out as TensorFlow Serving expects::

    MODEL_BASE_PATH/
      1/saved_model.pb  1/variables/ ...
      2/saved_model.pb  2/variables/ ...

Every numeric version directory holding a ``saved_model.pb`` is loaded at start-up (like TensorFlow
Serving's ``model_version_policy { all {} }``); requests without ``/versions/V`` go to the highest
version. The model is run through its SavedModel signatures (``tf.saved_model.load(path).signatures``),
so nothing here knows which model it serves.

Endpoints (paths are matched case-insensitively, as TensorFlow Serving does):

=====================================================  =============================================
``GET  /v1/models/NAME[/versions/V]``                   model status (``GetModelStatusResponse``)
``GET  /v1/models/NAME[/versions/V]/metadata``          signature defs (``GetModelMetadataResponse``)
``POST /v1/models/NAME[/versions/V]:predict``           row (``instances`` -> ``predictions``) or
                                                        columnar (``inputs`` -> ``outputs``) format
=====================================================  =============================================

JSON rules follow TensorFlow Serving's REST documentation (``api_rest.md``):

- ``signature_name`` selects the signature (default ``serving_default``).
- Row format: ``instances`` is a non-empty list; with one named input each item is that input's
  value, with several each item is an object with exactly the signature's input names. Every instance
  of an input must have the same shape; the batch is the list's length. ``predictions`` is a list with
  one item per instance: an object ``{output: value}``, or just the value when the signature has a
  single output.
- Columnar format: ``inputs`` is the value of the single input, or an object mapping every input name
  to its (batched) value; ``outputs`` is the single output's value or an object of all outputs.
- JSON values are converted according to the signature's input dtypes: ``DT_STRING`` takes strings
  (or ``{"b64": ...}`` for binary), integer types take whole numbers (no ``1.0``, no ``true``),
  ``DT_FLOAT``/``DT_DOUBLE`` take numbers (``NaN``/``Infinity`` accepted), ``DT_BOOL`` takes
  ``true``/``false``.
- Output strings are decoded as UTF-8; byte strings that are not valid UTF-8, and every string of an
  output whose name ends in ``_bytes``, are written as ``{"b64": "<base64>"}``. ``float32`` values
  are written in their shortest round-trip form (``0.1``, not ``0.10000000149``).
- Errors are ``{"error": "<message>"}``: 400 for bad requests (malformed JSON, a missing, unknown or
  mistyped input, ragged lists, instances with differing keys, an unknown signature, and any error
  raised while running the model, which TensorFlow Serving reports as ``InvalidArgument``); 404 for an
  unknown model or version and for a method/path pair that names no API (TensorFlow Serving answers
  the latter under ``/v1/`` with 400 ``Malformed request``). A 5xx answer only ever means a fault in
  this server, never bad input.

Checks beyond TensorFlow Serving (documented differences):

- Inputs that the signature declares with the same shape of rank >= 2 (for example ``tokens`` and
  ``parse_heads``, both ``[batch, time]``) must have the same actual shape in a request: one value per
  token. TensorFlow Serving would pass mismatched tensors to the graph and report whatever the graph
  raises; here the request is refused before the model runs, with a message naming both inputs.
- Each input's shape must agree with the rank and fixed sizes the signature declares.
- A columnar ``inputs`` object may not hold names the signature does not have, and the request object
  may not hold keys other than ``signature_name``, ``instances`` and ``inputs`` (TensorFlow Serving
  ignores both silently, hiding typos such as ``"signature"``).
- Request strings must be valid Unicode (no lone ``\\ud800`` surrogates, body UTF-8); binary data
  goes in ``{"b64": ...}``. Bodies over ``max_body_bytes`` (64 MiB) get 413.
- ``:classify`` and ``:regress`` are answered 400 (only predict signatures are run), and the model
  status lists every loaded version (``tensorflow_model_server``'s default policy loads the latest only).

The server is :class:`http.server.ThreadingHTTPServer` (one thread per connection, HTTP/1.1
keep-alive), bound to 127.0.0.1 unless another host is given. ``python -m lisa_tf serve`` runs it.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import os
import pathlib
import re
import socket
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from data_pipeline.errors import DataFormatError

DEFAULT_SIGNATURE = "serving_default"
BYTES_SUFFIX = "_bytes"
#: Requests larger than this are refused with 413 before being read.
DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024

# Same patterns as tensorflow_model_server's HTTP handler (case-insensitive, full match).
_PREDICT_PATH = re.compile(r"/v1/models/([^/:]+)(?:/versions/(\d+))?:(classify|regress|predict)", re.IGNORECASE)
_STATUS_PATH = re.compile(r"/v1/models(?:/([^/:]+))?(?:/versions/(\d+))?(/metadata)?", re.IGNORECASE)

# JSON -> numpy for the dtypes TensorFlow Serving's JSON mapping supports.
_NUMPY_DTYPES = {
    "DT_STRING": object,
    "DT_BOOL": np.bool_,
    "DT_INT8": np.int8,
    "DT_UINT8": np.uint8,
    "DT_INT16": np.int16,
    "DT_INT32": np.int32,
    "DT_UINT32": np.uint32,
    "DT_INT64": np.int64,
    "DT_UINT64": np.uint64,
    "DT_FLOAT": np.float32,
    "DT_DOUBLE": np.float64,
}
_INTEGER_RANGES = {
    name: (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    for name, dtype in _NUMPY_DTYPES.items()
    if dtype not in (object, np.bool_, np.float32, np.float64)
}
# Largest integer each float type holds exactly (TensorFlow Serving refuses lossy conversions).
_FLOAT_EXACT_INT = {"DT_FLOAT": 2**24 - 1, "DT_DOUBLE": 2**53 - 1}
_FLOAT_MAX = {"DT_FLOAT": float(np.finfo(np.float32).max), "DT_DOUBLE": float(np.finfo(np.float64).max)}


# --------------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------------


class RestError(Exception):
    """A request the server answers with an HTTP error and ``{"error": message}``.

    Args:
        status: HTTP status code (4xx for the client's mistakes).
        message: what was expected and what was found.
    """

    status = 400

    def __init__(self, message: str, status: Optional[int] = None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class BadRequest(RestError):
    """400: the request cannot be run (TensorFlow Serving's ``InvalidArgument``)."""

    status = 400


class NotFound(RestError):
    """404: unknown model, version or path (TensorFlow Serving's ``NotFound``)."""

    status = 404


# --------------------------------------------------------------------------------------------------
# Signatures and loaded versions
# --------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class InputSpec:
    """One named input of a signature, as its ``SignatureDef`` declares it.

    Args:
        name: the input's key in the signature (``tokens``).
        dtype: TensorFlow dtype name as in the proto (``DT_STRING``).
        shape: declared dimensions with ``None`` for unknown sizes; ``None`` for unknown rank.
    """

    name: str
    dtype: str
    shape: Optional[tuple]

    def shape_text(self) -> str:
        """The declared shape as TensorFlow Serving prints it (``[-1,-1]``; ``[?]`` unknown rank)."""
        if self.shape is None:
            return "[?]"
        return _shape_text(-1 if d is None else d for d in self.shape)


@dataclasses.dataclass
class Signature:
    """A servable signature: its inputs, output names and the callable that runs it.

    Args:
        name: signature key (``serving_default``).
        inputs: input name -> :class:`InputSpec`, sorted by name.
        outputs: output names, sorted.
        method_name: the ``SignatureDef``'s method (``tensorflow/serving/predict``).
        function: called with ``{input: tf.Tensor}`` keyword arguments, returns ``{output: tensor}``.
    """

    name: str
    inputs: dict
    outputs: list
    method_name: str
    function: Callable[..., Mapping[str, Any]]


@dataclasses.dataclass
class ModelVersion:
    """One loaded version directory.

    Args:
        version: the directory's number.
        path: the version directory.
        signatures: runnable signatures by name.
        signature_def_json: every ``SignatureDef`` of the ``serve`` meta graph as TensorFlow Serving
            prints it in ``/metadata`` (proto field names, default values included).
    """

    version: int
    path: pathlib.Path
    signatures: dict
    signature_def_json: dict
    module: Any = None  # keeps the loaded SavedModel (and its variables) alive


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
    return ModelVersion(version, version_dir, signatures, signature_def_json, module)


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


# --------------------------------------------------------------------------------------------------
# JSON -> input arrays
# --------------------------------------------------------------------------------------------------


def _shape_text(dims) -> str:
    return "[" + ",".join(str(d) for d in dims) + "]"


def _show(value: Any, limit: int = 120) -> str:
    """A JSON value for an error message, shortened."""
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _json_type(value: Any) -> str:
    if value is None:
        return "Null"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float)):
        return "Number"
    if isinstance(value, str):
        return "String"
    if isinstance(value, list):
        return "Array"
    return "Object"


def _is_b64_object(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get("b64"), str)


def _type_error(value: Any, dtype: str) -> BadRequest:
    return BadRequest(f"JSON Value: {_show(value)} Type: {_json_type(value)} is not of expected type: "
                      f"{dtype[3:].lower()}")


def _convert_scalar(value: Any, dtype: str) -> Any:
    """One JSON leaf value as the Python value of ``dtype`` (TensorFlow Serving's JSON mapping)."""
    if dtype == "DT_STRING":
        if isinstance(value, str):
            try:
                return value.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate escape such as "\\ud800"
                raise BadRequest(f"JSON Value: {_show(value)} is not a valid Unicode string "
                                 "(lone surrogate); send binary data as {\"b64\": ...}") from None
        if isinstance(value, dict):
            if not _is_b64_object(value):
                raise BadRequest(f"JSON Value: {_show(value)} not formatted correctly for base64 data "
                                 "(expected an object with the single key \"b64\" holding a string)")
            try:
                return base64.b64decode(value["b64"], validate=True)
            except (binascii.Error, ValueError) as error:
                raise BadRequest(f"Unable to base64 decode {_show(value)}: {error}") from error
        raise _type_error(value, dtype)
    if dtype == "DT_BOOL":
        if isinstance(value, bool):
            return value
        raise _type_error(value, dtype)
    if isinstance(value, bool):  # bool is an int subclass in Python, not a JSON number
        raise _type_error(value, dtype)
    if dtype in _INTEGER_RANGES:
        if not isinstance(value, int):
            raise _type_error(value, dtype)
        low, high = _INTEGER_RANGES[dtype]
        if not low <= value <= high:
            raise BadRequest(f"JSON Value: {value} is out of range for type {dtype[3:].lower()} [{low}, {high}]")
        return value
    if dtype in _FLOAT_EXACT_INT:
        if isinstance(value, int):
            if abs(value) > _FLOAT_EXACT_INT[dtype]:
                raise BadRequest(f"Cannot convert JSON value: {value} to {dtype[3:].lower()} without loss of precision.")
            return float(value)
        if isinstance(value, float):
            if np.isfinite(value) and abs(value) > _FLOAT_MAX[dtype]:
                raise BadRequest(f"Cannot convert JSON value: {value} to {dtype[3:].lower()} without loss of precision.")
            return value
        raise _type_error(value, dtype)
    raise BadRequest(f"Conversion of JSON Value: {_show(value)} to type: {dtype} is not supported")


def _dense_shape(value: Any) -> list:
    """The shape a nested list would have if it were dense, read along first elements."""
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        if not value:
            break
        value = value[0]
    return shape


def _fill(value: Any, shape: list, dtype: str, level: int, out: list) -> None:
    """Append the leaves of ``value`` to ``out`` after checking it is dense with ``shape``."""
    if not isinstance(value, list):
        if level != len(shape):
            raise BadRequest(f"JSON Value: {_show(value)} found at incorrect level: {level + 1} in the JSON DOM. "
                             f"Expected at level: {len(shape)} (lists must not be ragged)")
        out.append(_convert_scalar(value, dtype))
        return
    if level >= len(shape):
        raise BadRequest(f"Encountered list at unexpected level: {level} expected < {len(shape)} "
                         "(lists must not be ragged)")
    if len(value) != shape[level]:
        raise BadRequest(f"Encountered list at unexpected size: {len(value)} at level: {level} expected size: "
                         f"{shape[level]} (lists must not be ragged)")
    for item in value:
        _fill(item, shape, dtype, level + 1, out)


def json_to_array(value: Any, spec: InputSpec) -> np.ndarray:
    """A dense JSON value (scalar or nested lists) as a numpy array of the input's dtype."""
    if spec.dtype not in _NUMPY_DTYPES:
        raise BadRequest(f"input '{spec.name}' has dtype {spec.dtype}, which the JSON API does not support; "
                         f"supported: {', '.join(sorted(_NUMPY_DTYPES))}")
    shape = _dense_shape(value)
    leaves: list = []
    _fill(value, shape, spec.dtype, 0, leaves)
    array = np.empty(len(leaves), dtype=_NUMPY_DTYPES[spec.dtype])
    if leaves:
        array[:] = leaves
    return array.reshape(shape)


def _check_declared_shapes(arrays: Mapping[str, np.ndarray], signature: Signature) -> None:
    """Each input's shape fits its declaration; same-declared inputs of rank >= 2 agree."""
    for name, array in arrays.items():
        spec = signature.inputs[name]
        if spec.shape is None:
            continue
        fits = len(spec.shape) == array.ndim and all(d is None or d == n for d, n in zip(spec.shape, array.shape))
        if not fits:
            raise BadRequest(f"input '{name}' of signature '{signature.name}' is declared with shape "
                             f"{spec.shape_text()} but the request gives shape {_shape_text(array.shape)}")
    groups: dict = {}
    for name, spec in signature.inputs.items():
        if spec.shape is not None and len(spec.shape) >= 2:
            groups.setdefault(spec.shape, []).append(name)
    for declared, names in groups.items():
        first = names[0]
        for other in names[1:]:
            if arrays[first].shape != arrays[other].shape:
                raise BadRequest(
                    f"inputs '{first}' and '{other}' of signature '{signature.name}' are declared with the same "
                    f"shape {signature.inputs[first].shape_text()} and must agree in length, but '{first}' has "
                    f"shape {_shape_text(arrays[first].shape)} and '{other}' has shape "
                    f"{_shape_text(arrays[other].shape)}")


def _rows_to_arrays(instances: Any, signature: Signature) -> dict:
    """Row format: ``instances`` -> one batched array per input."""
    if not isinstance(instances, list):
        raise BadRequest(f"Expecting 'instances' to be a list/array, found {_json_type(instances)}")
    if not instances:
        raise BadRequest("No values in 'instances' array")
    names = list(signature.inputs)

    def is_object(item: Any) -> bool:
        return isinstance(item, dict) and not _is_b64_object(item)

    objects = is_object(instances[0])
    if not objects and len(names) > 1:
        raise BadRequest("instances is a plain list, but expecting list of objects as multiple input tensors "
                         f"required as per the signature: {','.join(names)}")
    per_input: dict = {name: [] for name in names}
    shapes: dict = {}
    for index, item in enumerate(instances):
        if objects:
            if not is_object(item):
                raise BadRequest(f"Expecting object but got {_json_type(item)} at item {index} of input list")
            unknown = sorted(set(item) - set(names))
            if unknown:
                raise BadRequest(f"Failed to process element: {index} key: {unknown[0]} of 'instances' list. "
                                 f"Error: JSON object: does not have named input: {unknown[0]} "
                                 f"(signature '{signature.name}' inputs: {','.join(names)})")
            missing = [name for name in names if name not in item]
            if missing:
                raise BadRequest(f"Failed to process element: {index} of 'instances' list. JSON object: "
                                 f"{_show(item)} must only have keys: {','.join(names)} "
                                 f"(missing: {','.join(missing)})")
            values = item
        else:
            if is_object(item):
                raise BadRequest(f"Expecting value/list but got object at item {index} of input list")
            values = {names[0]: item}
        for name in names:
            try:
                array = json_to_array(values[name], signature.inputs[name])
            except BadRequest as error:
                raise BadRequest(f"Failed to process element: {index} key: {name} of 'instances' list. "
                                 f"Error: {error.message}") from None
            if name in shapes and shapes[name] != array.shape:
                raise BadRequest(f"Failed to process element: {index} key: {name} of 'instances' list. Error: "
                                 f"Expecting shape {_shape_text(shapes[name])} but got: {_shape_text(array.shape)} "
                                 "(every instance of an input must have the same shape; pad shorter ones)")
            shapes[name] = array.shape
            per_input[name].append(array)
    return {name: np.stack(arrays) for name, arrays in per_input.items()}


def _columns_to_arrays(inputs: Any, signature: Signature) -> dict:
    """Columnar format: ``inputs`` -> one array per input."""
    names = list(signature.inputs)
    if not isinstance(inputs, dict) or _is_b64_object(inputs):
        if len(names) > 1:
            raise BadRequest("inputs is a plain value/list, but expecting an object as multiple input tensors "
                             f"required as per the signature: {','.join(names)}")
        return {names[0]: json_to_array(inputs, signature.inputs[names[0]])}
    unknown = sorted(set(inputs) - set(names))
    if unknown:
        raise BadRequest(f"Unknown named input(s): {','.join(unknown)} in 'inputs' object; signature "
                         f"'{signature.name}' has inputs: {','.join(names)}")
    arrays = {}
    for name in names:
        if name not in inputs:
            raise BadRequest(f"Missing named input: {name} in 'inputs' object.")
        try:
            arrays[name] = json_to_array(inputs[name], signature.inputs[name])
        except BadRequest as error:
            raise BadRequest(f"Failed to process input: {name} of 'inputs' object. Error: {error.message}") from None
    return arrays


def parse_predict_request(body: bytes, get_signature: Callable[[str], Signature]) -> tuple:
    """Parse a ``:predict`` body into ``(signature, format, {input: array})``.

    ``format`` is ``"row"`` or ``"columnar"``; ``get_signature(name)`` resolves ``signature_name``
    (raising :class:`RestError` when unknown). Every malformed request raises :class:`BadRequest`.
    """
    if not body:
        raise BadRequest("JSON Parse error: The document is empty")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BadRequest(f"JSON Parse error: the body is not UTF-8 ({error})") from None
    try:
        request = json.loads(text)
    except json.JSONDecodeError as error:
        raise BadRequest(f"JSON Parse error: {error.msg} at offset: {error.pos}") from None
    except RecursionError:
        raise BadRequest("JSON Parse error: the document is nested too deeply") from None
    except ValueError as error:  # e.g. an integer literal longer than Python converts
        raise BadRequest(f"JSON Parse error: {error}") from None
    if not isinstance(request, dict):
        raise BadRequest(f"JSON Value: {_show(request)} Is not object")
    unknown = sorted(set(request) - {"signature_name", "instances", "inputs"})
    if unknown:
        raise BadRequest(f"Unknown key(s) {', '.join(repr(k) for k in unknown)} in the request object; "
                         "expected 'signature_name' (optional) and one of 'instances' or 'inputs'")
    signature_name = request.get("signature_name", "")
    if not isinstance(signature_name, str):
        raise BadRequest(f"JSON Value: {_show(signature_name)} not formatted correctly. "
                         "'signature_name' key must be a string value.")
    signature = get_signature(signature_name or DEFAULT_SIGNATURE)
    if not signature.inputs:
        raise BadRequest(f"Failed to get input map for signature: {signature.name}")
    if "instances" in request and "inputs" in request:
        raise BadRequest("Not formatted correctly expecting only one of 'inputs' or 'instances' keys to exist")
    try:
        if "instances" in request:
            arrays, form = _rows_to_arrays(request["instances"], signature), "row"
        elif "inputs" in request:
            arrays, form = _columns_to_arrays(request["inputs"], signature), "columnar"
        else:
            raise BadRequest("Missing 'inputs' or 'instances' key")
    except RecursionError:
        raise BadRequest("input lists are nested too deeply") from None
    _check_declared_shapes(arrays, signature)
    return signature, form, arrays


# --------------------------------------------------------------------------------------------------
# Output arrays -> JSON
# --------------------------------------------------------------------------------------------------


def _string_value(raw: bytes, as_bytes: bool) -> Any:
    if not as_bytes:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return {"b64": base64.b64encode(raw).decode("ascii")}


def array_to_json(name: str, array: np.ndarray) -> Any:
    """An output array as nested JSON-ready lists (a bare value for a scalar)."""
    array = np.asarray(array)
    if array.dtype == object or array.dtype.kind in ("S", "U"):
        as_bytes = name.endswith(BYTES_SUFFIX)
        flat = [_string_value(v if isinstance(v, bytes) else str(v).encode("utf-8"), as_bytes) for v in array.ravel()]
        converted = np.empty(len(flat), dtype=object)
        converted[:] = flat
        return converted.reshape(array.shape).tolist()
    if array.dtype.kind == "f" and array.dtype.itemsize < 8:
        # float32/16: numpy's str() is the shortest text that round-trips in the value's own type,
        # so 0.1f prints as 0.1 rather than the float64 expansion 0.10000000149011612.
        return np.array([float(str(v)) for v in array.ravel()], dtype=np.float64).reshape(array.shape).tolist()
    if array.dtype.kind in ("i", "u", "b", "f"):
        return array.tolist()
    raise BadRequest(f"output '{name}' has dtype {array.dtype}, which the JSON API cannot represent")


def outputs_to_json(outputs: Mapping[str, np.ndarray], form: str) -> dict:
    """Signature outputs as the ``predictions`` (row) or ``outputs`` (columnar) response object."""
    names = sorted(outputs)
    if not names:
        raise BadRequest("Cannot convert empty tensor map to JSON")
    if form == "columnar":
        if len(names) == 1:
            return {"outputs": array_to_json(names[0], outputs[names[0]])}
        return {"outputs": {name: array_to_json(name, outputs[name]) for name in names}}
    batch = None
    for name in names:
        shape = np.shape(outputs[name])
        if not shape:
            raise BadRequest(f"Tensor name: {name} has no shape information (a scalar output cannot be split into "
                             "rows; use the columnar 'inputs' format)")
        if batch is not None and shape[0] != batch:
            raise BadRequest(f"Tensor name: {name} has inconsistent batch size: {shape[0]} expecting: {batch} "
                             "(use the columnar 'inputs' format)")
        batch = shape[0]
    columns = {name: array_to_json(name, outputs[name]) for name in names}
    if len(names) == 1:
        return {"predictions": columns[names[0]]}
    return {"predictions": [{name: columns[name][row] for name in names} for row in range(batch)]}


# --------------------------------------------------------------------------------------------------
# The service (HTTP-independent) and the HTTP server
# --------------------------------------------------------------------------------------------------


class PredictionService:
    """Answers TensorFlow Serving REST requests for one model; independent of the HTTP layer.

    Args:
        model_name: the ``NAME`` in ``/v1/models/NAME``.
        versions: loaded versions by number (see :func:`load_model`).
    """

    def __init__(self, model_name: str, versions: Mapping[int, ModelVersion]):
        if not versions:
            raise ValueError("a model needs at least one loaded version")
        self.model_name = model_name
        self.versions = dict(sorted(versions.items()))
        self.latest = max(self.versions)

    # -- lookup ----------------------------------------------------------------------------------
    def _version(self, name: str, version: Optional[str]) -> ModelVersion:
        if name != self.model_name:
            spec = f"Latest({name})" if version is None else f"Specific({name}, {version})"
            raise NotFound(f"Servable not found for request: {spec}")
        if version is None:
            return self.versions[self.latest]
        number = int(version)
        if number not in self.versions:
            raise NotFound(f"Servable not found for request: Specific({name}, {version}); "
                           f"available versions: {', '.join(map(str, self.versions))}")
        return self.versions[number]

    # -- endpoints -------------------------------------------------------------------------------
    def model_status(self, name: str, version: Optional[str]) -> dict:
        """``GET /v1/models/NAME[/versions/V]``: ``GetModelStatusResponse`` as JSON."""
        if name != self.model_name:
            raise NotFound(f"Could not find any versions of model {name}")
        if version is not None and int(version) not in self.versions:
            raise NotFound(f"Could not find version {version} of model {name}")
        numbers = [int(version)] if version is not None else sorted(self.versions, reverse=True)
        return {"model_version_status": [
            {"version": str(n), "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}
            for n in numbers]}

    def metadata(self, name: str, version: Optional[str]) -> dict:
        """``GET /v1/models/NAME[/versions/V]/metadata``: ``GetModelMetadataResponse`` as JSON."""
        loaded = self._version(name, version)
        return {
            "model_spec": {"name": self.model_name, "signature_name": "", "version": str(loaded.version)},
            "metadata": {"signature_def": {"signature_def": loaded.signature_def_json}},
        }

    def predict(self, name: str, version: Optional[str], body: bytes) -> dict:
        """``POST /v1/models/NAME[/versions/V]:predict``: run a signature on a JSON request."""
        import tensorflow as tf

        loaded = self._version(name, version)

        def get_signature(signature_name: str) -> Signature:
            if signature_name not in loaded.signatures:
                raise BadRequest(f"Serving signature name: \"{signature_name}\" not found in signature def "
                                 f"(available: {', '.join(sorted(loaded.signatures))})")
            return loaded.signatures[signature_name]

        signature, form, arrays = parse_predict_request(body, get_signature)
        try:
            tensors = {key: tf.constant(value, dtype=tf.as_dtype(_NUMPY_DTYPES[signature.inputs[key].dtype]))
                       for key, value in arrays.items()}
            results = signature.function(**tensors)
            outputs = {key: value.numpy() for key, value in results.items()}
        except tf.errors.OpError as error:
            # TensorFlow Serving answers graph errors (InvalidArgument etc.) with 400 and the message.
            raise BadRequest(error.message) from None
        except Exception as error:  # noqa: BLE001 - any failure to run the model is the request's (400)
            raise BadRequest(f"signature '{signature.name}' could not run on the inputs: "
                             f"{type(error).__name__}: {error}") from None
        return outputs_to_json(outputs, form)

    def handle(self, method: str, path: str, body: bytes) -> dict:
        """Route one request; returns the response object or raises :class:`RestError`.

        A method/path pair that names no API (``POST /v1/models/NAME`` without ``:predict``,
        ``GET .../NAME:predict``, ``/v1/models/NAME/anything``) is a 404.
        """
        match = _PREDICT_PATH.fullmatch(path)
        if match and method == "POST":
            name, version, verb = match.groups()
            if verb.lower() != "predict":
                raise BadRequest(f"'{verb}' needs a signature whose method_name is tensorflow/serving/{verb.lower()}; "
                                 "this server runs predict signatures only (use ':predict')")
            return self.predict(name, version, body)
        match = _STATUS_PATH.fullmatch(path)
        if match and method == "GET":
            name, version, metadata = match.groups()
            if not name:
                raise BadRequest("Missing model name in request.")
            return self.metadata(name, version) if metadata else self.model_status(name, version)
        raise NotFound(f"Malformed request: {method} {path}; expected GET /v1/models/NAME[/versions/V], "
                       "GET /v1/models/NAME[/versions/V]/metadata or POST /v1/models/NAME[/versions/V]:predict")


class RestRequestHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 front of :class:`PredictionService`: reads the body, routes, writes JSON."""

    protocol_version = "HTTP/1.1"
    server_version = "lisa_tf-rest"
    timeout = 120  # seconds an idle keep-alive connection may hold its thread

    def setup(self) -> None:
        """Disable Nagle's algorithm: headers and body go out in separate writes, and Nagle plus the
        client's delayed ACK would otherwise add ~40 ms to every keep-alive answer."""
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Per-request logging only when the server was asked for it."""
        if getattr(self.server, "log_requests", False):
            super().log_message(format, *args)

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            return b""
        try:
            length = int(length_text)
            if length < 0:
                raise ValueError(length_text)
        except ValueError:
            self.close_connection = True
            raise BadRequest(f"Content-Length must be a non-negative integer, found {length_text!r}") from None
        if length > self.server.max_body_bytes:
            self.close_connection = True
            raise RestError(f"request body of {length} bytes exceeds the limit of {self.server.max_body_bytes}", 413)
        body = self.rfile.read(length)
        if len(body) < length:
            raise ConnectionError(f"the client sent {len(body)} of {length} bytes")
        return body

    def _read_chunked(self) -> bytes:
        parts, total = [], 0
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";")[0].strip(), 16)
            except ValueError:
                self.close_connection = True
                raise BadRequest(f"malformed chunk size line {line[:40]!r}") from None
            if size == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            total += size
            if total > self.server.max_body_bytes:
                self.close_connection = True
                raise RestError(f"request body exceeds the limit of {self.server.max_body_bytes} bytes", 413)
            parts.append(self.rfile.read(size))
            self.rfile.readline(8)  # CRLF after the chunk

    def _dispatch(self, method: str) -> None:
        try:
            try:
                body = self._read_body()
            except OSError:  # the client stalled or went away mid-body: nobody to answer
                self.close_connection = True
                return
            path = self.path.split("?", 1)[0]
            status, payload = 200, self.server.service.handle(method, path, body)
        except RestError as error:
            status, payload = error.status, {"error": error.message}
        except Exception as error:  # a fault in this server, not in the request: report it as one
            traceback.print_exc(file=sys.stderr)
            status, payload = 500, {"error": f"internal server error: {type(error).__name__}: {error}"}
        try:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates echoed from the request: escape them
            data = json.dumps(payload).encode("ascii")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(data)

    def send_error(self, code: int, message: Optional[str] = None, explain: Optional[str] = None) -> None:
        """Protocol errors found by the stdlib parser (bad request line, HTTP version, header size)
        as JSON; they are the client's, so the stdlib's 501/505 become 400."""
        status = 400 if code >= 500 else code
        text = message or self.responses.get(code, ("error",))[0]
        data = json.dumps({"error": f"{text}{': ' + explain if explain else ''}"}).encode("utf-8")
        self.close_connection = True
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        except OSError:
            pass

    def __getattr__(self, name: str) -> Any:
        # Any other method (OPTIONS, TRACE, made-up ones) is routed too, answering 404 instead of 501.
        if name.startswith("do_") and name[3:].isupper():
            return lambda: self._dispatch(name[3:])
        raise AttributeError(name)

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        """GET: model status and metadata."""
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        """POST: predict."""
        self._dispatch("POST")

    def do_PUT(self) -> None:  # noqa: N802
        """Other methods get a JSON 4xx rather than the stdlib's 501."""
        self._dispatch("PUT")

    def do_DELETE(self) -> None:  # noqa: N802
        """See :meth:`do_PUT`."""
        self._dispatch("DELETE")

    def do_PATCH(self) -> None:  # noqa: N802
        """See :meth:`do_PUT`."""
        self._dispatch("PATCH")

    def do_HEAD(self) -> None:  # noqa: N802
        """Headers of the GET answer's status, no body."""
        self._dispatch("HEAD")


class RestServer(ThreadingHTTPServer):
    """Threaded HTTP server bound to one :class:`PredictionService`.

    Args:
        service: answers the requests.
        host: interface to bind (``127.0.0.1`` keeps the API off the network).
        port: TCP port; 0 picks a free one (read it back from :attr:`port`).
        max_body_bytes: larger requests are refused with 413.
        log_requests: log one line per request to stderr.
    """

    daemon_threads = True
    request_queue_size = 128

    def __init__(self, service: PredictionService, host: str = "127.0.0.1", port: int = 0,
                 max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, log_requests: bool = False):
        self.service = service
        self.max_body_bytes = max_body_bytes
        self.log_requests = log_requests
        super().__init__((host, port), RestRequestHandler)

    def handle_error(self, request, client_address) -> None:
        """A client that disconnects mid-answer is routine, not a fault worth a traceback."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)

    @property
    def port(self) -> int:
        """The bound port."""
        return self.server_address[1]

    @property
    def url(self) -> str:
        """Base URL of the REST API (``http://host:port``)."""
        host = self.server_address[0]
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.port}"

    def start_in_thread(self) -> threading.Thread:
        """Serve from a daemon thread (tests, benchmarks); stop with :meth:`stop`."""
        thread = threading.Thread(target=self.serve_forever, name="rest-server", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.shutdown()
        self.server_close()


def load_model(model_base_path: os.PathLike | str, warn: Callable[[str], None] = print) -> dict:
    """Load every version under ``model_base_path``; returns ``{version: ModelVersion}``."""
    return {number: load_version(number, path) for number, path in find_versions(model_base_path, warn).items()}


def make_server(model_name: str, model_base_path: os.PathLike | str, host: str = "127.0.0.1", port: int = 0,
                warn: Callable[[str], None] = print, **kwargs: Any) -> RestServer:
    """Load the model and bind a :class:`RestServer` (not yet serving)."""
    return RestServer(PredictionService(model_name, load_model(model_base_path, warn)), host, port, **kwargs)


__all__: Sequence[str] = [
    "BadRequest", "InputSpec", "ModelVersion", "NotFound", "PredictionService", "RestError",
    "RestRequestHandler", "RestServer", "Signature", "array_to_json", "find_versions", "json_to_array",
    "load_model", "load_version", "make_server", "outputs_to_json", "parse_predict_request",
]
