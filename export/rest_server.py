"""TensorFlow Serving's REST API over a SavedModel directory: routing and the HTTP server.

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

The JSON codec (row and columnar formats, base64, errors) is :mod:`export.serving_codec`; versions are
read and loaded by :mod:`export.model_versions`.

The server is :class:`http.server.ThreadingHTTPServer` (one thread per connection, HTTP/1.1
keep-alive), bound to 127.0.0.1 unless another host is given. ``python -m lisa_tf serve`` runs it.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping, Optional, Sequence

from export.model_versions import ModelVersion, load_model
from export.serving_codec import (NUMPY_DTYPES, BadRequest, NotFound, PayloadTooLarge, RestError, Signature,
                                  error_body, outputs_to_json, parse_predict_request)

#: Requests larger than this are refused with 413 before being read.
DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024

# Same patterns as tensorflow_model_server's HTTP handler (case-insensitive, full match).
_PREDICT_PATH = re.compile(r"/v1/models/([^/:]+)(?:/versions/(\d+))?:(classify|regress|predict)", re.IGNORECASE)
_STATUS_PATH = re.compile(r"/v1/models(?:/([^/:]+))?(?:/versions/(\d+))?(/metadata)?", re.IGNORECASE)

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
            tensors = {key: tf.constant(value, dtype=tf.as_dtype(NUMPY_DTYPES[signature.inputs[key].dtype]))
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
            raise PayloadTooLarge(f"request body of {length} bytes exceeds the limit of {self.server.max_body_bytes}")
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
                raise PayloadTooLarge(f"request body exceeds the limit of {self.server.max_body_bytes} bytes")
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
            status, data = error.status, error_body(error.message)
        except Exception as error:  # a fault in this server, not in the request: report it as one
            traceback.print_exc(file=sys.stderr)
            status, data = 500, error_body(f"internal server error: {type(error).__name__}: {error}")
        else:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
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
        data = error_body(f"{text}{': ' + explain if explain else ''}")
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



def make_server(model_name: str, model_base_path: os.PathLike | str, host: str = "127.0.0.1", port: int = 0,
                warn: Callable[[str], None] = print, **kwargs: Any) -> RestServer:
    """Load the model and bind a :class:`RestServer` (not yet serving)."""
    return RestServer(PredictionService(model_name, load_model(model_base_path, warn)), host, port, **kwargs)


__all__: Sequence[str] = ["PredictionService", "RestRequestHandler", "RestServer", "make_server"]
