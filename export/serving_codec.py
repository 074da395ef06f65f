"""TensorFlow Serving's REST JSON codec: request JSON -> numpy inputs, outputs -> response JSON.

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
- Errors are ``{"error": "<message>"}`` (:func:`error_body`): :class:`BadRequest` (400, TensorFlow
  Serving's ``InvalidArgument``), :class:`NotFound` (404), :class:`PayloadTooLarge` (413).

Checks beyond TensorFlow Serving (documented differences):

- Inputs that the signature declares with the same shape of rank >= 2 (for example ``tokens`` and
  ``parse_heads``, both ``[batch, time]``) must have the same actual shape in a request: one value per
  token; a mismatch is refused before the model runs, with a message naming both inputs.
- Each input's shape must agree with the rank and fixed sizes the signature declares. Shapes are
  read from the parsed JSON (the batch from ``instances``, the rest along first elements) and
  checked, with the caller's limits (``check_shapes``), before any value is converted; an instance
  whose shape differs from the first's is refused before its values are converted.
- A columnar ``inputs`` object may not hold names the signature does not have, and the request object
  may not hold keys other than ``signature_name``, ``instances`` and ``inputs`` (TensorFlow Serving
  ignores both silently, hiding typos such as ``"signature"``).
- Request strings must be valid Unicode (no lone ``\\ud800`` surrogates, body UTF-8); binary data
  goes in ``{"b64": ...}``.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import re
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

DEFAULT_SIGNATURE = "serving_default"
BYTES_SUFFIX = "_bytes"

# JSON -> numpy for the dtypes TensorFlow Serving's JSON mapping supports.
NUMPY_DTYPES = {
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
    for name, dtype in NUMPY_DTYPES.items()
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


class PayloadTooLarge(RestError):
    """413: the request body is larger than the server accepts."""

    status = 413


# --------------------------------------------------------------------------------------------------
# Signatures
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
    if spec.dtype not in NUMPY_DTYPES:
        raise BadRequest(f"input '{spec.name}' has dtype {spec.dtype}, which the JSON API does not support; "
                         f"supported: {', '.join(sorted(NUMPY_DTYPES))}")
    shape = _dense_shape(value)
    leaves: list = []
    _fill(value, shape, spec.dtype, 0, leaves)
    array = np.empty(len(leaves), dtype=NUMPY_DTYPES[spec.dtype])
    if leaves:
        array[:] = leaves
    return array.reshape(shape)


def check_declared_shapes(shapes: Mapping[str, Sequence[int]], signature: Signature) -> None:
    """Each input's shape fits its declaration; same-declared inputs of rank >= 2 agree (else a 400).

    Args:
        shapes: each input's shape (an array's, or a request's before its values are converted).
        signature: the signature the inputs are for.
    """
    for name, shape in shapes.items():
        spec = signature.inputs[name]
        if spec.shape is None:
            continue
        fits = len(spec.shape) == len(shape) and all(d is None or d == n for d, n in zip(spec.shape, shape))
        if not fits:
            raise BadRequest(f"input '{name}' of signature '{signature.name}' is declared with shape "
                             f"{spec.shape_text()} but the request gives shape {_shape_text(shape)}")
    groups: dict = {}
    for name, spec in signature.inputs.items():
        if spec.shape is not None and len(spec.shape) >= 2:
            groups.setdefault(spec.shape, []).append(name)
    for declared, names in groups.items():
        first = names[0]
        for other in names[1:]:
            if tuple(shapes[first]) != tuple(shapes[other]):
                raise BadRequest(
                    f"inputs '{first}' and '{other}' of signature '{signature.name}' are declared with the same "
                    f"shape {signature.inputs[first].shape_text()} and must agree in length, but '{first}' has "
                    f"shape {_shape_text(shapes[first])} and '{other}' has shape "
                    f"{_shape_text(shapes[other])}")


#: ``check_shapes(signature, {input: shape})``: refuses (raising :class:`BadRequest`) a request by the
#: shapes its inputs will have, before any of their values is converted.
ShapeCheck = Callable[[Signature, Mapping[str, tuple]], None]


def _checked_shapes(shapes: dict, signature: Signature, check_shapes: Optional[ShapeCheck]) -> None:
    check_declared_shapes(shapes, signature)
    if check_shapes is not None:
        check_shapes(signature, shapes)


def _rows_to_arrays(instances: Any, signature: Signature, check_shapes: Optional[ShapeCheck] = None) -> dict:
    """Row format: ``instances`` -> one batched array per input.

    The batch is the list's length and each input's shape that of its first instance (read along first
    elements); these shapes are checked before any value is converted, and every further instance's
    shape is compared with the first's before its values are.
    """
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
        if index == 0:
            shapes = {name: tuple(_dense_shape(values[name])) for name in names}
            _checked_shapes({name: (len(instances),) + shape for name, shape in shapes.items()}, signature,
                            check_shapes)
        for name in names:
            shape = tuple(_dense_shape(values[name]))
            if shape != shapes[name]:
                raise BadRequest(f"Failed to process element: {index} key: {name} of 'instances' list. Error: "
                                 f"Expecting shape {_shape_text(shapes[name])} but got: {_shape_text(shape)} "
                                 "(every instance of an input must have the same shape; pad shorter ones)")
            try:
                array = json_to_array(values[name], signature.inputs[name])
            except BadRequest as error:
                raise BadRequest(f"Failed to process element: {index} key: {name} of 'instances' list. "
                                 f"Error: {error.message}") from None
            per_input[name].append(array)
    return {name: np.stack(arrays) for name, arrays in per_input.items()}


def _columns_to_arrays(inputs: Any, signature: Signature, check_shapes: Optional[ShapeCheck] = None) -> dict:
    """Columnar format: ``inputs`` -> one array per input (their shapes checked before any value is converted)."""
    names = list(signature.inputs)
    plain = not isinstance(inputs, dict) or _is_b64_object(inputs)
    if plain:
        if len(names) > 1:
            raise BadRequest("inputs is a plain value/list, but expecting an object as multiple input tensors "
                             f"required as per the signature: {','.join(names)}")
        inputs = {names[0]: inputs}
    else:
        unknown = sorted(set(inputs) - set(names))
        if unknown:
            raise BadRequest(f"Unknown named input(s): {','.join(unknown)} in 'inputs' object; signature "
                             f"'{signature.name}' has inputs: {','.join(names)}")
        for name in names:
            if name not in inputs:
                raise BadRequest(f"Missing named input: {name} in 'inputs' object.")
    _checked_shapes({name: tuple(_dense_shape(inputs[name])) for name in names}, signature, check_shapes)
    arrays = {}
    for name in names:
        try:
            arrays[name] = json_to_array(inputs[name], signature.inputs[name])
        except BadRequest as error:
            if plain:
                raise
            raise BadRequest(f"Failed to process input: {name} of 'inputs' object. Error: {error.message}") from None
    return arrays


# A JSON string literal (the unrolled form runs in linear time on any input).
_STRING_LITERAL = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


def _structure_marks(body: bytes, start: int, end: int) -> int:
    return body.count(b",", start, end) + body.count(b"[", start, end) + body.count(b"{", start, end)


def count_json_values(body: bytes, stop_above: int) -> int:
    """An upper bound on the values (scalars, lists and objects) of a JSON document, read from its bytes.

    Every value but the document itself follows a ``,``, ``[`` or ``{`` outside a string, so their
    count plus one bounds the values without parsing (``json.loads`` of a 6 MB body of a million
    one-word lists builds a million Python lists first). Counting the marks of the whole body costs
    milliseconds; only when that count is over ``stop_above`` are the string literals skipped, and the
    count stops once it passes ``stop_above``.

    Args:
        body: the request body.
        stop_above: the count that matters; the result is exact up to it.

    Returns:
        The bound; any result over ``stop_above`` means only "more than ``stop_above``".
    """
    count = _structure_marks(body, 0, len(body)) + 1
    if count <= stop_above:
        return count
    count, position = 1, 0
    for string in _STRING_LITERAL.finditer(body):
        count += _structure_marks(body, position, string.start())
        position = string.end()
        if count > stop_above:
            return count
    return count + _structure_marks(body, position, len(body))


def parse_predict_request(body: bytes, get_signature: Callable[[str], Signature],
                          check_shapes: Optional[ShapeCheck] = None) -> tuple:
    """Parse a ``:predict`` body into ``(signature, format, {input: array})``.

    Args:
        body: the request body.
        get_signature: resolves ``signature_name`` (raising :class:`RestError` when unknown).
        check_shapes: called with the signature and the shape each input will have (the batch from the
            ``instances`` list, the rest from its first instance) once the JSON is parsed and before any
            value is converted, so a request over a limit is refused at the cost of reading its first
            instance rather than of converting all its values.

    Returns:
        ``(signature, format, arrays)``; ``format`` is ``"row"`` or ``"columnar"``.

    Raises:
        BadRequest: every malformed request (and whatever ``check_shapes`` raises).
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
            arrays, form = _rows_to_arrays(request["instances"], signature, check_shapes), "row"
        elif "inputs" in request:
            arrays, form = _columns_to_arrays(request["inputs"], signature, check_shapes), "columnar"
        else:
            raise BadRequest("Missing 'inputs' or 'instances' key")
    except RecursionError:
        raise BadRequest("input lists are nested too deeply") from None
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

def error_body(message: str) -> bytes:
    """``{"error": message}`` as UTF-8 JSON (lone surrogates echoed from a request are escaped)."""
    try:
        return json.dumps({"error": message}, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps({"error": message}).encode("ascii")


__all__: Sequence[str] = [
    "BYTES_SUFFIX", "BadRequest", "DEFAULT_SIGNATURE", "InputSpec", "NUMPY_DTYPES", "NotFound", "PayloadTooLarge", "RestError",
    "ShapeCheck", "Signature", "array_to_json", "check_declared_shapes", "count_json_values", "error_body", "json_to_array", "outputs_to_json", "parse_predict_request",
]
