"""Soak of ``python -m lisa_tf serve`` on 127.0.0.1: mixed good, bad and oversize requests from many clients.

Starts the server as a separate process (with batching, so joined calls are soaked too) over
``MODEL_BASE_PATH`` and sends ``--requests`` requests from ``--clients`` threads, each on its own
keep-alive connection. The requests are built from the signature's metadata, so any export works:

- good: one sentence of 1 to 12 tokens (a different length each time) -> 200;
- bad: an empty token inside the sentence, malformed JSON, an unknown signature, a number for a
  string -> 400;
- oversize: a sentence over the server's tokens-per-sentence limit -> 400, a body over
  ``--max_request_bytes`` -> 413.

It records every status (any 5xx or unexpected status is a failure) and the server's resident memory
(``VmRSS``) after each quarter of the requests: memory levels off when the last quarter adds little
to the first. Bounded by the request count; the server is stopped at the end.

Prints a table and writes ``benchmarks/out/serving_soak.json``.
Run: ``PYTHONPATH=. python benchmarks/serving_soak.py MODEL_BASE_PATH [--requests 10000 --clients 32]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import random
import sys
import threading

from benchmarks.serving_rest import ROOT, _in_threads, _instance, _start_server, _stop

MAX_REQUEST_BYTES = 64 * 1024
MAX_TOKENS_PER_SENTENCE = 64
WORDS = "the company said it would buy remaining shares by end of next year".split()


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB (Linux ``/proc``)."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def _requests(signature_name: str, signature: dict, total: int, seed: int) -> list:
    """``(kind, body bytes, expected status)`` for the whole soak, shuffled."""
    rng = random.Random(seed)
    string_2d = [n for n, i in signature["inputs"].items()
                 if i["dtype"] == "DT_STRING" and len(i["tensor_shape"]["dim"]) == 2]
    plan = []
    for number in range(total):
        roll = rng.random()
        tokens = [rng.choice(WORDS) for _ in range(rng.randint(3, 12))]
        instance = _instance(signature, tokens, 1)
        body = {"signature_name": signature_name, "instances": [instance]}
        if roll < 0.6:
            plan.append(("good", json.dumps(body).encode(), 200))
        elif roll < 0.85:
            kind = number % 4
            if kind == 0 and string_2d:
                instance[string_2d[0]] = tokens[:1] + [""] + tokens[1:]
                data = json.dumps(body).encode()
            elif kind == 1:
                data = json.dumps(body).encode()[:-3]
            elif kind == 2:
                data = json.dumps({"signature_name": "no_such_signature", "instances": [instance]}).encode()
            else:  # a number for every string input
                for name, info in signature["inputs"].items():
                    if info["dtype"] == "DT_STRING":
                        instance[name] = 7 if not isinstance(instance[name], list) else [7] * len(instance[name])
                data = json.dumps(body).encode()
            plan.append(("bad", data, 400))
        elif roll < 0.95 or not string_2d:
            long = [rng.choice(WORDS) for _ in range(MAX_TOKENS_PER_SENTENCE + 1 + rng.randint(0, 200))]
            plan.append(("oversize sentence", json.dumps(
                {"signature_name": signature_name, "instances": [_instance(signature, long, 1)]}).encode(), 400))
        else:
            filler = ["x" * 1000] * (MAX_REQUEST_BYTES // 1000 + 8)
            body["instances"][0][string_2d[0]] = filler
            plan.append(("oversize body", json.dumps(body).encode(), 413))
    return plan


def soak(model_base_path: os.PathLike | str, requests: int = 10_000, clients: int = 32,
         signature_name: str = "serving_default", seed: int = 16, start_timeout: float = 300.0) -> dict:
    """Run the soak; returns counts per kind and status, failures and RSS after each quarter."""
    base = pathlib.Path(model_base_path).resolve()
    process, host, port, _ = _start_server(
        base.name, base, start_timeout, "--enable_batching", "--max_request_bytes", str(MAX_REQUEST_BYTES),
        "--max_tokens_per_sentence", str(MAX_TOKENS_PER_SENTENCE), "--file_system_poll_wait_seconds", "0")
    try:
        connection = http.client.HTTPConnection(host, port, timeout=120)
        connection.request("GET", f"/v1/models/{base.name}/metadata")
        signatures = json.loads(connection.getresponse().read())["metadata"]["signature_def"]["signature_def"]
        connection.close()
        plan = _requests(signature_name, signatures[signature_name], requests, seed)
        path = f"/v1/models/{base.name}:predict"
        lock = threading.Lock()
        position = [0]
        counts: dict = {}
        failures: list = []
        quarters = {requests * q // 4: None for q in (1, 2, 3, 4)}
        rss: list = [round(rss_mb(process.pid), 1)]

        def client() -> None:
            connection = http.client.HTTPConnection(host, port, timeout=120)
            try:
                while True:
                    with lock:
                        if position[0] >= len(plan):
                            return
                        kind, data, expected = plan[position[0]]
                        position[0] += 1
                    try:
                        connection.request("POST", path, body=data, headers={"Content-Type": "application/json"})
                        response = connection.getresponse()
                        status = response.status
                        response.read()
                        if response.getheader("connection", "").lower() == "close":
                            connection.close()
                    except (OSError, http.client.HTTPException) as error:
                        connection.close()
                        status = f"{type(error).__name__}"
                    with lock:
                        counts[(kind, status)] = counts.get((kind, status), 0) + 1
                        if status != expected:
                            failures.append((kind, expected, status))
                        done = sum(counts.values())
                        if done in quarters:
                            rss.append(round(rss_mb(process.pid), 1))
            finally:
                connection.close()

        wall = _in_threads(client, clients)
    finally:
        _stop(process)
    return {
        "model_base_path": str(base), "signature_name": signature_name, "requests": requests, "clients": clients,
        "seconds": round(wall, 2), "requests_per_second": round(requests / wall, 1),
        "counts": {f"{kind} -> {status}": n for (kind, status), n in sorted(counts.items(), key=str)},
        "server_errors": sum(n for (_, status), n in counts.items() if isinstance(status, int) and status >= 500),
        "unexpected": len(failures), "first_unexpected": [list(f) for f in failures[:5]],
        "rss_mb_start_and_after_each_quarter": rss,
    }


def main(argv=None) -> int:
    """Parse arguments, soak, print and write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_base_path", help="directory of numeric SavedModel version directories")
    parser.add_argument("--signature_name", default="serving_default")
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "serving_soak.json"))
    args = parser.parse_args(argv)
    result = soak(args.model_base_path, args.requests, args.clients, args.signature_name)
    print(f"{result['requests']} requests from {result['clients']} clients in {result['seconds']} s "
          f"({result['requests_per_second']} req/s)")
    print(f"{'kind -> status':40}{'count':>8}")
    for key, count in result["counts"].items():
        print(f"{key:40}{count:>8}")
    print(f"5xx: {result['server_errors']}   unexpected statuses: {result['unexpected']}")
    print("server RSS MB (start, after each quarter): " + ", ".join(map(str, result["rss_mb_start_and_after_each_quarter"])))
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0 if result["server_errors"] == 0 and result["unexpected"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
