"""``serve`` on a port another server holds, or on a number that is no TCP port: one ``error:`` line
naming the flag and the port, exit status 2, before the model is loaded."""

from __future__ import annotations

import socket
import types

import pytest

from tests.export.conftest import MODEL_NAME
from tests.test_cli_errors import one_error


def _in_use(flag: str, port: int) -> str:
    return (f"error: {flag} {port}: cannot listen on 127.0.0.1:{port}: already in use; stop the server that holds it "
            f"or choose another port ({flag} 0 picks a free one)")


@pytest.fixture
def held_port():
    """A port that a listening socket on 127.0.0.1 holds for the test."""
    with socket.create_server(("127.0.0.1", 0)) as held:
        yield held.getsockname()[1]


def test_serve_on_a_rest_port_in_use(capsys, tiny_model_base, held_port):
    line = one_error(capsys, ["serve", "--model_name", MODEL_NAME, "--model_base_path", tiny_model_base,
                              "--rest_api_port", held_port])
    assert line == _in_use("--rest_api_port", held_port)


def test_serve_on_a_grpc_port_in_use(capsys, tiny_model_base, held_port):
    line = one_error(capsys, ["serve", "--model_name", MODEL_NAME, "--model_base_path", tiny_model_base,
                              "--rest_api_port", 0, "--port", held_port])
    assert line == _in_use("--port", held_port)


def test_servers_taken_after_the_check_name_the_flag_too(held_port):
    from export.grpc_server import GrpcServer
    from export.rest_server import PortError, RestServer

    with pytest.raises(PortError) as error:
        RestServer(types.SimpleNamespace(), "127.0.0.1", held_port)
    assert f"error: {error.value}" == _in_use("--rest_api_port", held_port)
    with pytest.raises(PortError) as error:
        GrpcServer(types.SimpleNamespace(batcher=None), "127.0.0.1", held_port)
    assert f"error: {error.value}" == _in_use("--port", held_port)


def test_serve_with_one_port_for_both_apis(capsys, tiny_model_base):
    line = one_error(capsys, ["serve", "--model_name", MODEL_NAME, "--model_base_path", tiny_model_base,
                              "--rest_api_port", 8501, "--port", 8501])
    assert line == "error: --port 8501: the same port as --rest_api_port; the gRPC and REST APIs need a port each"


@pytest.mark.parametrize("flags, flag, port", [
    (["--rest_api_port", 70000], "--rest_api_port", 70000),
    (["--rest_api_port", -1], "--rest_api_port", -1),
    (["--rest_api_port", 0, "--port", 65536], "--port", 65536),
])
def test_serve_on_a_number_that_is_no_port(capsys, tiny_model_base, flags, flag, port):
    """``socket`` refuses such a number with an OverflowError: a traceback, not one line."""
    line = one_error(capsys, ["serve", "--model_name", MODEL_NAME, "--model_base_path", tiny_model_base, *flags])
    assert line == f"error: {flag} {port}: expected a TCP port number from 0 to 65535 (0 picks a free one)"
