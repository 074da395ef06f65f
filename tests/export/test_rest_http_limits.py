"""The REST server's HTTP layer under hostile clients, over raw sockets on 127.0.0.1.

Each test is a case the earlier hand-written server failed: conflicting ``Content-Length`` headers
(request smuggling), clients that trickle headers or a body to hold a connection, a chunked body
growing past the size limit, more connections than the server holds, and a slow prediction holding
up every other connection. Servers here use short deadlines (``TIMEOUT`` seconds) so the tests take
seconds and stop by themselves.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from tests.export import rest_cases

TIMEOUT = 2.0  # the test servers' header and body deadline, seconds
MAX_BODY = 64 * 1024


def _start(tiny_model_base, **kwargs):
    from export import rest_server

    server = rest_server.make_server(rest_cases.MODEL, tiny_model_base, port=0, warn=lambda m: None, **kwargs)
    server.start_in_thread()
    return server


@pytest.fixture(scope="module")
def server(tiny_model_base):
    srv = _start(tiny_model_base, request_timeout=TIMEOUT, max_body_bytes=MAX_BODY, max_connections=1500)
    yield srv
    srv.stop()


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, socket.timeout):
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _exchange(port: int, data: bytes, timeout: float = 10.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        return _read_all(sock)


def _error_of(answer: bytes) -> str:
    """The ``error`` message of the first answer on a connection."""
    body = answer.split(b"\r\n\r\n", 1)[1]
    return json.loads(body)["error"]


def _timed_predict(server) -> float:
    started = time.monotonic()
    status, answer = rest_cases.request(server.url, "POST", rest_cases.PREDICT, {"instances": [rest_cases.SENT_B]},
                                        timeout=10)
    elapsed = time.monotonic() - started
    assert (status, answer) == (200, {"predictions": [rest_cases.token_row(rest_cases.SENT_B, 0.5)]})
    return elapsed


def test_conflicting_content_length_is_a_400_and_nothing_else_is_parsed(server):
    """Two ``Content-Length`` values frame the body two ways (request smuggling): refused, and the
    bytes after the first length are never read as a second request."""
    body = json.dumps({"instances": [rest_cases.SENT_A]}).encode()
    smuggled = f"GET /v1/models/{rest_cases.MODEL} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    request = (f"POST {rest_cases.PREDICT} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
               f"Content-Length: {len(body) + len(smuggled)}\r\n\r\n").encode() + body + smuggled
    answer = _exchange(server.port, request)
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert answer.count(b"HTTP/1.1 ") == 1, answer
    assert "Content-Length" in _error_of(answer)


def test_identical_repeated_content_length_frames_one_request(server):
    """A repeated identical length is one framing (RFC 9110 §8.6): one answer, no second request."""
    body = json.dumps({"instances": [rest_cases.SENT_A]}).encode()
    smuggled = f"GET /v1/models/{rest_cases.MODEL} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    request = (f"POST {rest_cases.PREDICT} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
               f"Content-Length: {len(body)}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body + smuggled
    answer = _exchange(server.port, request)
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.count(b"HTTP/1.1 ") == 1
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1]) == {"predictions": [rest_cases.token_row(rest_cases.SENT_A, 0.5)]}


def test_malformed_request_line_gets_a_json_400_with_a_status_line(server):
    answer = _exchange(server.port, b"GARBAGE\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 ") and _error_of(answer).startswith("Invalid HTTP request")


def test_headers_growing_over_the_limit_are_a_431(server):
    """A header block still incomplete past the limit is refused without waiting for its end."""
    from export.rest_server import DEFAULT_MAX_HEADER_BYTES

    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(f"GET /v1/models/{rest_cases.MODEL} HTTP/1.1\r\nHost: x\r\n".encode())
        for _ in range(DEFAULT_MAX_HEADER_BYTES // 1024 + 2):
            try:
                sock.sendall(b"X-Pad: " + b"a" * 1024 + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                break
            time.sleep(0.01)
        answer = _read_all(sock)
    assert answer.startswith(b"HTTP/1.1 431 ")
    assert _error_of(answer) == f"request headers are over the limit of {DEFAULT_MAX_HEADER_BYTES} bytes"


def test_unsupported_transfer_encoding_is_a_400_not_a_501(server):
    request = f"POST {rest_cases.PREDICT} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n".encode()
    answer = _exchange(server.port, request)
    assert answer.startswith(b"HTTP/1.1 400 ") and "Transfer-Encoding" in _error_of(answer)


def test_a_thousand_stalled_connections_do_not_delay_a_normal_request(tiny_model_base):
    """1,000 clients trickle their headers a line at a time; a normal request is not held up behind them
    (a thread per connection once made the next request wait 23.8 s). The bound is loose because the
    test's own 1,000 sends share the machine's cores with the server. This server's header deadline is
    long, so that on a busy machine the stalled clients are still inside it while the test trickles: the
    deadline has its own test below, and a client it dropped would only break this test's pipe."""
    server = _start(tiny_model_base, request_timeout=120.0, max_body_bytes=MAX_BODY, max_connections=1500)
    stalled = []
    try:
        for _ in range(1000):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            sock.sendall(f"POST {rest_cases.PREDICT} HTTP/1.1\r\n".encode())
            stalled.append(sock)
        for step in range(3):
            for sock in stalled:
                sock.sendall(f"X-Trickle-{step}: 1\r\n".encode())
            assert _timed_predict(server) < 5.0
            time.sleep(0.2)
    finally:
        for sock in stalled:
            sock.close()
        server.stop()


def test_trickled_headers_are_cut_off_at_the_deadline(server):
    """A client sending a header line every 0.4 s (each read is quick) is answered 408 and dropped
    once the header deadline passes, not kept for as long as it keeps trickling."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        started = time.monotonic()
        sock.sendall(f"POST {rest_cases.PREDICT} HTTP/1.1\r\n".encode())
        closed = False
        for step in range(int(3 * TIMEOUT / 0.4)):
            time.sleep(0.4)
            try:
                sock.sendall(f"X-Trickle-{step}: 1\r\n".encode())
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
        answer = _read_all(sock)
        elapsed = time.monotonic() - started
    assert closed or answer, "the connection outlived three header deadlines"
    assert elapsed < TIMEOUT + 1.5
    assert answer.startswith(b"HTTP/1.1 408 ") and "headers not received within" in _error_of(answer)


def test_trickled_body_is_cut_off_at_the_deadline(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        started = time.monotonic()
        sock.sendall(f"POST {rest_cases.PREDICT} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n".encode())
        for _ in range(int(3 * TIMEOUT / 0.4)):
            time.sleep(0.4)
            try:
                sock.sendall(b" ")
            except (BrokenPipeError, ConnectionResetError):
                break
        answer = _read_all(sock)
        elapsed = time.monotonic() - started
    assert elapsed < TIMEOUT + 1.5
    assert answer.startswith(b"HTTP/1.1 408 ") and "body not received within" in _error_of(answer)


def test_body_over_the_limit_is_a_413_and_never_parsed(server):
    """A JSON body of ~10,000 tokens over the size limit, sent whole before the answer is read: the
    client gets the 413 (the body is discarded unparsed), not a reset connection."""
    body = json.dumps({"instances": [["w"] * 10000] * 2}).encode()
    assert len(body) > MAX_BODY
    status, answer = rest_cases.request(server.url, "POST", rest_cases.PREDICT, body)
    assert status == 413
    assert answer == {"error": f"request body of {len(body)} bytes is over the limit of {MAX_BODY} bytes "
                               "(--max_request_bytes)"}


def test_body_over_the_limit_awaiting_100_continue_is_refused_unsent(server):
    request = (f"POST {rest_cases.PREDICT} HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY + 1}\r\n"
               "Expect: 100-continue\r\n\r\n").encode()
    answer = _exchange(server.port, request)
    assert answer.startswith(b"HTTP/1.1 413 ") and b"100 Continue" not in answer


def test_chunked_body_over_the_limit_is_a_413(server):
    head = f"POST {rest_cases.PREDICT} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
    chunk = b"a" * 16384
    chunks = b"".join(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n" for _ in range(MAX_BODY // len(chunk) + 2))
    answer = _exchange(server.port, head + chunks + b"0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert f"over the limit of {MAX_BODY} bytes" in _error_of(answer)
    assert _timed_predict(server) < 5


def test_connections_over_the_limit_are_answered_503_until_one_closes(tiny_model_base):
    server = _start(tiny_model_base, max_connections=20)
    held = []
    try:
        for _ in range(20):
            held.append(socket.create_connection(("127.0.0.1", server.port), timeout=10))
        time.sleep(0.3)  # let the server accept them
        answer = _exchange(server.port, f"GET /v1/models/{rest_cases.MODEL} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert answer.startswith(b"HTTP/1.1 503 ") and "limit of 20 open connections" in _error_of(answer)
        held.pop().close()
        time.sleep(0.3)
        assert _timed_predict(server) < 5
    finally:
        for sock in held:
            sock.close()
        server.stop()


def test_a_slow_prediction_does_not_hold_up_other_connections(tiny_model_base):
    """Prediction runs in the thread pool: while one request is stuck in the model, status requests on
    other connections are answered at once."""
    server = _start(tiny_model_base, num_threads=2)
    release = threading.Event()
    service = server.service
    original = service.predict

    def blocked_predict(*args, **kwargs):
        release.wait(30)
        return original(*args, **kwargs)

    service.predict = blocked_predict
    slow = threading.Thread(target=rest_cases.request, args=(server.url, "POST", rest_cases.PREDICT,
                                                             {"instances": [rest_cases.SENT_A]}))
    try:
        slow.start()
        time.sleep(0.3)
        started = time.monotonic()
        status, _ = rest_cases.request(server.url, "GET", f"/v1/models/{rest_cases.MODEL}", timeout=10)
        assert status == 200 and time.monotonic() - started < 1.0
        assert slow.is_alive()
    finally:
        release.set()
        slow.join(30)
        server.stop()


def test_keep_alive_answers_are_not_held_back_by_nagle(server):
    """Headers and body go out as two writes: without TCP_NODELAY every keep-alive answer after the
    first waits ~40 ms for the client's delayed ACK."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        times = []
        for _ in range(11):
            started = time.perf_counter()
            conn.request("GET", f"/v1/models/{rest_cases.MODEL}")
            conn.getresponse().read()
            times.append(time.perf_counter() - started)
    finally:
        conn.close()
    assert sorted(times)[len(times) // 2] < 0.030, times


def test_transfer_encoding_beside_content_length_is_refused_and_the_connection_closed(server):
    """h11 frames such a request by Transfer-Encoding; a proxy may have framed it by Content-Length, so
    the bytes after the body could be read as a second request (RFC 9112 §6.1: close the connection)."""
    body = json.dumps({"instances": [rest_cases.SENT_A]}).encode()
    chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    smuggled = f"GET /v1/models/{rest_cases.MODEL} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    request = (f"POST {rest_cases.PREDICT} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(chunked)}\r\n"
               "Transfer-Encoding: chunked\r\n\r\n").encode() + chunked + smuggled
    answer = _exchange(server.port, request)  # returns once the server closes the connection
    assert answer.startswith(b"HTTP/1.1 400 ") and answer.count(b"HTTP/1.1 ") == 1, answer
    assert b"connection: close" in answer.lower()
    assert _error_of(answer) == ("Invalid HTTP request: Transfer-Encoding and Content-Length are both given, so the "
                                 "body could be framed two ways; send one of them (RFC 9112 section 6.1)")


@pytest.mark.parametrize("size", [17 * 1024, 100 * 1024])
def test_a_header_block_over_the_limit_arriving_whole_is_a_431(server, size):
    """h11 bounds a header block only while it is incomplete; one sent in a single write was parsed."""
    from export.rest_server import DEFAULT_MAX_HEADER_BYTES

    head = f"GET /v1/models/{rest_cases.MODEL} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n".encode()
    request = head + b"X-Pad: " + b"a" * (size - len(head) - 11) + b"\r\n\r\n"
    assert len(request) == size
    answer = _exchange(server.port, request)
    assert answer.startswith(b"HTTP/1.1 431 ")
    assert _error_of(answer) == f"request headers are over the limit of {DEFAULT_MAX_HEADER_BYTES} bytes"


def test_a_header_block_just_under_the_limit_is_answered(server):
    head = f"GET /v1/models/{rest_cases.MODEL} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n".encode()
    request = head + b"X-Pad: " + b"a" * (16 * 1024 - len(head) - 11) + b"\r\n\r\n"
    assert len(request) == 16 * 1024
    assert _exchange(server.port, request).startswith(b"HTTP/1.1 200 ")
