"""The shared REST request suite against the reference ``tensorflow_model_server``.

Runs every case of ``rest_cases.py`` that the reference server is expected to answer the same way
(cases marked ``own_only`` say why they are left out; ``real_status`` records where the status
differs by design), so the answers this project's server gives can be compared with TensorFlow
Serving's own. The binary is started exactly as a user would start it::

    tensorflow_model_server --port=GRPC --rest_api_port=REST --model_name=tiny --model_base_path=.../tiny

Skips, with the reason, when ``tensorflow_model_server`` is not on ``PATH`` (it is not pip-installable;
see TensorFlow Serving's install guide or its Docker image ``tensorflow/serving``).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

import pytest

from tests.export import rest_cases

BINARY = shutil.which("tensorflow_model_server")
START_TIMEOUT_SECONDS = 120

pytestmark = pytest.mark.skipif(
    BINARY is None,
    reason="tensorflow_model_server is not on PATH (install TensorFlow Serving's model server or run the "
           "tensorflow/serving Docker image to compare answers with the reference server)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _ready(url: str) -> bool:
    try:
        status, answer = rest_cases.request(url, "GET", f"/v1/models/{rest_cases.MODEL}", timeout=2)
    except OSError:
        return False
    if status != 200:
        return False
    states = [entry.get("state") for entry in answer.get("model_version_status", [])]
    return bool(states) and all(state == "AVAILABLE" for state in states)


@pytest.fixture(scope="module")
def reference_server(tiny_model_base, tmp_path_factory):
    """Base URL of a running ``tensorflow_model_server`` serving the tiny model."""
    rest_port, grpc_port = _free_port(), _free_port()
    log_path = tmp_path_factory.mktemp("tensorflow_model_server") / "server.log"
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen(
            [BINARY, f"--port={grpc_port}", f"--rest_api_port={rest_port}",
             f"--model_name={rest_cases.MODEL}", f"--model_base_path={tiny_model_base.resolve()}"],
            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{rest_port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not _ready(url):
            if process.poll() is not None:
                pytest.fail(f"tensorflow_model_server exited with code {process.returncode}:\n"
                            f"{log_path.read_text(encoding='utf-8')[-3000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"tensorflow_model_server did not report the model AVAILABLE within "
                            f"{START_TIMEOUT_SECONDS} s:\n{log_path.read_text(encoding='utf-8')[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


@pytest.mark.parametrize("case", [c for c in rest_cases.all_cases() if c.own_only is None], ids=lambda c: c.name)
def test_reference_server_answers_the_suite(reference_server, case):
    rest_cases.run_case(reference_server, case, kind="real")


def test_reference_server_keeps_answering_after_errors(reference_server):
    for case in rest_cases.bad_cases():
        if case.own_only is None:
            status, _ = rest_cases.request(reference_server, case.method, case.path, case.body)
            assert status < 500, case.name
    status, answer = rest_cases.request(reference_server, "POST", rest_cases.PREDICT,
                                        {"instances": [rest_cases.SENT_A]})
    assert (status, answer) == (200, {"predictions": [rest_cases.token_row(rest_cases.SENT_A, 0.5)]})
