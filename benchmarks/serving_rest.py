"""REST and gRPC serving throughput of ``python -m lisa_tf serve`` on 127.0.0.1, against the raw SavedModel.

Starts the server as a separate process on free ports over ``MODEL_BASE_PATH`` (a TensorFlow Serving
model base path: numeric version directories of SavedModels), once without and once with
``--enable_batching``, and

1. sends ``--latency_requests`` one-sentence ``:predict`` requests one after another from a single
   keep-alive REST client and reports p50 / p95 / mean / max latency (first server only);
2. sends ``--throughput_requests`` of the same one-sentence request from each of ``--clients``
   concurrent client counts (1, 8 and 32 by default; REST clients each on their own keep-alive
   connection, gRPC clients through one ``tensorflow-serving-api`` channel) and reports requests/s;
3. calls the newest version's signature directly in this process (``tf.saved_model.load``) on the same
   one-sentence batch from the same numbers of threads: the raw SavedModel's requests/s, and each
   API's throughput as a ratio of it.

The request is built from the signature's metadata, so any exported model works: string ``[batch,
time]`` inputs get the sentence's tokens, string ``[batch]`` inputs the sentence, integer ``[batch,
time]`` inputs a parse (token 1 the root, every other token attached to it) and integer ``[batch]``
inputs ``--predicate_index``. The run is bounded by the request counts and stops by itself; the
server process is stopped at the end.

Prints a table and writes ``benchmarks/out/serving_rest.json``.
Run: ``PYTHONPATH=. python benchmarks/serving_rest.py MODEL_BASE_PATH|PACKAGE [--signature_name with_parse]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import platform
import subprocess
import sys
import threading
import time
from typing import Callable

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_SENTENCE = "The company said it would buy the remaining shares by the end of next year ."


def _start_server(model_name: str, base_path: pathlib.Path, timeout: float, *flags: str) -> tuple:
    """Start ``lisa_tf serve`` on a free port (with further ``flags``); returns ``(process, host, port)``
    once it is ready."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    process = subprocess.Popen(
        [sys.executable, "-m", "lisa_tf", "serve", "--model_name", model_name, "--model_base_path",
         str(base_path), "--rest_api_port", "0", *flags],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    found: dict = {}

    def read() -> None:
        for line in process.stdout:
            if "gRPC API at " in line:
                found["grpc"] = line.split("gRPC API at ", 1)[1].strip()
            if "REST API at http://" in line:
                address = line.split("http://", 1)[1].split("/", 1)[0]
                found["host"], found["port"] = address.rsplit(":", 1)
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    if "port" not in found:
        process.kill()
        process.wait()
        raise SystemExit(f"the server did not start within {timeout:.0f} s (exit code {process.returncode})")
    return process, found["host"], int(found["port"]), found.get("grpc")


def _instance(signature: dict, tokens: list, predicate_index: int) -> dict:
    """One request instance for ``signature`` (a metadata ``SignatureDef``) from a tokenised sentence."""
    instance = {}
    for name, info in signature["inputs"].items():
        rank = len(info["tensor_shape"]["dim"])
        dtype = info["dtype"]
        if dtype == "DT_STRING" and rank == 2:
            instance[name] = tokens
        elif dtype == "DT_STRING" and rank == 1:
            instance[name] = " ".join(tokens)
        elif dtype.startswith(("DT_INT", "DT_UINT")) and rank == 2:
            instance[name] = [0] + [1] * (len(tokens) - 1)
        elif dtype.startswith(("DT_INT", "DT_UINT")) and rank == 1:
            instance[name] = predicate_index
        else:
            raise SystemExit(f"cannot build a value for input '{name}' ({dtype}, rank {rank})")
    return instance


class _Client:
    """One keep-alive HTTP connection that times requests."""

    def __init__(self, host: str, port: int):
        self.connection = http.client.HTTPConnection(host, port, timeout=120)

    def get(self, path: str) -> dict:
        self.connection.request("GET", path)
        response = self.connection.getresponse()
        return json.loads(response.read())

    def post(self, path: str, body: bytes) -> tuple:
        start = time.perf_counter()
        self.connection.request("POST", path, body=body,
                                headers={"Content-Type": "application/json", "Content-Length": str(len(body))})
        response = self.connection.getresponse()
        payload = response.read()
        return response.status, time.perf_counter() - start, payload

    def close(self) -> None:
        self.connection.close()


def _latency_stats(seconds: list) -> dict:
    ms = np.asarray(seconds) * 1000.0
    return {"requests": int(ms.size), "p50_ms": round(float(np.percentile(ms, 50)), 3),
            "p95_ms": round(float(np.percentile(ms, 95)), 3), "mean_ms": round(float(ms.mean()), 3),
            "max_ms": round(float(ms.max()), 3)}


def _in_threads(target: Callable[[], None], count: int) -> float:
    """Run ``target`` in ``count`` threads at once; the wall seconds until all are done."""
    threads = [threading.Thread(target=target) for _ in range(count)]
    wall = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - wall


def _throughput(make_sender: Callable[[], tuple], clients: int, requests: int) -> dict:
    """``requests`` sends shared by ``clients`` threads, each with its own sender from ``make_sender()``
    (``(send, close)``; ``send()`` returns whether the answer was good)."""
    remaining = [requests]
    lock = threading.Lock()
    latencies: list = []
    failed = [0]

    def worker() -> None:
        send, close = make_sender()
        mine, bad = [], 0
        try:
            while True:
                with lock:
                    if remaining[0] == 0:
                        break
                    remaining[0] -= 1
                start = time.perf_counter()
                bad += not send()
                mine.append(time.perf_counter() - start)
        finally:
            close()
            with lock:
                latencies.extend(mine)
                failed[0] += bad

    wall = _in_threads(worker, clients)
    stats = _latency_stats(latencies)
    stats.update({"clients": clients, "seconds": round(wall, 3), "errors": failed[0],
                  "requests_per_second": round(len(latencies) / wall, 2)})
    return stats


def _rest_sender(host: str, port: int, path: str, body: bytes) -> Callable[[], tuple]:
    def make() -> tuple:
        client = _Client(host, port)
        return (lambda: client.post(path, body)[0] == 200), client.close
    return make


def _grpc_sender(target: str, model_name: str, signature_name: str, signature: dict, instance: dict) -> Callable[[], tuple]:
    """A ``tensorflow-serving-api`` client sending the instance as a batch of one."""
    import grpc
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

    request = predict_pb2.PredictRequest()
    request.model_spec.name = model_name
    request.model_spec.signature_name = signature_name
    for name, value in instance.items():
        dtype = tf.dtypes.as_dtype(signature["inputs"][name]["dtype"].lower().replace("dt_", ""))
        request.inputs[name].CopyFrom(tf.make_tensor_proto([value], dtype=dtype))
    channel = grpc.insecure_channel(target)
    stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)

    def make() -> tuple:
        return (lambda: len(stub.Predict(request, timeout=120).outputs) > 0), (lambda: None)
    return make


def _raw_sender(base_path: pathlib.Path, signature_name: str, signature: dict, instance: dict) -> Callable[[], tuple]:
    """The SavedModel's signature called directly in this process on the same one-sentence batch."""
    import tensorflow as tf

    from data_pipeline.version_names import parse_version

    newest = max((p for p in base_path.iterdir() if parse_version(p.name) is not None), key=lambda p: parse_version(p.name))
    function = tf.saved_model.load(str(newest)).signatures[signature_name]
    inputs = {name: tf.constant([value], dtype=tf.dtypes.as_dtype(signature["inputs"][name]["dtype"].lower()
                                                                   .replace("dt_", "")))
              for name, value in instance.items()}

    def make() -> tuple:
        return (lambda: all(v.numpy() is not None for v in function(**inputs).values())), (lambda: None)
    return make


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run(args: argparse.Namespace) -> dict:
    """Measure the raw SavedModel, then the server without and with batching; returns the result record."""
    from lisa_tf.packages.finding import is_package

    base_path = pathlib.Path(args.model_base_path).resolve()
    model_name = args.model_name or base_path.name
    if is_package(base_path):  # a packaged model: its cached export (lisa_tf.packages.export_cache)
        from export.cache_build import build_export

        base_path = build_export(base_path)
    tokens = args.sentence.split()
    path = f"/v1/models/{model_name}:predict"
    servers: dict = {}
    latency = None
    for batching in (False, True):
        start = time.perf_counter()
        flags = ["--port", "0"] + (["--enable_batching"] if batching else [])
        process, host, port, target = _start_server(model_name, base_path, args.start_timeout, *flags)
        startup_seconds = time.perf_counter() - start
        try:
            client = _Client(host, port)
            metadata = client.get(f"/v1/models/{model_name}/metadata")
            signatures = metadata["metadata"]["signature_def"]["signature_def"]
            if args.signature_name not in signatures:
                raise SystemExit(f"signature '{args.signature_name}' not in the model: {sorted(signatures)}")
            signature = signatures[args.signature_name]
            instance = _instance(signature, tokens, args.predicate_index)
            body = json.dumps({"signature_name": args.signature_name, "instances": [instance]}).encode("utf-8")
            status, _, payload = client.post(path, body)
            if status != 200:
                raise SystemExit(f"the first request failed with {status}: {payload[:500]!r}")
            for _ in range(args.warmup):
                client.post(path, body)
            if latency is None:
                seconds = [client.post(path, body)[1] for _ in range(args.latency_requests)]
                latency = _latency_stats(seconds)
            client.close()
            rest = _rest_sender(host, port, path, body)
            grpc_make = _grpc_sender(target, model_name, args.signature_name, signature, instance)
            servers["batching" if batching else "no_batching"] = {
                "server_startup_seconds": round(startup_seconds, 2),
                "rest": {n: _throughput(rest, n, args.throughput_requests) for n in args.clients},
                "grpc": {n: _throughput(grpc_make, n, args.throughput_requests) for n in args.clients},
            }
        finally:
            _stop(process)
    raw_make = _raw_sender(base_path, args.signature_name, signature, instance)
    _throughput(raw_make, 1, args.warmup)
    raw = {n: _throughput(raw_make, n, args.throughput_requests) for n in args.clients}
    for record in servers.values():
        record["ratio_to_raw"] = {
            api: {n: round(record[api][n]["requests_per_second"] / raw[n]["requests_per_second"], 3)
                  for n in args.clients} for api in ("rest", "grpc")}
    errors = sum(r[api][n]["errors"] for r in servers.values() for api in ("rest", "grpc") for n in args.clients)
    return {
        "model_base_path": str(base_path), "model_name": model_name,
        "version": metadata["model_spec"]["version"], "signature_name": args.signature_name,
        "tokens_per_request": len(tokens), "sentence": args.sentence,
        "single_client_latency": latency, "raw_saved_model": raw, "servers": servers, "errors": errors,
        "host": "127.0.0.1", "cpu_count": os.cpu_count(), "python": platform.python_version(),
    }


def main(argv=None) -> int:
    """Parse arguments, run, print and write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_base_path", help="directory of numeric SavedModel version directories")
    parser.add_argument("--model_name", default=None, help="model name (default: the base path's folder name)")
    parser.add_argument("--signature_name", default="serving_default")
    parser.add_argument("--sentence", default=DEFAULT_SENTENCE, help="whitespace-tokenised sentence to send")
    parser.add_argument("--predicate_index", type=int, default=2, help="value for integer [batch] inputs")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--latency_requests", type=int, default=200)
    parser.add_argument("--throughput_requests", type=int, default=400, help="requests per measurement")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32], help="concurrent clients to measure")
    parser.add_argument("--start_timeout", type=float, default=300.0, help="seconds to wait for the server")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "serving_rest.json"))
    args = parser.parse_args(argv)

    result = run(args)
    latency = result["single_client_latency"]
    print(f"model {result['model_name']} v{result['version']} signature {result['signature_name']}, "
          f"{result['tokens_per_request']} tokens per request; 1 client sequential over REST: p50 "
          f"{latency['p50_ms']} ms, p95 {latency['p95_ms']} ms")
    print(f"{'':26}" + "".join(f"{str(n) + ' clients req/s':>18}" for n in args.clients))
    print(f"{'raw SavedModel':26}" + "".join(f"{result['raw_saved_model'][n]['requests_per_second']:>18.1f}"
                                             for n in args.clients))
    for mode, record in result["servers"].items():
        for api in ("rest", "grpc"):
            print(f"{api + ', ' + mode.replace('_', ' '):26}" + "".join(
                f"{record[api][n]['requests_per_second']:>11.1f} ({record['ratio_to_raw'][api][n]:.2f}x)"
                for n in args.clients))
    print(f"failed answers: {result['errors']}")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
