"""REST serving latency and throughput of ``python -m lisa_tf serve`` on 127.0.0.1.

Starts the server as a separate process on a free port over ``MODEL_BASE_PATH`` (a TensorFlow Serving
model base path: numeric version directories of SavedModels), then

1. sends ``--latency_requests`` one-sentence ``:predict`` requests one after another from a single
   keep-alive client and reports p50 / p95 / mean / max latency;
2. sends ``--throughput_requests`` of the same requests from ``--clients`` concurrent clients (8 by
   default, each on its own keep-alive connection) and reports requests/s, tokens/s and the latency
   under load.

The request is built from the signature's metadata, so any exported model works: string ``[batch,
time]`` inputs get the sentence's tokens, string ``[batch]`` inputs the sentence, integer ``[batch,
time]`` inputs a parse (token 1 the root, every other token attached to it) and integer ``[batch]``
inputs ``--predicate_index``. The run is bounded by the request counts and stops by itself; the
server process is stopped at the end.

Prints a table and writes ``benchmarks/out/serving_rest.json``.
Run: ``PYTHONPATH=. python benchmarks/serving_rest.py MODEL_BASE_PATH [--signature_name with_parse]``.
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

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_SENTENCE = "The company said it would buy the remaining shares by the end of next year ."


def _start_server(model_name: str, base_path: pathlib.Path, timeout: float) -> tuple:
    """Start ``lisa_tf serve`` on a free port; returns ``(process, host, port)`` once it is ready."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    process = subprocess.Popen(
        [sys.executable, "-m", "lisa_tf", "serve", "--model_name", model_name, "--model_base_path",
         str(base_path), "--rest_api_port", "0"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    found: dict = {}

    def read() -> None:
        for line in process.stdout:
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
    return process, found["host"], int(found["port"])


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


def run(args: argparse.Namespace) -> dict:
    """Start the server, measure, stop it; returns the result record."""
    base_path = pathlib.Path(args.model_base_path).resolve()
    model_name = args.model_name or base_path.name
    tokens = args.sentence.split()
    start = time.perf_counter()
    process, host, port = _start_server(model_name, base_path, args.start_timeout)
    startup_seconds = time.perf_counter() - start
    try:
        client = _Client(host, port)
        metadata = client.get(f"/v1/models/{model_name}/metadata")
        signatures = metadata["metadata"]["signature_def"]["signature_def"]
        if args.signature_name not in signatures:
            raise SystemExit(f"signature '{args.signature_name}' not in the model: {sorted(signatures)}")
        body = json.dumps({"signature_name": args.signature_name,
                           "instances": [_instance(signatures[args.signature_name], tokens,
                                                   args.predicate_index)]}).encode("utf-8")
        path = f"/v1/models/{model_name}:predict"
        status, _, payload = client.post(path, body)
        if status != 200:
            raise SystemExit(f"the first request failed with {status}: {payload[:500]!r}")
        for _ in range(args.warmup):
            client.post(path, body)

        latencies, errors = [], 0
        for _ in range(args.latency_requests):
            status, seconds, _ = client.post(path, body)
            errors += status != 200
            latencies.append(seconds)
        client.close()

        remaining = [args.throughput_requests]
        lock = threading.Lock()
        loaded_latencies: list = []
        loaded_errors = [0]

        def worker() -> None:
            own = _Client(host, port)
            mine, failed = [], 0
            try:
                while True:
                    with lock:
                        if remaining[0] == 0:
                            break
                        remaining[0] -= 1
                    status, seconds, _ = own.post(path, body)
                    failed += status != 200
                    mine.append(seconds)
            finally:
                own.close()
                with lock:
                    loaded_latencies.extend(mine)
                    loaded_errors[0] += failed

        threads = [threading.Thread(target=worker) for _ in range(args.clients)]
        wall = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - wall
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    concurrent = _latency_stats(loaded_latencies)
    concurrent.update({
        "clients": args.clients, "seconds": round(wall, 3),
        "requests_per_second": round(len(loaded_latencies) / wall, 2),
        "tokens_per_second": round(len(loaded_latencies) * len(tokens) / wall, 1),
    })
    return {
        "model_base_path": str(base_path), "model_name": model_name,
        "version": metadata["model_spec"]["version"], "signature_name": args.signature_name,
        "tokens_per_request": len(tokens), "sentence": args.sentence,
        "server_startup_seconds": round(startup_seconds, 2),
        "single_client": _latency_stats(latencies),
        "concurrent": concurrent,
        "errors": errors + loaded_errors[0],
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
    parser.add_argument("--throughput_requests", type=int, default=400)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--start_timeout", type=float, default=300.0, help="seconds to wait for the server")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "serving_rest.json"))
    args = parser.parse_args(argv)

    result = run(args)
    single, loaded = result["single_client"], result["concurrent"]
    print(f"model {result['model_name']} v{result['version']} signature {result['signature_name']}, "
          f"{result['tokens_per_request']} tokens per request (server start {result['server_startup_seconds']} s)")
    print(f"{'':24}{'requests':>9}{'p50 ms':>9}{'p95 ms':>9}{'mean ms':>9}{'req/s':>9}{'tok/s':>10}")
    print(f"{'1 client, sequential':24}{single['requests']:>9}{single['p50_ms']:>9.2f}{single['p95_ms']:>9.2f}"
          f"{single['mean_ms']:>9.2f}{1000 / single['mean_ms']:>9.1f}"
          f"{1000 / single['mean_ms'] * result['tokens_per_request']:>10.0f}")
    print(f"{str(loaded['clients']) + ' clients, concurrent':24}{loaded['requests']:>9}{loaded['p50_ms']:>9.2f}"
          f"{loaded['p95_ms']:>9.2f}{loaded['mean_ms']:>9.2f}{loaded['requests_per_second']:>9.1f}"
          f"{loaded['tokens_per_second']:>10.0f}")
    print(f"non-200 answers: {result['errors']}")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
