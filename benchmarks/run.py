"""All benchmarks in one command, one JSON and one Markdown report, every figure from the same run.

1. the machine's matmul rate (float32 and bfloat16 ``tf.matmul``);
2. per model — DeepAtt-FFN and the keras-hub ``TransformerEncoder`` stack at the paper's size, and the
   shipped open configs (DeepAtt-FFN, Selective Connection, SA, LISA) — training and inference tokens/s,
   utilisation of the matmul rate, Viterbi overhead (decode time / encode time) and peak training
   memory, each model in its own process (``benchmarks/throughput.py``) so its memory peak is its own;
   then the paired DeepAtt / keras-hub comparison (alternating passes in one process, ``--paired-only``);
3. padding waste of the token-budget batching in both layouts (``benchmarks/padding.py``);
4. SavedModel against Keras inference, REST latency and throughput (``benchmarks/serving.py``) for a
   trained run (``--run``; default ``results/open/runs/sa`` when it exists, otherwise a one-step run of
   ``configs/open/sa.toml`` is trained first — throughput does not depend on how well a model is trained).

Writes ``benchmarks/out/report.json`` and ``benchmarks/out/report.md`` (``--out DIR``). Run:
``PYTHONPATH=. python benchmarks/run.py [--policy auto] [--sentences 600] [--run RUN]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import throughput  # noqa: E402  (benchmarks/throughput.py)

MODELS = [
    "deepatt_paper",
    "keras_hub_paper",
    "configs/open/deepatt_ffn.toml",
    "configs/open/selective.toml",
    "configs/open/sa.toml",
    "configs/open/lisa.toml",
]


def _python(script: str, *args: str) -> None:
    """Run a benchmark script in a fresh process (its output goes to the console)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    command = [sys.executable, "-W", "ignore", str(ROOT / "benchmarks" / script), *args]
    print("$ " + " ".join(command[3:]), flush=True)
    subprocess.run(command, cwd=ROOT, env=env, check=True)


def _serving_run(run: str | None, scratch: pathlib.Path) -> str:
    """The run directory to export and serve."""
    if run:
        return run
    trained = ROOT / "results" / "open" / "runs" / "sa"
    if (trained / "done.json").exists():
        return str(trained)
    out = scratch / "sa_one_step"
    print("no trained SA run in results/open: training one step of configs/open/sa.toml to serve", flush=True)
    subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "lisa_tf", "train", "--config", "configs/open/sa.toml", "--out", str(out),
         "train.max_steps=1", "train.eval_every=1", "data.max_eval_sentences=20"],
        cwd=ROOT, check=True,
    )
    return str(out)


def markdown(report: dict) -> str:
    """The report as Markdown."""
    m = report["machine"]
    lines = [f"# Benchmarks ({report['date']}, {m['processor']}, {m['cpus']} CPUs, TF {m['tensorflow']}, "
             f"Keras {m['keras']}, keras-hub {m['keras_hub']})", "", "## Models", "",
             throughput.markdown(report["throughput"]), "", "## Padding (token-budget batching, PropBank-EWT train)", "",
             "| layout | budget | padding waste | predicate-row waste | mean budget fill |", "|---|---:|---:|---:|---:|"]
    padding = report["padding"]
    for layout, entry in padding["layouts"].items():
        rows = entry.get("predicate_row_padding_fraction")
        lines.append(f"| {layout} | {padding['token_budget']} | {100 * entry['padding_fraction']:.1f}% | "
                     f"{'–' if rows is None else f'{100 * rows:.1f}%'} | {100 * entry['mean_budget_fill']:.1f}% |")
    serving = report["serving"]
    lines += ["", f"## Serving ({serving['run']})", "",
              "| path | tokens/s |", "|---|---:|",
              f"| Keras model (ids in, tag ids out) | {serving['keras_tokens_per_s']:,.0f} |",
              f"| SavedModel (strings in, tags out) | {serving['savedmodel_tokens_per_s']:,.0f} |",
              "", f"SavedModel / Keras = {serving['ratio']:.2f}×"]
    rest = serving.get("rest")
    if rest:
        single, loaded = rest["single_client"], rest["concurrent"]
        lines += ["", "| REST | requests | p50 ms | p95 ms | req/s |", "|---|---:|---:|---:|---:|",
                  f"| 1 client | {single['requests']} | {single['p50_ms']:.1f} | {single['p95_ms']:.1f} | "
                  f"{1000 / single['mean_ms']:.1f} |",
                  f"| {loaded['clients']} clients | {loaded['requests']} | {loaded['p50_ms']:.1f} | "
                  f"{loaded['p95_ms']:.1f} | {loaded['requests_per_second']:.1f} |"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--policy", nargs="+", default=["auto"])
    parser.add_argument("--sentences", type=int, default=600)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--batch-tokens", type=int, default=4096)
    parser.add_argument("--run", help="trained run for the serving figures")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out"))
    args = parser.parse_args(argv)

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    matmul = {dtype: throughput.matmul_rate(dtype) for dtype in ("float32", "bfloat16")}
    print(f"matmul GFLOP/s: {matmul}", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        rows = []
        for i, model in enumerate(args.models):
            part = scratch / f"throughput_{i}.json"
            _python("throughput.py", "--models", model, "--policy", *args.policy, "--sentences", str(args.sentences),
                    "--batches", str(args.batches), "--batch-tokens", str(args.batch_tokens),
                    "--matmul-gflops", str(matmul["float32"]), str(matmul["bfloat16"]), "--out", str(part))
            rows.append(json.loads(part.read_text()))
        paired = {}
        if {"deepatt_paper", "keras_hub_paper"} <= set(args.models):
            part = scratch / "paired.json"
            _python("throughput.py", "--models", "deepatt_paper", "keras_hub_paper", "--paired-only", "--policy",
                    *args.policy, "--sentences", str(args.sentences), "--batches", str(args.batches),
                    "--batch-tokens", str(args.batch_tokens), "--out", str(part))
            paired = json.loads(part.read_text())["paired"]
        _python("padding.py", "--epochs", "1", "--budget", str(args.batch_tokens), "--out", str(scratch / "padding.json"))
        run = _serving_run(args.run, scratch)
        _python("serving.py", "--run", run, "--out", str(scratch / "serving.json"))
        padding = json.loads((scratch / "padding.json").read_text())
        serving = json.loads((scratch / "serving.json").read_text())
    combined = dict(rows[0], rows=[r for part in rows for r in part["rows"]])
    combined["deepatt_over_keras_hub"] = throughput.ratios(combined["rows"])
    if paired:
        combined["paired"] = paired
    report = {
        "date": datetime.date.today().isoformat(),
        "machine": combined["machine"],
        "throughput": combined,
        "padding": padding,
        "serving": serving,
    }
    (out / "report.json").write_text(json.dumps(report, indent=2, default=float) + "\n")
    text = markdown(report)
    (out / "report.md").write_text(text)
    print(text)
    print(f"wrote {out / 'report.json'} and {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
