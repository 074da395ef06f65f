"""TensorFlow Serving's gRPC API over the same model service as the REST API.

Serves ``tensorflow.serving.PredictionService`` (``Predict``, ``GetModelMetadata``) and
``tensorflow.serving.ModelService`` (``GetModelStatus``) with the protos of the
``tensorflow-serving-api`` package, so existing TensorFlow Serving gRPC clients work unchanged.
Requests go through the :class:`~export.rest_server.PredictionService` the REST API uses: the same
versions, request limits, input checks and batching. Tensors are converted with
``tf.make_ndarray`` / ``tf.make_tensor_proto``, an input only once its declared dtype, shape and
value count agree and the shape is inside the request limits
(:func:`export.tensor_protos.request_arrays`): a proto of a few bytes can declare any shape.

Errors are gRPC status codes with the REST API's one-line messages: ``INVALID_ARGUMENT`` for the
client's input, ``NOT_FOUND`` for an unknown model or version, ``RESOURCE_EXHAUSTED`` for a
request over a size limit (grpc refuses messages over ``max_message_bytes`` itself with that code),
``INTERNAL`` only for a fault in this server.
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import sys
import traceback
from typing import Callable, Optional, Sequence

import grpc
from tensorflow_serving.apis import model_service_pb2_grpc, prediction_service_pb2_grpc

from export.request_limits import LimitExceeded
from export.rest_server import DEFAULT_MAX_BODY_BYTES, PortError, PredictionService, check_port, host_port
from export.serving_codec import DEFAULT_SIGNATURE, BadRequest, NotFound, PayloadTooLarge, RestError
from export.tensor_protos import request_arrays


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
        unknown = sorted(set(request.output_filter) - set(signature.outputs))
        if unknown:
            raise BadRequest(f"output_filter: unknown output '{unknown[0]}' (signature '{signature.name}' has "
                             f"outputs: {','.join(signature.outputs)})")
        # the declared shapes are checked against the signature and the limits before any tensor is expanded
        arrays = request_arrays(request.inputs, signature, self.service.limits_for(loaded))
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


__all__: Sequence[str] = ["GrpcPredictionService", "GrpcServer"]
