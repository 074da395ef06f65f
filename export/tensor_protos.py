"""Request inputs given as ``TensorProto`` s (gRPC ``PredictRequest`` s and the warm-up records that
replay them), turned into numpy arrays only once their declarations are checked.

``tf.make_ndarray`` expands a ``TensorProto`` to its declared shape whatever it holds: a proto of 70
bytes declaring ``[20000, 20000]`` strings with one value becomes 400 million Python objects. So
:func:`request_arrays` checks every input's declaration first (:func:`tensor_shape`: its rank, sizes,
dtype and value count) and the declared shapes against the signature and the request limits
(:func:`~export.request_limits.check_shapes`), and expands the tensors after that.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from export.request_limits import RequestLimits, check_shapes
from export.serving_codec import NUMPY_DTYPES, BadRequest, Signature, check_declared_shapes

# The repeated field of a TensorProto that holds each dtype's values when ``tensor_content`` is empty.
_VALUE_FIELDS = {
    "DT_STRING": "string_val", "DT_BOOL": "bool_val", "DT_INT8": "int_val", "DT_UINT8": "int_val",
    "DT_INT16": "int_val", "DT_UINT16": "int_val", "DT_INT32": "int_val", "DT_INT64": "int64_val",
    "DT_UINT32": "uint32_val", "DT_UINT64": "uint64_val", "DT_HALF": "half_val", "DT_BFLOAT16": "half_val",
    "DT_FLOAT": "float_val", "DT_DOUBLE": "double_val",
}


def tensor_shape(name: str, proto, dtype: str) -> tuple:
    """The shape a request input declares, once its dtype and values are checked against it.

    The declaration is checked before anything is expanded: a known rank, no negative size, the
    signature's dtype, and one value per element (as ``tensor_content`` bytes or in the dtype's
    repeated field) or a single value that fills the shape, as ``tf.make_tensor_proto`` writes a scalar
    given a shape. The size against the request limits is
    :func:`~export.request_limits.check_shapes`'s.

    Args:
        name: the input's name (for the message).
        proto: its ``TensorProto``.
        dtype: the dtype the signature declares (``DT_STRING``).

    Returns:
        The declared shape.

    Raises:
        BadRequest: one line naming the input and what was expected.
    """
    from tensorflow.core.framework import types_pb2

    if proto.dtype not in types_pb2.DataType.values():
        raise BadRequest(f"input '{name}' has dtype enum {proto.dtype}, which is no TensorFlow DataType; "
                         f"the signature expects {dtype}")
    given = types_pb2.DataType.Name(proto.dtype)
    if given != dtype:
        raise BadRequest(f"input '{name}' is {given} but the signature expects {dtype}")
    if proto.tensor_shape.unknown_rank:
        raise BadRequest(f"input '{name}' has an unknown rank; expected a TensorProto with its shape")
    shape = tuple(int(d.size) for d in proto.tensor_shape.dim)
    if any(d < 0 for d in shape):
        raise BadRequest(f"input '{name}' declares shape {list(shape)}; expected sizes >= 0")
    elements = math.prod(shape)
    if proto.tensor_content:
        import tensorflow as tf

        itemsize = tf.as_dtype(proto.dtype).size
        if given == "DT_STRING" or len(proto.tensor_content) != elements * itemsize:
            raise BadRequest(f"input '{name}' holds {len(proto.tensor_content)} bytes of tensor_content but its shape "
                             f"{list(shape)} needs {elements} x {itemsize} bytes")
    elif given in _VALUE_FIELDS:
        values = len(getattr(proto, _VALUE_FIELDS[given]))
        # one value fills the whole shape (``tf.make_tensor_proto(0, shape=[2, 3])`` sends that, and
        # TensorFlow expands it); it is expanded only after the shape has passed the request limits
        if values != elements and not (values == 1 and elements > 1):
            raise BadRequest(f"input '{name}' holds {values} value{'' if values == 1 else 's'} but its shape "
                             f"{list(shape)} has {elements} elements; expected one value per element, or a single "
                             "value for all")
    return shape


def tensor_to_array(name: str, proto, dtype: str) -> np.ndarray:
    """One request input as numpy, refusing a dtype other than the signature's or values that do not fill
    its declared shape (:func:`tensor_shape`; 400 naming the input)."""
    import tensorflow as tf

    tensor_shape(name, proto, dtype)
    try:
        return tf.make_ndarray(proto)
    except (TypeError, ValueError) as error:
        raise BadRequest(f"input '{name}' is not a valid TensorProto: {error}") from None


def request_arrays(inputs: Mapping, signature: Signature, limits: RequestLimits) -> dict:
    """A request's ``{name: TensorProto}`` inputs as ``{name: array}`` for ``signature``, each expanded
    only once every declaration is checked and the declared shapes are inside ``limits``.

    Args:
        inputs: the request's inputs (``PredictRequest.inputs``).
        signature: the signature they are for.
        limits: resolved limits (no ``None``).

    Returns:
        One numpy array per input (strings as ``object`` arrays of bytes, as the REST codec makes them);
        their values are still to be checked (:func:`~export.request_limits.check_request`).

    Raises:
        BadRequest: a missing or unknown input, a declaration that does not hold together, or (as
            ``LimitExceeded``) a shape over a limit.
    """
    given, declared = set(inputs), set(signature.inputs)
    if given - declared:
        raise BadRequest(f"Unknown named input(s): {','.join(sorted(given - declared))}; signature "
                         f"'{signature.name}' has inputs: {','.join(sorted(declared))}")
    if declared - given:
        raise BadRequest(f"Missing named input: {sorted(declared - given)[0]} (signature '{signature.name}' "
                         f"has inputs: {','.join(sorted(declared))})")
    shapes = {name: tensor_shape(name, inputs[name], signature.inputs[name].dtype) for name in sorted(declared)}
    check_declared_shapes(shapes, signature)
    check_shapes(shapes, signature, limits)
    arrays = {name: tensor_to_array(name, inputs[name], signature.inputs[name].dtype) for name in sorted(declared)}
    for name, array in arrays.items():
        if NUMPY_DTYPES.get(signature.inputs[name].dtype) is object:
            arrays[name] = array.astype(object)
    return arrays


__all__: Sequence[str] = ["request_arrays", "tensor_shape", "tensor_to_array"]
