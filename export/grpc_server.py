"""TensorFlow Serving's gRPC API over the same model service as the REST API.

Serves ``tensorflow.serving.PredictionService`` (``Predict``, ``GetModelMetadata``) and
``tensorflow.serving.ModelService`` (``GetModelStatus``) with the protos of the
``tensorflow-serving-api`` package, so existing TensorFlow Serving gRPC clients work unchanged.
Requests go through the :class:`~export.rest_server.PredictionService` the REST API uses: the same
versions, request limits, input checks and batching. Tensors are converted with
``tf.make_ndarray`` / ``tf.make_tensor_proto``, an input only once its declared dtype, shape and
value count agree and the shape is inside the request limits (:func:`tensor_shape`): a proto of a
few bytes can declare any shape.

Errors are gRPC status codes with the REST API's one-line messages: ``INVALID_ARGUMENT`` for the
client's input, ``NOT_FOUND`` for an unknown model or version, ``RESOURCE_EXHAUSTED`` for a
request over a size limit (grpc refuses messages over ``max_message_bytes`` itself with that code),
``INTERNAL`` only for a fault in this server.
"""

from __future__ import annotations

import concurrent.futures
import functools
import math
import os
import sys
import traceback
from typing import Callable, Optional, Sequence

import grpc
import numpy as np
from tensorflow_serving.apis import model_service_pb2_grpc, prediction_service_pb2_grpc

from export.request_limits import LimitExceeded, check_shapes
from export.rest_server import DEFAULT_MAX_BODY_BYTES, PortError, PredictionService, check_port, host_port
from export.serving_codec import (DEFAULT_SIGNATURE, NUMPY_DTYPES, BadRequest, NotFound, PayloadTooLarge, RestError,
                                  check_declared_shapes)


def _abort(context: grpc.ServicerContext, error: RestError) -> None:
    if isinstance(error, NotFound):
        code = grpc.StatusCode.NOT_FOUND
    elif isinstance(error, (LimitExceeded, PayloadTooLarge)):
        code = grpc.StatusCode.RESOURCE_EXHAUSTED
    else:
        code = grpc.StatusCode.INVALID_ARGUMENT
    context.abort(code, error.message)


def _answering(method: Callable) -> Callable:
    """Turn the service's errors into status codes; anything else is ``INTERNAL`` without details."""

    @functools.wraps(method)
    def wrapped(self, request, context):
        try:
            return method(self, request, context)
        except RestError as error:
            _abort(context, error)
        except Exception as error:  # a fault in this server, not in the request
            traceback.print_exc(file=sys.stderr)
            context.abort(grpc.StatusCode.INTERNAL, f"internal server error: {type(error).__name__}")

    return wrapped


def _version_text(model_spec) -> Optional[str]:
    if model_spec.HasField("version_label"):
        raise BadRequest(f"model_spec.version_label '{model_spec.version_label}': version labels are not "
                         "served; name a version number")
    return str(model_spec.version.value) if model_spec.HasField("version") else None


# The repeated field of a TensorProto that holds each dtype's values when ``tensor_content`` is empty.
_VALUE_FIELDS = {
    "DT_STRING": "string_val", "DT_BOOL": "bool_val", "DT_INT8": "int_val", "DT_UINT8": "int_val",
    "DT_INT16": "int_val", "DT_UINT16": "int_val", "DT_INT32": "int_val", "DT_INT64": "int64_val",
    "DT_UINT32": "uint32_val", "DT_UINT64": "uint64_val", "DT_HALF": "half_val", "DT_BFLOAT16": "half_val",
    "DT_FLOAT": "float_val", "DT_DOUBLE": "double_val",
}


def tensor_shape(name: str, proto, dtype: str) -> tuple:
    """The shape a request input declares, once its dtype and values are checked against it.

    ``tf.make_ndarray`` expands a ``TensorProto`` to its declared shape whatever it holds (an 82-byte
    proto declaring ``[20000, 20000]`` with one value becomes 1.6 GB), so the declaration is checked
    first: a known rank, no negative size, the signature's dtype, and one value per element (as
    ``tensor_content`` bytes or in the dtype's repeated field) or a single value that fills the shape,
    as ``tf.make_tensor_proto`` writes a scalar given a shape. The size against the request limits is
    :func:`~export.request_limits.check_shapes`'s, checked before any tensor is expanded.

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


class GrpcPredictionService(prediction_service_pb2_grpc.PredictionServiceServicer,
                            model_service_pb2_grpc.ModelServiceServicer):
    """``PredictionService`` and ``ModelService`` servicers over a :class:`PredictionService`
    (``Classify``, ``Regress``, ``MultiInference`` and ``HandleReloadConfigRequest`` answer ``UNIMPLEMENTED``)."""

    def __init__(self, service: PredictionService):
        self.service = service

    @_answering
    def Predict(self, request, context):
        """Run a signature on the request's tensors (``output_filter`` selects outputs)."""
        import tensorflow as tf
        from tensorflow_serving.apis import predict_pb2

        loaded = self.service.version(request.model_spec.name, _version_text(request.model_spec))
        signature = self.service.signature(loaded, request.model_spec.signature_name or DEFAULT_SIGNATURE)
        given, declared = set(request.inputs), set(signature.inputs)
        if given - declared:
            raise BadRequest(f"Unknown named input(s): {','.join(sorted(given - declared))}; signature "
                             f"'{signature.name}' has inputs: {','.join(sorted(declared))}")
        if declared - given:
            raise BadRequest(f"Missing named input: {sorted(declared - given)[0]} (signature '{signature.name}' "
                             f"has inputs: {','.join(sorted(declared))})")
        unknown = sorted(set(request.output_filter) - set(signature.outputs))
        if unknown:
            raise BadRequest(f"output_filter: unknown output '{unknown[0]}' (signature '{signature.name}' has "
                             f"outputs: {','.join(signature.outputs)})")
        # the declared shapes are checked against the signature and the limits before any tensor is expanded
        shapes = {name: tensor_shape(name, request.inputs[name], signature.inputs[name].dtype)
                  for name in sorted(declared)}
        check_declared_shapes(shapes, signature)
        check_shapes(shapes, signature, self.service.limits_for(loaded))
        arrays = {name: tensor_to_array(name, request.inputs[name], signature.inputs[name].dtype)
                  for name in sorted(declared)}
        for name, array in arrays.items():
            if NUMPY_DTYPES.get(signature.inputs[name].dtype) is object:
                arrays[name] = array.astype(object)
        outputs = self.service.run(loaded, signature, "row", arrays)
        response = predict_pb2.PredictResponse()
        response.model_spec.name = self.service.model_name
        response.model_spec.version.value = loaded.version
        response.model_spec.signature_name = signature.name
        for name in request.output_filter or outputs:
            response.outputs[name].CopyFrom(tf.make_tensor_proto(outputs[name]))
        return response

    @_answering
    def GetModelMetadata(self, request, context):
        """Signature defs of a version (``metadata_field`` must be ``signature_def``)."""
        from google.protobuf import json_format
        from tensorflow_serving.apis import get_model_metadata_pb2

        fields = list(request.metadata_field)
        if fields != ["signature_def"]:
            raise BadRequest(f"metadata_field: expected exactly ['signature_def'], found {fields}")
        loaded = self.service.version(request.model_spec.name, _version_text(request.model_spec))
        signature_map = get_model_metadata_pb2.SignatureDefMap()
        json_format.ParseDict({"signature_def": loaded.signature_def_json}, signature_map)
        response = get_model_metadata_pb2.GetModelMetadataResponse()
        response.model_spec.name = self.service.model_name
        response.model_spec.version.value = loaded.version
        response.metadata["signature_def"].Pack(signature_map)
        return response

    @_answering
    def GetModelStatus(self, request, context):
        """Every version the server has seen, with its state."""
        from google.protobuf import json_format
        from tensorflow_serving.apis import get_model_status_pb2

        answer = self.service.model_status(request.model_spec.name, _version_text(request.model_spec))
        return json_format.ParseDict(answer, get_model_status_pb2.GetModelStatusResponse())


class GrpcServer:
    """A grpc server with the prediction and model services on one port.

    Args:
        service: answers the requests (shared with the REST API).
        host: interface to bind.
        port: TCP port; 0 picks a free one (read it back from :attr:`port`).
        max_message_bytes: larger requests are refused by grpc with ``RESOURCE_EXHAUSTED``.
        num_threads: threads running requests (default: the number of CPUs, plus a batch when batching).
    """

    def __init__(self, service: PredictionService, host: str = "127.0.0.1", port: int = 0,
                 max_message_bytes: int = DEFAULT_MAX_BODY_BYTES, num_threads: Optional[int] = None):
        threads = num_threads or (os.cpu_count() or 1) + (service.batcher.parameters.max_batch_size
                                                          if service.batcher is not None else 0)
        self.service = service
        self._server = grpc.server(concurrent.futures.ThreadPoolExecutor(threads, thread_name_prefix="grpc-request"),
                                   options=[("grpc.max_receive_message_length", max_message_bytes),
                                            ("grpc.max_send_message_length", -1)])
        servicer = GrpcPredictionService(service)
        prediction_service_pb2_grpc.add_PredictionServiceServicer_to_server(servicer, self._server)
        model_service_pb2_grpc.add_ModelServiceServicer_to_server(servicer, self._server)
        # grpc binds with SO_REUSEPORT, so it could share a port another server holds: check it first.
        check_port(host, port, "--port")
        try:
            self.port = self._server.add_insecure_port(host_port(host, port))
        except RuntimeError:  # grpc's "Failed to bind to address"
            self.port = 0
        if not self.port:
            raise PortError.of("--port", host, port, "grpc cannot bind it")
        self.host = host

    @property
    def target(self) -> str:
        """``host:port`` for ``grpc.insecure_channel``."""
        return host_port(self.host, self.port)

    def start(self) -> "GrpcServer":
        """Start serving (from grpc's own threads)."""
        self._server.start()
        return self

    def stop(self, grace: float = 5.0) -> None:
        """Stop, letting requests in flight finish for up to ``grace`` seconds."""
        self._server.stop(grace).wait()


__all__: Sequence[str] = ["GrpcPredictionService", "GrpcServer", "tensor_shape", "tensor_to_array"]
