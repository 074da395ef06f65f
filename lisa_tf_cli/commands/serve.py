"""``python -m lisa_tf serve --model_name NAME --model_base_path DIR/NAME --rest_api_port PORT``.

Serves an exported model over TensorFlow Serving's REST API (see :mod:`export.rest_server`), and its
gRPC API with ``--port`` (:mod:`export.grpc_server`). The
flags are named as ``tensorflow_model_server``'s, so the same command line works with either server::

    python -m lisa_tf serve --model_name srl --model_base_path exports/srl --rest_api_port 8501
    curl http://127.0.0.1:8501/v1/models/srl
    curl -d '{"instances": [["The", "cat", "sat", "."]]}' http://127.0.0.1:8501/v1/models/srl:predict

A SavedModel is a program: loading one runs its graph, which can read and write files. Serve only
model directories you trust, and keep others from writing into ``--model_base_path`` (every new
version directory there is loaded).

A packaged model or a trained run directory (its best weights) given as ``--model_base_path`` is
served from its SavedModel export, built on the first start into a cache that later starts reuse
(:mod:`lisa_tf.packages.export_cache`)::

    python -m lisa_tf serve --model_name mine --model_base_path runs/mine --rest_api_port 8501

The highest numeric version directory under ``--model_base_path`` is served (``--num_versions``
for more), and the directory is polled every ``--file_system_poll_wait_seconds`` for new versions,
which replace the old once loaded; a version that fails to load is logged once and skipped. Requests
without ``/versions/V`` use the highest available. Limits (request size, tokens, connections,
deadlines) are flags too; over a limit the answer is a 400/408/413/503 naming it. When the server is
ready it prints its URL (with the chosen port when ``--rest_api_port 0`` asks for a free one) and
the URL of the demo page it answers at ``/`` (:mod:`export.demo`); it stops on Ctrl-C or SIGTERM. ``--enable_batching`` (or ``--batching_parameters_file``)
joins concurrent requests into shared model calls (:mod:`export.batching`).
"""

from __future__ import annotations

import argparse
import signal
import sys

HELP = "serve an exported SavedModel over TensorFlow Serving's REST API (flags as tensorflow_model_server's)"


def _positive(text: str) -> int:
    """A whole number >= 1 (limits and counts)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, found {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, found {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``tensorflow_model_server``-style flags (``--flag value`` or ``--flag=value``)."""
    parser.add_argument("--model_name", default="srl", help="the NAME in /v1/models/NAME (default srl)")
    parser.add_argument("--model_base_path", default=None,
                        help="directory holding numeric version directories (1/, 2/, ...) of SavedModels, or a "
                             "packaged model or a trained run directory (its best weights), whose export is built on "
                             "first start into a cache that later starts reuse (default: the shipped model called --model_name, models/NAME); a SavedModel is a "
                             "program that runs when loaded: serve only directories you trust, and let no one else "
                             "write to them")
    parser.add_argument("--port", type=int, default=None,
                        help="TCP port of the gRPC API (TensorFlow Serving's PredictionService and ModelService; "
                             "off unless given, 0 picks a free port and prints it)")
    parser.add_argument("--rest_api_port", type=int, default=8501,
                        help="TCP port of the REST API (default 8501; 0 picks a free port and prints it)")
    parser.add_argument("--file_system_poll_wait_seconds", type=float, default=1.0,
                        help="seconds between polls of --model_base_path for new versions (default 1; 0 loads "
                             "the versions present at start only)")
    parser.add_argument("--num_versions", type=_positive, default=1,
                        help="serve the N highest versions (TensorFlow Serving's latest{num_versions} policy; "
                             "default 1)")
    parser.add_argument("--rest_api_host", default="127.0.0.1",
                        help="interface to bind (default 127.0.0.1; 0.0.0.0 exposes the API on the network)")
    parser.add_argument("--max_request_bytes", type=_positive, default=None,
                        help="refuse larger request bodies with 413 (default 8 MiB)")
    parser.add_argument("--rest_api_timeout_in_ms", type=_positive, default=None,
                        help="deadline for a request's headers, and then for its body (default 30000); "
                             "a client slower than this is answered 408 and disconnected")
    parser.add_argument("--rest_api_num_threads", type=_positive, default=None,
                        help="threads running requests (JSON and the model; default: the number of CPUs)")
    parser.add_argument("--rest_api_max_connections", type=_positive, default=None,
                        help="open connections held at once; more are answered 503 (default 1000)")
    parser.add_argument("--max_tokens_per_sentence", type=_positive, default=None,
                        help="refuse longer sentences with 400 (default: the longest training sentence, from the "
                             "export's assets/vocab_info.json; else the run's train.batch_tokens; else 512)")
    parser.add_argument("--max_tokens_per_request", type=_positive, default=None,
                        help="refuse requests whose sentences x padded width is larger, with 400 (default: the "
                             "run's train.batch_tokens, as a training batch; else 8192)")
    parser.add_argument("--max_sentences_per_request", type=_positive, default=None,
                        help="refuse requests with more sentences, with 400 (default 256)")
    parser.add_argument("--max_token_pairs_per_request", type=_positive, default=None,
                        help="refuse requests whose sentences x padded width x padded width is larger, with 400: "
                             "the size of the per-predicate outputs when every token is a predicate, which the "
                             "token limits do not bound (default: the larger of the longest sentence squared and "
                             "--max_tokens_per_request x 48)")
    parser.add_argument("--max_characters_per_token", type=_positive, default=None,
                        help="refuse requests holding a longer token (in characters), with 400: a contextual "
                             "encoder cuts each token into word pieces before the other limits count anything "
                             "(default: the longest training token, from the export's assets/vocab_info.json; "
                             "else 512, the most characters of a word the encoder reads)")
    parser.add_argument("--max_word_pieces_per_request", type=_positive, default=None,
                        help="refuse requests whose sentences x widest sentence's word pieces (a contextual "
                             "encoder's input, counted with its own word pieces) is larger, with 400 (default: "
                             "3 per token of --max_tokens_per_request; models without an encoder count none)")
    parser.add_argument("--enable_batching", action="store_true",
                        help="join concurrent requests to one signature into shared model calls, padded to a "
                             "common width; each caller gets its own rows back")
    parser.add_argument("--batching_parameters_file", default=None,
                        help="BatchingParameters text proto (max_batch_size, batch_timeout_micros, "
                             "num_batch_threads, and max_batch_tokens: sentences x widest sentence per call); "
                             "implies --enable_batching")
    parser.add_argument("--log_requests", action="store_true", help="log one line per request to stderr")


def check(args: argparse.Namespace) -> None:
    """Before TensorFlow is imported: what ``--model_base_path`` names (without it, the shipped model
    called ``--model_name``) is a directory, so a mistyped name or path is reported before the seconds
    TensorFlow takes to load. A ``.keras`` file is no model base path: the message names the directory
    to give instead, or the export that makes one."""
    import pathlib

    from data_pipeline.errors import UserError
    from lisa_tf.packages.finding import KERAS_FILE, shipped_model

    if args.model_base_path is None:
        shipped_model(args.model_name, "--model_base_path")
        return
    path = pathlib.Path(args.model_base_path)
    if path.is_dir():
        return
    flag = f"--model_base_path {args.model_base_path}"
    expected = ("expected a directory of numeric version directories (1/, 2/, ...) holding SavedModels, a packaged "
                "model or a run directory")
    if not path.exists():
        raise UserError(f"{flag}: no such directory; {expected}")
    if path.suffix != ".keras":
        raise UserError(f"{flag}: a file, not a directory; {expected}")
    if path.name == KERAS_FILE:
        raise UserError(f"{flag}: a model file, not a directory; serve the packaged model or run directory that "
                        f"holds it (--model_base_path {path.parent}), whose export is built on the first start")
    raise UserError(f"{flag}: a model file, not a directory; serve the packaged model or run directory it comes "
                    "from, or export that (python -m lisa_tf export --run RUN --out EXPORTS/NAME/1) and serve "
                    "the export's base path (--model_base_path EXPORTS/NAME)")


def run(args: argparse.Namespace) -> int:
    """Load the model, print the URL, serve until interrupted."""
    from export import rest_server
    from export.batching import BatchingParameters, read_batching_parameters
    from export.request_limits import RequestLimits

    def warn(message: str) -> None:
        print(f"warning: {message}", file=sys.stderr, flush=True)

    kwargs = {"log_requests": args.log_requests, "num_threads": args.rest_api_num_threads}
    if args.max_request_bytes is not None:
        kwargs["max_body_bytes"] = args.max_request_bytes
    if args.rest_api_timeout_in_ms is not None:
        kwargs["request_timeout"] = args.rest_api_timeout_in_ms / 1000.0
    if args.rest_api_max_connections is not None:
        kwargs["max_connections"] = args.rest_api_max_connections
    batching = None
    if args.batching_parameters_file is not None:
        try:
            batching = read_batching_parameters(args.batching_parameters_file)
        except ValueError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    elif args.enable_batching:
        batching = BatchingParameters()
    # Both ports are checked before the model is loaded (which takes a while).
    if args.port and args.port == args.rest_api_port:
        raise rest_server.PortError(f"--port {args.port}: the same port as --rest_api_port; the gRPC and REST APIs "
                                    "need a port each")
    rest_server.check_port(args.rest_api_host, args.rest_api_port, "--rest_api_port")
    if args.port is not None:
        rest_server.check_port(args.rest_api_host, args.port, "--port")
    import pathlib

    from lisa_tf.packages.finding import KERAS_FILE, shipped_model

    if args.model_base_path is None:  # the shipped model called --model_name
        args.model_base_path = str(shipped_model(args.model_name, "--model_base_path"))
    if (pathlib.Path(args.model_base_path) / KERAS_FILE).is_file():
        # a package or a run: served from its export, built once (lisa_tf.packages.export_cache)
        from export.cache_build import build_export

        args.model_base_path = str(build_export(args.model_base_path, report=lambda line: print(line, flush=True)))
    limits = RequestLimits(args.max_tokens_per_sentence, args.max_tokens_per_request, args.max_sentences_per_request,
                           args.max_token_pairs_per_request, args.max_characters_per_token,
                           args.max_word_pieces_per_request)
    server = rest_server.make_server(args.model_name, args.model_base_path, args.rest_api_host,
                                     args.rest_api_port, warn=warn, limits=limits,
                                     num_versions=args.num_versions,
                                     poll_seconds=max(args.file_system_poll_wait_seconds, 0.0),
                                     batching=batching, **kwargs)
    service = server.service

    def stop(signum, frame):  # uvicorn stops gracefully on SIGTERM, then passes the signal on here
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    available = service.versions.available()
    versions = ", ".join(str(v) for v in available)
    signatures = ", ".join(sorted(available[service.latest].signatures))
    print(f"serving model '{service.model_name}' (versions {versions}; latest {service.latest}; "
          f"signatures {signatures})", flush=True)
    grpc_server = None
    if args.port is not None:
        from export.grpc_server import GrpcServer

        try:
            grpc_server = GrpcServer(service, args.rest_api_host, args.port,
                                     kwargs.get("max_body_bytes", rest_server.DEFAULT_MAX_BODY_BYTES),
                                     args.rest_api_num_threads).start()
        except rest_server.PortError:
            server.stop()  # taken since the check above: release the REST port and the model versions
            raise
        print(f"gRPC API at {grpc_server.target}", flush=True)
    print(f"REST API at {server.url}/v1/models/{service.model_name}", flush=True)
    print(f"demo page at {server.url}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        if grpc_server is not None:
            grpc_server.stop()
        service.versions.stop()
    return 0
