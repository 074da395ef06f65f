"""TensorFlow Serving's REST API over a SavedModel directory: routing and the HTTP server.

Serves any SavedModel laid out as TensorFlow Serving expects::

    MODEL_BASE_PATH/
      1/saved_model.pb  1/variables/ ...
      2/saved_model.pb  2/variables/ ...

The newest version directories holding a ``saved_model.pb`` are served (TensorFlow Serving's
``latest`` version policy), and the base path is polled for new ones while the server runs
(:class:`~export.model_versions.VersionManager`); requests without ``/versions/V`` go to the
highest available version. The model is run through its SavedModel signatures (``tf.saved_model.load(path).signatures``),
so nothing here knows which model it serves.

Endpoints (paths are matched case-insensitively, as TensorFlow Serving does):

=====================================================  =============================================
``GET  /`` (or ``/index.html``)                          the demo page (:mod:`export.demo`): HTML that
                                                        labels sentences through this API
``GET  /v1/models/NAME[/versions/V]``                   model status (``GetModelStatusResponse``)
``GET  /v1/models/NAME[/versions/V]/metadata``          signature defs (``GetModelMetadataResponse``)
``POST /v1/models/NAME[/versions/V]:predict``           row (``instances`` -> ``predictions``) or
                                                        columnar (``inputs`` -> ``outputs``) format
=====================================================  =============================================

The JSON codec (row and columnar formats, base64, errors) is :mod:`export.serving_codec`; versions are
read and loaded by :mod:`export.model_versions`. Errors are ``{"error": "<message>"}``: 400 for bad
requests, 404 for an unknown model, version or path (TensorFlow Serving answers a path naming no API
under ``/v1/`` with 400 ``Malformed request``), 408 when headers or body do not arrive within the
deadline, 413 for a body over the size limit, 503 when the server holds its connection limit. A 500
only ever means a fault in this server, never bad input.

Before a request reaches TensorFlow it is checked against the request limits (tokens per sentence,
tokens, sentences and token pairs per request; by default from the model's run config), each before
the work it bounds (the body's JSON values are counted before it is parsed, its shapes checked
before its values are converted, a raw text's characters and words before it is split into
sentences), and the inputs the
project's exports take by name (``tokens``, ``parse_heads``, ``predicate_index``) against their
sentences (:mod:`export.request_limits`): a 400 naming the limit or the field, instance and token.
Errors the model raises itself are answered 400 with one line in the model's own words, without
TensorFlow's graph node or op names.

The HTTP layer is an ASGI application (:class:`RestApp`) served by uvicorn with its h11 protocol
(:class:`RestServer`). Both are maintained, widely deployed libraries, and h11 is a strict HTTP/1.1
parser: it refuses conflicting ``Content-Length`` headers, a ``Content-Length`` that is not a number,
``Transfer-Encoding`` other than ``chunked`` with a 400, and header blocks growing over 16 KiB with
a 431 (identical repeats of one ``Content-Length`` value are one framing and are merged, as RFC 9110
§8.6 allows); this server adds a 431 for a header block over 16 KiB that arrives whole, and a 400
and a closed connection for ``Transfer-Encoding`` beside ``Content-Length`` (RFC 9112 §6.1), so a
request cannot be framed two ways. asyncio keeps an idle or stalled connection
down to a few kilobytes instead of a thread. What uvicorn does not do is added here:

- a deadline for the request's headers (from the connection's start, or the previous answer on a
  keep-alive connection) and for its body (from the end of the headers): a client that trickles
  bytes is answered 408 and disconnected when the deadline passes, however slowly it sends;
- a connection limit: a connection beyond ``max_connections`` is answered 503 and closed at once;
- the body-size limit: a body over ``max_body_bytes`` is answered 413 and never parsed (it is read on
  and discarded up to ``DRAIN_BYTES`` first, so a client that sends before it reads sees the 413;
  a larger declared body, or one awaiting ``100 Continue``, is refused at once);
- JSON error bodies for uvicorn's and h11's own refusals.

The blocking work of a request (JSON parsing, TensorFlow, JSON writing) runs in a thread pool
(``num_threads``), never on the event loop, so a long prediction does not hold up other connections'
reading and writing. ``python -m lisa_tf serve`` runs the server; it binds 127.0.0.1 unless another
host is given.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import json
import os
import re
import socket
import sys
import threading
import time
import traceback
from typing import Any, Callable, Optional, Sequence

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from data_pipeline.errors import UserError
from export.batching import Batcher, BatchingParameters
from export.demo import PAGE_PATHS, demo_page
from export.model_versions import MAX_VERSION, ModelVersion, VersionManager, load_version, parse_version
from export.request_limits import RequestLimits, check_json_values, check_request, check_shapes, graph_error_message
from export.serving_codec import (NUMPY_DTYPES, BadRequest, NotFound, PayloadTooLarge, RestError, Signature,
                                  error_body, outputs_to_json, parse_predict_request)

#: Requests larger than this are refused with 413 before being read.
DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
#: A body over the size limit is still read (and discarded) up to this size before the 413.
DRAIN_BYTES = 64 * 1024 * 1024
#: Seconds a request's headers, and then its body, may take to arrive (TensorFlow Serving's
#: ``--rest_api_timeout_in_ms`` default).
DEFAULT_REQUEST_TIMEOUT = 30.0
#: Open connections the server holds at once; the next one is answered 503.
DEFAULT_MAX_CONNECTIONS = 1000
#: Largest request head (request line and headers) accepted; a larger one is answered 431.
DEFAULT_MAX_HEADER_BYTES = 16 * 1024
#: Seconds an idle keep-alive connection stays open between requests.
KEEP_ALIVE_SECONDS = 30

# Same patterns as tensorflow_model_server's HTTP handler (case-insensitive, full match).
_PREDICT_PATH = re.compile(r"/v1/models/([^/:]+)(?:/versions/([0-9]+))?:(classify|regress|predict)", re.IGNORECASE)
_STATUS_PATH = re.compile(r"/v1/models(?:/([^/:]+))?(?:/versions/([0-9]+))?(/metadata)?", re.IGNORECASE)


# --------------------------------------------------------------------------------------------------
# The service: routing and prediction, independent of HTTP
# --------------------------------------------------------------------------------------------------


def run_signature(signature: Signature, arrays: dict) -> dict:
    """Run ``signature`` on checked numpy inputs; its outputs as numpy arrays.

    Raises:
        BadRequest: the model refused the inputs (one line in the model's own words, without
            TensorFlow's graph node or op names; TensorFlow Serving answers these 400).
    """
    import tensorflow as tf

    try:
        tensors = {key: tf.constant(value, dtype=tf.as_dtype(NUMPY_DTYPES[signature.inputs[key].dtype]))
                   for key, value in arrays.items()}
        results = signature.function(**tensors)
        return {key: value.numpy() for key, value in results.items()}
    except tf.errors.OpError as error:
        raise BadRequest(graph_error_message(signature.name, error.message)) from None
    except (TypeError, ValueError) as error:  # inputs the signature's function refuses before running
        raise BadRequest(graph_error_message(signature.name, str(error))) from None


def _version_number(text: str) -> int:
    """A requested version as a number, or a 400 as TensorFlow Serving answers a version it cannot read
    as an int64 (a version that can be read but is not served is a 404)."""
    number = parse_version(text)
    if number is None:
        shown = text if len(text) <= 40 else f"{text[:20]}...{text[-10:]} ({len(text)} characters)"
        raise BadRequest(f"Failed to convert version: {shown} to numeric; expected a whole number from 0 to "
                         f"{MAX_VERSION}")
    return number


class PredictionService:
    """Answers TensorFlow Serving REST requests for one model; independent of the HTTP layer.

    Args:
        model_name: the ``NAME`` in ``/v1/models/NAME``.
        versions: the started :class:`~export.model_versions.VersionManager` whose available versions
            are served; requests without ``/versions/V`` go to the highest.
        limits: request limits; fields left ``None`` take each version's defaults.
        batching: join concurrent requests into shared model calls (:mod:`export.batching`);
            ``None`` runs each request on its own.
    """

    def __init__(self, model_name: str, versions: VersionManager, limits: RequestLimits = RequestLimits(),
                 batching: Optional[BatchingParameters] = None):
        self.model_name = model_name
        self.versions = versions
        self.limits = limits
        self.batcher = None if batching is None else Batcher(batching, run_signature)

    @property
    def latest(self) -> Optional[int]:
        """The highest available version (``None`` while none is)."""
        return max(self.versions.available(), default=None)

    # -- lookup ----------------------------------------------------------------------------------
    def version(self, name: str, version: Optional[str]) -> ModelVersion:
        """The loaded version a request names (the highest without ``version``), or a 404."""
        available = self.versions.available()
        spec = f"Latest({name})" if version is None else f"Specific({name}, {version})"
        if name != self.model_name or not available:
            raise NotFound(f"Servable not found for request: {spec}")
        if version is None:
            return available[max(available)]
        number = _version_number(version)
        if number not in available:
            raise NotFound(f"Servable not found for request: {spec}; "
                           f"available versions: {', '.join(map(str, available))}")
        return available[number]

    # -- endpoints -------------------------------------------------------------------------------
    def model_status(self, name: str, version: Optional[str]) -> dict:
        """``GET /v1/models/NAME[/versions/V]``: ``GetModelStatusResponse`` as JSON, every version the
        server has seen with its state (``AVAILABLE``, ``LOADING``, ``END`` when unloaded or failed)."""
        if name != self.model_name:
            raise NotFound(f"Could not find any versions of model {name}")
        statuses = self.versions.statuses()
        if version is not None:
            number = _version_number(version)
            statuses = [s for s in statuses if s.version == number]
            if not statuses:
                raise NotFound(f"Could not find version {version} of model {name}")
        return {"model_version_status": [s.to_json() for s in statuses]}

    def metadata(self, name: str, version: Optional[str]) -> dict:
        """``GET /v1/models/NAME[/versions/V]/metadata``: ``GetModelMetadataResponse`` as JSON."""
        loaded = self.version(name, version)
        return {
            "model_spec": {"name": self.model_name, "signature_name": "", "version": str(loaded.version)},
            "metadata": {"signature_def": {"signature_def": loaded.signature_def_json}},
        }

    def signature(self, loaded: ModelVersion, signature_name: str) -> Signature:
        """``loaded``'s signature ``signature_name``, or a 400 naming the available ones."""
        if signature_name not in loaded.signatures:
            raise BadRequest(f"Serving signature name: \"{signature_name}\" not found in signature def "
                             f"(available: {', '.join(sorted(loaded.signatures))})")
        return loaded.signatures[signature_name]

    def limits_for(self, loaded: ModelVersion) -> RequestLimits:
        """The request limits for ``loaded``: the server's, with the version's defaults where none was given."""
        return self.limits.resolve(loaded.training_sizes, loaded.word_pieces)

    def run(self, loaded: ModelVersion, signature: Signature, form: str, arrays: dict) -> dict:
        """Check decoded inputs against the request limits and run them (joined with others when
        batching); the outputs as numpy arrays. Shared by the REST and gRPC APIs."""
        check_request(arrays, signature, self.limits_for(loaded))
        if self.batcher is None:
            return run_signature(signature, arrays)
        return self.batcher.predict((loaded.version, id(loaded)), signature, form, arrays)

    def predict(self, name: str, version: Optional[str], body: bytes) -> dict:
        """``POST /v1/models/NAME[/versions/V]:predict``: run a signature on a JSON request.

        A request's cost is bounded before it is paid: the body's JSON values are counted on its bytes
        before it is parsed, and the parsed request's shapes are checked before its values are converted
        (:mod:`export.request_limits`).
        """
        loaded = self.version(name, version)
        limits = self.limits_for(loaded)
        check_json_values(body, loaded.signatures.values(), limits)
        signature, form, arrays = parse_predict_request(
            body, lambda key: self.signature(loaded, key),
            lambda chosen, shapes: check_shapes(shapes, chosen, limits))
        return outputs_to_json(self.run(loaded, signature, form, arrays), form)

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



# --------------------------------------------------------------------------------------------------
# HTTP: the ASGI application and uvicorn's h11 protocol with deadlines and a connection limit
# --------------------------------------------------------------------------------------------------


class _RequestTimeout(RestError):
    """408: the body did not arrive within the deadline."""

    status = 408


class _Disconnected(Exception):
    """The client went away before its request was complete: there is nobody to answer."""


def _raw_error_response(status: int, reason: str, message: str) -> bytes:
    """A complete ``Connection: close`` JSON error answer, for refusals made before h11 has a request."""
    body = error_body(message)
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n")
    return head.encode("ascii") + body


class RestApp:
    """ASGI application answering TensorFlow Serving REST requests with a :class:`PredictionService`.

    Args:
        service: routes and answers the requests (run in ``executor``).
        executor: thread pool for the blocking work of each request.
        max_body_bytes: larger bodies are refused with 413.
        body_timeout: seconds the body may take after the headers; then 408.
    """

    def __init__(self, service: "PredictionService", executor: concurrent.futures.Executor,
                 max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, body_timeout: float = DEFAULT_REQUEST_TIMEOUT):
        self.service = service
        self.executor = executor
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.page = demo_page(service.model_name)

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        """ASGI entry point (``http`` scopes; uvicorn runs with the lifespan protocol off)."""
        if scope["type"] != "http":
            return
        method = scope["method"]
        close = False
        headers = [(b"content-type", b"application/json")]
        try:
            body = await self._read_body(scope, receive)
            if method in ("GET", "HEAD") and scope["path"] in PAGE_PATHS:
                (data, headers), status = self.page, 200
            else:
                status, data = await asyncio.get_running_loop().run_in_executor(
                    self.executor, self.answer, method, scope["path"], body)
        except _Disconnected:
            return
        except RestError as error:  # refused while reading: the rest of the body is not read
            status, data, close = error.status, error_body(error.message), True
        headers = headers + [(b"content-length", str(len(data)).encode())]
        if close:
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else data})

    async def _read_body(self, scope: dict, receive: Callable) -> bytes:
        """The whole body, or a refusal once it is over the limit.

        A body over the limit is read on and discarded up to ``DRAIN_BYTES`` before the 413, so a
        client that sends its whole body before reading the answer gets the 413 rather than a reset
        connection; a larger declared body, or one whose client waits for ``100 Continue``, is
        refused at once.
        """
        if scope["http_version"] not in ("1.0", "1.1"):
            raise BadRequest(f"HTTP/{scope['http_version']} is not supported; send HTTP/1.1 or HTTP/1.0")
        headers = dict(scope["headers"])
        declared = int(headers[b"content-length"]) if b"content-length" in headers else None
        over = PayloadTooLarge(f"request body {'' if declared is None else f'of {declared} bytes '}is over the limit "
                               f"of {self.max_body_bytes} bytes (--max_request_bytes)")
        too_large = declared is not None and declared > self.max_body_bytes
        if too_large and (declared > DRAIN_BYTES or b"expect" in headers):
            raise over
        deadline = time.monotonic() + self.body_timeout
        parts, size = [], 0
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(deadline - time.monotonic(), 0.0))
            except asyncio.TimeoutError:
                raise _RequestTimeout(f"request body not received within {self.body_timeout:g} s "
                                      "(--rest_api_timeout_in_ms)") from None
            if message["type"] == "http.disconnect":
                raise _Disconnected()
            chunk = message.get("body", b"")
            size += len(chunk)
            too_large = too_large or size > self.max_body_bytes
            if too_large and size > DRAIN_BYTES:
                raise over
            if not too_large:
                parts.append(chunk)
            if not message.get("more_body", False):
                break
        if too_large:
            raise over
        return b"".join(parts)

    def answer(self, method: str, path: str, body: bytes) -> tuple:
        """The blocking part of a request (run in the thread pool): ``(status, JSON bytes)``."""
        try:
            payload = self.service.handle("GET" if method == "HEAD" else method, path, body)
            return 200, json.dumps(payload, ensure_ascii=False).encode("utf-8")
        except RestError as error:
            return error.status, error_body(error.message)
        except Exception as error:  # a fault in this server, not in the request: report it as one
            traceback.print_exc(file=sys.stderr)
            return 500, error_body(f"internal server error: {type(error).__name__}")


class _ReasonRecorder:
    """An ``h11.Connection`` that keeps the reason and status hint of the last protocol error it raised,
    and refuses two request heads h11 lets through.

    h11 bounds a header block only while it is incomplete (``max_incomplete_event_size``): one that
    arrives whole in one read is parsed whatever its size, so the size of every head is measured on
    the bytes it took from the buffer (over ``DEFAULT_MAX_HEADER_BYTES``: 431). And h11 frames a request
    with both ``Transfer-Encoding`` and ``Content-Length`` by the former, keeping the connection open;
    a proxy in front may have framed it by the latter, so such a request is refused and its connection
    closed (RFC 9112 §6.1: the server MUST close the connection after responding).
    """

    def __init__(self, connection: h11.Connection):
        self._connection = connection
        self.reason, self.status = "", 400

    def next_event(self):
        awaiting_head = self._connection.their_state is h11.IDLE
        buffered = len(self._connection.trailing_data[0]) if awaiting_head else 0
        try:
            event = self._connection.next_event()
        except h11.RemoteProtocolError as error:
            self.reason, self.status = str(error), error.error_status_hint
            raise
        if awaiting_head and isinstance(event, h11.Request):
            head = buffered - len(self._connection.trailing_data[0])
            if head > DEFAULT_MAX_HEADER_BYTES:
                self._refuse(431, f"request headers of {head} bytes are over the limit of {DEFAULT_MAX_HEADER_BYTES} "
                                  "bytes")
            names = {name for name, _ in event.headers}  # h11 lower-cases them
            if b"transfer-encoding" in names and b"content-length" in names:
                self._refuse(400, "Transfer-Encoding and Content-Length are both given, so the body could be framed "
                                  "two ways; send one of them (RFC 9112 section 6.1)")
        return event

    def _refuse(self, status: int, reason: str) -> None:
        self.reason, self.status = reason, status
        raise h11.RemoteProtocolError(reason, error_status_hint=status)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)


class _GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header deadline, a connection limit and JSON refusals.

    Subclassed per server by :func:`_protocol_class`, which sets the class attributes.
    """

    header_timeout: float = DEFAULT_REQUEST_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.conn = _ReasonRecorder(self.conn)
        self._header_deadline: Optional[asyncio.TimerHandle] = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Count the connection; over the limit it is answered 503 and closed before any reading.

        Nagle's algorithm is switched off (asyncio does so only for sockets it creates itself): the
        answer's headers and body are separate writes, and Nagle plus the client's delayed ACK would
        add ~40 ms to every keep-alive answer.
        """
        super().connection_made(transport)
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if len(self.connections) > self.max_connections:
            transport.write(_raw_error_response(
                503, "Service Unavailable", f"the server holds its limit of {self.max_connections} open "
                                            "connections (--rest_api_max_connections); retry later"))
            transport.close()
            return
        self._arm_header_deadline()

    def connection_lost(self, exc: Optional[Exception]) -> None:
        """Drop the deadline with the connection."""
        self._disarm_header_deadline()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        """Parse what arrived; once a request's headers are complete its header deadline is over."""
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:
            self._disarm_header_deadline()

    def on_response_complete(self) -> None:
        """A keep-alive connection's next request gets a fresh header deadline."""
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm_header_deadline()

    def send_400_response(self, msg: str) -> None:
        """h11's refusals (malformed or conflicting framing, oversized headers) as JSON; never a 5xx."""
        if self.transport.is_closing():
            return
        if self.conn.status == 431:
            answer = _raw_error_response(431, "Request Header Fields Too Large", "request headers are over the limit "
                                                                                 f"of {DEFAULT_MAX_HEADER_BYTES} bytes")
        else:
            answer = _raw_error_response(400, "Bad Request", f"Invalid HTTP request: {self.conn.reason or msg}")
        self.transport.write(answer)
        self.transport.close()

    def _arm_header_deadline(self) -> None:
        self._disarm_header_deadline()
        self._header_deadline = self.loop.call_later(self.header_timeout, self._headers_overdue)

    def _disarm_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_overdue(self) -> None:
        self._header_deadline = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self.conn.trailing_data[0]:  # part of a request arrived: say why it is dropped
            self.transport.write(_raw_error_response(
                408, "Request Timeout", f"request headers not received within {self.header_timeout:g} s "
                                        "(--rest_api_timeout_in_ms)"))
        self.transport.close()


class PortError(UserError):
    """A port the server cannot listen on: names the flag, the address and why."""

    @classmethod
    def of(cls, flag: str, host: str, port: int, reason: str) -> "PortError":
        if "in use" in reason.lower():
            reason = ("already in use; stop the server that holds it or choose another port "
                      f"({flag} 0 picks a free one)")
        return cls(f"{flag} {port}: cannot listen on {host_port(host, port)}: {reason}")


def host_port(host: str, port: int) -> str:
    """``host:port``, with an IPv6 host in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _bind(host: str, port: int, flag: str, backlog: int = 2048) -> socket.socket:
    """A listening TCP socket on ``host:port``, or a :class:`PortError` naming ``flag`` (also for a
    number that is no TCP port, which ``socket`` refuses with an ``OverflowError``)."""
    if not 0 <= port <= 65535:
        raise PortError(f"{flag} {port}: expected a TCP port number from 0 to 65535 (0 picks a free one)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=backlog)
    except OSError as error:
        raise PortError.of(flag, host, port, error.strerror or str(error)) from None


def check_port(host: str, port: int, flag: str) -> None:
    """Fail early, with a :class:`PortError` naming ``flag``, when ``host:port`` cannot be listened on
    (e.g. another server holds it); port 0 (a free one) always can."""
    if port:
        _bind(host, port, flag, backlog=1).close()


def _protocol_class(header_timeout: float, max_connections: int) -> type:
    return type("GuardedH11Protocol", (_GuardedH11Protocol,),
                {"header_timeout": header_timeout, "max_connections": max_connections})


class RestServer:
    """uvicorn serving a :class:`RestApp` on one bound socket.

    Args:
        service: answers the requests.
        host: interface to bind (``127.0.0.1`` keeps the API off the network).
        port: TCP port; 0 picks a free one (read it back from :attr:`port`).
        max_body_bytes: larger request bodies are refused with 413.
        request_timeout: seconds the headers, and then the body, of a request may take; then 408.
        max_connections: open connections held at once; more are answered 503.
        num_threads: threads running requests' blocking work (default: the number of CPUs).
        log_requests: log one line per request to stderr.
    """

    def __init__(self, service: "PredictionService", host: str = "127.0.0.1", port: int = 0,
                 max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
                 max_connections: int = DEFAULT_MAX_CONNECTIONS, num_threads: Optional[int] = None,
                 log_requests: bool = False):
        self.service = service
        self._socket = _bind(host, port, "--rest_api_port")
        self.server_address = self._socket.getsockname()[:2]
        self.executor = concurrent.futures.ThreadPoolExecutor(num_threads or os.cpu_count() or 1,
                                                              thread_name_prefix="rest-request")
        app = RestApp(service, self.executor, max_body_bytes, request_timeout)
        config = uvicorn.Config(
            app, http=_protocol_class(request_timeout, max_connections), loop="asyncio", lifespan="off",
            log_config=None, access_log=log_requests, timeout_keep_alive=KEEP_ALIVE_SECONDS,
            h11_max_incomplete_event_size=DEFAULT_MAX_HEADER_BYTES, server_header=False,
            timeout_graceful_shutdown=5)
        self._server = uvicorn.Server(config)
        self._thread: Optional[threading.Thread] = None

    @property
    def port(self) -> int:
        """The bound port."""
        return self.server_address[1]

    @property
    def url(self) -> str:
        """Base URL of the REST API (``http://host:port``)."""
        host = self.server_address[0]
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.port}"

    def serve_forever(self) -> None:
        """Serve in this thread until :meth:`stop` (or, in the main thread, SIGINT/SIGTERM)."""
        try:
            self._server.run(sockets=[self._socket])
        finally:
            self.executor.shutdown(wait=False, cancel_futures=True)

    def start_in_thread(self, timeout: float = 30.0) -> threading.Thread:
        """Serve from a daemon thread (tests, benchmarks) once it accepts connections; stop with :meth:`stop`."""
        self._thread = threading.Thread(target=self.serve_forever, name="rest-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the REST server did not start within {timeout:g} s")
            time.sleep(0.01)
        return self._thread

    def stop(self) -> None:
        """Stop serving, finish the requests in flight, close the socket and stop polling for versions."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=30)
        self._socket.close()
        self.service.versions.stop()


def make_server(model_name: str, model_base_path: os.PathLike | str, host: str = "127.0.0.1", port: int = 0,
                warn: Callable[[str], None] = print, limits: RequestLimits = RequestLimits(), num_versions: int = 1,
                poll_seconds: float = 1.0, batching: Optional[BatchingParameters] = None,
                **kwargs: Any) -> RestServer:
    """Load the model's newest versions and bind a :class:`RestServer` (not yet serving).

    Args:
        model_name: the ``NAME`` in ``/v1/models/NAME``.
        model_base_path: directory of numeric version directories.
        host: interface to bind.
        port: TCP port (0: a free one).
        warn: receives one line per skipped directory or version that fails to load.
        limits: request limits (``None`` fields: each version's defaults); a version's warm-up records
            are held to them too.
        num_versions: how many of the highest versions to serve (TensorFlow Serving's ``latest`` policy).
        poll_seconds: seconds between polls of ``model_base_path`` for new versions (0: at start only).
        batching: join concurrent requests into shared model calls (``None``: each runs alone).
        **kwargs: further :class:`RestServer` arguments.

    Returns:
        The bound server; start it with :meth:`RestServer.serve_forever` or ``start_in_thread``.

    Raises:
        DataFormatError: no version under ``model_base_path`` could be loaded.
    """
    versions = VersionManager(model_base_path, num_versions, poll_seconds, warn,
                              functools.partial(load_version, limits=limits)).start()
    try:
        if batching is not None and kwargs.get("num_threads") is None:
            # requests wait for each other inside the pool: it must hold a full batch beside the running one
            kwargs["num_threads"] = (os.cpu_count() or 1) + batching.max_batch_size
        return RestServer(PredictionService(model_name, versions, limits, batching), host, port, **kwargs)
    except OSError:
        versions.stop()
        raise


__all__: Sequence[str] = ["PortError", "PredictionService", "RestApp", "RestServer", "check_port", "make_server"]
