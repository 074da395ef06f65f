"""The TensorFlow-Serving-compatible REST server, over real HTTP on a free 127.0.0.1 port.

The shared request suite (``rest_cases.py``: both formats, all signatures, metadata, status,
versions and every error case) runs against a server started in a thread; further tests cover
concurrency, keep-alive after errors, a 1,000-request soak, chunked bodies, the JSON conversions and
the ``serve`` command.
"""

from __future__ import annotations

import http.client
import json
import os
import pathlib
import random
import socket
import subprocess
import sys
import threading

import numpy as np
import pytest

from data_pipeline.errors import DataFormatError
from tests.export import rest_cases

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server(tiny_model_base):
    from export import rest_server

    warnings: list = []
    srv = rest_server.make_server(rest_cases.MODEL, tiny_model_base, port=0, warn=warnings.append, num_versions=2)
    srv.start_in_thread()
    yield srv
    srv.stop()


@pytest.mark.parametrize("case", rest_cases.all_cases(), ids=lambda c: c.name)
def test_request_suite(server, case):
    rest_cases.run_case(server.url, case, kind="own")


def test_binds_localhost_by_default(server):
    assert server.server_address[0] == "127.0.0.1"


def _keepalive_request(conn: http.client.HTTPConnection, method: str, path: str, body=None) -> tuple:
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode("utf-8"))
    headers = {"Content-Type": "application/json"}
    if data is not None:
        headers["Content-Length"] = str(len(data))
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    return response.status, json.loads(response.read().decode("utf-8"))


def test_keeps_answering_on_one_connection_after_errors(server):
    """Every error answer leaves the keep-alive connection usable for the next request."""
    good = {"instances": [rest_cases.SENT_A]}
    expected = {"predictions": [rest_cases.token_row(rest_cases.SENT_A, 0.5)]}
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        for case in rest_cases.bad_cases():
            status, answer = _keepalive_request(conn, case.method, case.path, case.body)
            assert status == case.status and "error" in answer, case.name
            status, answer = _keepalive_request(conn, "POST", rest_cases.PREDICT, good)
            assert (status, answer) == (200, expected), f"after {case.name}"
    finally:
        conn.close()


def test_chunked_request_body(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        body = json.dumps({"signature_name": "sentences", "instances": ["a b", "c d e"]}).encode()
        conn.request("POST", rest_cases.PREDICT, body=iter([body[:7], body[7:]]),
                     headers={"Content-Type": "application/json"}, encode_chunked=True)
        response = conn.getresponse()
        assert (response.status, json.loads(response.read())) == (200, {"predictions": [2, 3]})
    finally:
        conn.close()


def _raw_exchange(port: int, data: bytes, close_write: bool = False) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(data)
        if close_write:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def test_oversized_truncated_and_unframed_bodies(server):
    """413 for a body over the limit, silence for a body cut short, 4xx for a bad length, unknown
    methods and protocol versions; the server keeps serving afterwards."""
    head = f"POST {rest_cases.PREDICT} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n".encode()
    answer = _raw_exchange(server.port, head + b"Content-Length: 999999999999\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 413") and b'"error"' in answer
    assert _raw_exchange(server.port, head + b"Content-Length: 100\r\n\r\n{\"inst", close_write=True) == b""
    answer = _raw_exchange(server.port, head + b"Content-Length: -3\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400") and b"Content-Length" in answer
    for line in (b"OPTIONS /v1/models/tiny HTTP/1.1", b"BREW /v1/models/tiny HTTP/1.1", b"GET /v1/models/tiny HTTP/7.1",
                 b"GET"):
        answer = _raw_exchange(server.port, line + b"\r\nHost: x\r\nConnection: close\r\n\r\n")
        # (an unusable HTTP version is answered HTTP/0.9-style by the stdlib: a bare body, no status line)
        status_line = answer.split(b"\r\n", 1)[0]
        assert b" 5" not in status_line and b'"error"' in answer, (line, answer)
        assert not status_line.startswith(b"HTTP/") or status_line.split(b" ")[1] in (b"400", b"404"), answer
    status, answer = rest_cases.request(server.url, "POST", rest_cases.PREDICT, {"instances": [rest_cases.SENT_B]})
    assert (status, answer) == (200, {"predictions": [rest_cases.token_row(rest_cases.SENT_B, 0.5)]})


def _sentence(client: int, step: int) -> list:
    words = [f"w{client}x{step}", "and", "z" * (client + 1), f"q{step}"]
    return words[: 2 + (client + step) % 3] + [""] * (4 - (2 + (client + step) % 3))


def test_eight_concurrent_clients_get_their_own_answers(server):
    """8 threads, each on its own connection, each checks the answer matches its own sentence."""
    failures: list = []

    def client(index: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        try:
            for step in range(6):
                tokens = _sentence(index, step)
                signature = "with_parse" if step % 2 else "serving_default"
                instance = {"tokens": tokens}
                if signature == "with_parse":
                    instance["parse_heads"] = [0 if i == 0 else (1 if t else -1) for i, t in enumerate(tokens)]
                status, answer = _keepalive_request(conn, "POST", rest_cases.PREDICT,
                                                    {"signature_name": signature, "instances": [instance]})
                row = answer["predictions"][0] if status == 200 else answer
                want = rest_cases.token_row(tokens, 0.5)
                if status != 200 or any(row[k] != v for k, v in want.items()):
                    failures.append((index, step, status, row))
        except Exception as error:  # noqa: BLE001 - report, the main thread asserts
            failures.append((index, repr(error)))
        finally:
            conn.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert failures == []


def test_soak_1000_mixed_requests(server):
    """1,000 good and bad requests from 4 clients: no 5xx, every bad one a 4xx with a message."""
    cases = rest_cases.all_cases()
    rng = random.Random(2018)
    plan = [rng.choice(cases) for _ in range(1000)]
    results: list = []
    lock = threading.Lock()

    def client(part: list) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        local = []
        try:
            for case in part:
                status, answer = _keepalive_request(conn, case.method, case.path, case.body)
                if status >= 400 and not (isinstance(answer, dict) and str(answer.get("error", "")).strip()):
                    local.append((case, status, "no error message"))
                elif status != case.status:
                    local.append((case, status, answer))
                elif case.expect is not None and answer != case.expect:
                    local.append((case, status, answer))
                else:
                    local.append((case, status, None))
        finally:
            conn.close()
            with lock:
                results.extend(local)

    threads = [threading.Thread(target=client, args=(plan[i::4],)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert len(results) == 1000
    assert [r for r in results if r[1] >= 500] == []
    assert [r for r in results if r[2] is not None] == []
    bad = [r for r in results if r[0].is_error]
    good = [r for r in results if not r[0].is_error]
    assert len(bad) > 300 and len(good) > 200  # a real mix
    assert all(400 <= status < 500 for _, status, _ in bad)


# --------------------------------------------------------------------------------------------------
# JSON conversion units
# --------------------------------------------------------------------------------------------------


def test_float32_outputs_use_shortest_round_trip_text():
    from export.serving_codec import outputs_to_json

    values = np.array([0.1, 1.0, 3.3, float("nan")], dtype=np.float32)
    text = json.dumps(outputs_to_json({"p": values}, "columnar"))
    assert text == '{"outputs": [0.1, 1.0, 3.3, NaN]}'
    assert json.dumps(outputs_to_json({"d": np.array([0.1], dtype=np.float64)}, "columnar")) == '{"outputs": [0.1]}'


def test_string_outputs_utf8_or_b64():
    from export.serving_codec import array_to_json

    array = np.array([["é".encode(), b"\xff\x00"]], dtype=object)
    assert array_to_json("words", array) == [["é", {"b64": "/wA="}]]
    assert array_to_json("words_bytes", array) == [[{"b64": "w6k="}, {"b64": "/wA="}]]


def test_row_outputs_need_one_batch_size():
    from export.serving_codec import BadRequest, outputs_to_json

    with pytest.raises(BadRequest, match="inconsistent batch size"):
        outputs_to_json({"a": np.zeros([2]), "b": np.zeros([3])}, "row")
    assert outputs_to_json({"a": np.zeros([2]), "b": np.zeros([3])}, "columnar") == {
        "outputs": {"a": [0.0, 0.0], "b": [0.0, 0.0, 0.0]}}


def test_json_to_array_dtypes_and_limits():
    from export.serving_codec import BadRequest, InputSpec, json_to_array

    floats = json_to_array([[1, 2.5, float("inf")]], InputSpec("x", "DT_FLOAT", (None, None)))
    assert floats.dtype == np.float32 and floats.shape == (1, 3) and floats[0, 1] == 2.5
    with pytest.raises(BadRequest, match="without loss of precision"):
        json_to_array([2**24 + 1], InputSpec("x", "DT_FLOAT", (None,)))
    assert json_to_array([2**40], InputSpec("x", "DT_INT64", (None,))).tolist() == [2**40]
    assert json_to_array([True, False], InputSpec("x", "DT_BOOL", (None,))).tolist() == [True, False]
    with pytest.raises(BadRequest, match="expected type: bool"):
        json_to_array([1], InputSpec("x", "DT_BOOL", (None,)))
    with pytest.raises(BadRequest, match="does not support"):
        json_to_array([1], InputSpec("x", "DT_HALF", (None,)))
    assert json_to_array([], InputSpec("x", "DT_STRING", (None,))).shape == (0,)


def test_graph_errors_become_one_line_in_the_models_words(tiny_model_base):
    """The tiny model's own assertion, raised by TensorFlow with node names and a condition dump,
    is reported as its message alone; an error without a message names only the signature."""
    import tensorflow as tf

    from export.request_limits import graph_error_message

    with_parse = tf.saved_model.load(str(tiny_model_base / "2")).signatures["with_parse"]
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        with_parse(tokens=tf.constant([["a", "b"]]), parse_heads=tf.constant([[2, 7]], tf.int32))
    assert "assertion failed" in info.value.message
    message = graph_error_message("with_parse", info.value.message)
    assert message == "signature 'with_parse' refused the inputs: head index beyond the sentence"
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        with_parse(tokens=tf.constant([["a", "b"]]), parse_heads=tf.constant([[2, 0, 0]], tf.int32))
    message = graph_error_message("with_parse", info.value.message)
    assert message in ("signature 'with_parse' refused the inputs: parse_heads must have one head per token",
                       "signature 'with_parse' could not run on these inputs (shapes or values it does not accept)")
    assert not any(fragment in message for fragment in rest_cases.TF_INTERNALS)


def test_find_versions_counts_what_it_skips(tmp_path):
    from export.model_versions import find_versions

    for name in ("1", "3", "notes"):
        (tmp_path / name).mkdir()
    (tmp_path / "1" / "saved_model.pb").write_bytes(b"")
    warnings: list = []
    assert find_versions(tmp_path, warn=warnings.append) == {1: tmp_path / "1"}
    assert len(warnings) == 1 and "1 numeric directory" in warnings[0] and ": 3" in warnings[0]
    with pytest.raises(DataFormatError, match="expected numeric version directories"):
        find_versions(tmp_path / "notes")
    with pytest.raises(DataFormatError, match="no such directory"):
        find_versions(tmp_path / "missing")


# --------------------------------------------------------------------------------------------------
# The command
# --------------------------------------------------------------------------------------------------


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def _serve(base, *flags: str) -> tuple:
    """Start ``python -m lisa_tf serve`` on a free port; returns ``(process, URL line's URL or None)``."""
    process = subprocess.Popen(
        [sys.executable, "-m", "lisa_tf", "serve", "--model_name", rest_cases.MODEL,
         "--model_base_path", str(base), "--rest_api_port", "0", *flags],
        cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(5):
        line = process.stdout.readline()
        if "REST API at " in line:
            return process, line.split("REST API at ", 1)[1].strip()
    return process, None


def test_serve_command_prints_url_and_answers(tiny_model_base):
    process, url = _serve(tiny_model_base)
    try:
        assert url is not None and url.startswith("http://127.0.0.1:") and url.endswith(f"/v1/models/{rest_cases.MODEL}")
        assert not url.startswith("http://127.0.0.1:0/")
        base = url.rsplit("/v1/", 1)[0]
        status, answer = rest_cases.request(base, "POST", rest_cases.PREDICT,
                                            {"signature_name": "sentences", "inputs": ["one two"]})
        assert (status, answer) == (200, {"outputs": [2]})
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert process.returncode == 0


def test_serve_command_reports_a_bad_base_path(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "lisa_tf", "serve", "--model_name", "x", "--model_base_path",
         str(tmp_path / "none"), "--rest_api_port", "0"],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "error:" in result.stderr and "no such directory" in result.stderr


def test_serve_command_skips_a_corrupt_version_and_applies_its_limit_flags(tiny_model_base, tmp_path):
    """``2/`` holds a corrupt ``saved_model.pb`` beside a good ``1/``: the command starts, warns once
    naming ``2/``, serves version 1, and refuses a sentence over ``--max_tokens_per_sentence`` and a
    request over ``--max_token_pairs_per_request``."""
    import shutil

    base = tmp_path / rest_cases.MODEL
    shutil.copytree(tiny_model_base / "1", base / "1")
    (base / "2").mkdir()
    (base / "2" / "saved_model.pb").write_bytes(b"\xff not a proto \xff" * 4)
    process, url = _serve(base, "--max_tokens_per_sentence", "3", "--max_token_pairs_per_request", "17",
                          "--file_system_poll_wait_seconds", "0")
    try:
        assert url is not None
        url = url.rsplit("/v1/", 1)[0]
        status, answer = rest_cases.request(url, "POST", rest_cases.PREDICT, {"instances": [["a", "b", ""]]})
        assert status == 200 and answer["predictions"][0]["scaled_length"] == 0.5  # version 1: 2 * 0.25
        status, answer = rest_cases.request(url, "POST", rest_cases.PREDICT, {"instances": [["a", "b", "c", "d"]]})
        assert status == 400 and answer["error"].endswith("4 is over the limit of 3 (--max_tokens_per_sentence)")
        status, answer = rest_cases.request(url, "POST", rest_cases.PREDICT, {"instances": [["a", "b", "c"]] * 2})
        assert status == 400 and answer["error"].endswith("18 is over the limit of 17 (--max_token_pairs_per_request)")
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    warnings = [line for line in stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [line for line in warnings if f"version 2 at {base / '2'} failed to load" in line]
    assert len(warnings) == 1 and "Traceback" not in stderr
