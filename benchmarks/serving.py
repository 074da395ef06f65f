"""SavedModel inference against raw Keras inference, plus the REST figures, in one run.

For a trained run: exports it (or uses ``--export``), then on the same dev batches measures

* Keras: the restored float32 model's ``predict_scores`` + ``decode_scores`` in a ``tf.function`` on
  pre-built feature tensors (ids in, tag ids out);
* SavedModel: ``serving_default`` of the export loaded with ``tf.saved_model.load`` — strings in,
  tag strings out, vocabulary lookup and Viterbi included;

and prints tokens/s of both and their ratio (target ≥ 0.8×), then runs ``benchmarks/serving_rest.py``
(p50/p95 latency of one-sentence requests, throughput with 8 concurrent clients) against the export.
Writes ``benchmarks/out/serving.json``. Run:
``PYTHONPATH=. python benchmarks/serving.py --run results/open/runs/lisa [--sentences 400]``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import platform
import sys
import tempfile
import time

import tensorflow as tf

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from data_pipeline.dataset import make_dataset  # noqa: E402
from data_pipeline.splits import read_split  # noqa: E402
from export.saved_model import export_run  # noqa: E402
from lisa_tf.models.runs import load_run, load_run_config  # noqa: E402


def _time(fn, batches, repeats: int) -> float:
    fn(batches[0])  # trace / warm up
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for batch in batches:
            fn(batch)
        best = min(best, time.perf_counter() - started)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True)
    parser.add_argument("--export", help="an existing export version directory (default: export to a temp dir)")
    parser.add_argument("--sentences", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-rest", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "serving.json"))
    args = parser.parse_args(argv)

    model, config = load_run(args.run), load_run_config(args.run)
    sentences = read_split(config.data.dev, config.data.format, None, args.sentences)
    dataset, report = make_dataset(sentences, model.vocabularies(), layout=model.layout, token_budget=2048,
                                   shuffle=False, unknown_labels="map", preprocess=model.preprocessor)
    batches = list(dataset)
    tokens = report.tokens

    @tf.function(reduce_retracing=True)
    def keras_infer(batch):
        return model.decode_scores(model.predict_scores(batch), batch)

    with tempfile.TemporaryDirectory() as scratch:
        export_dir = pathlib.Path(args.export) if args.export else export_run(args.run, pathlib.Path(scratch) / "m" / "1")
        serving = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
        if model.layout == "predicate":
            saved_infer = lambda b: serving(tokens=b["tokens"], predicate_index=b["predicate_position"])  # noqa: E731
        else:
            saved_infer = lambda b: serving(tokens=b["tokens"])  # noqa: E731
        keras_seconds = _time(keras_infer, batches, args.repeats)
        saved_seconds = _time(saved_infer, batches, args.repeats)
        rest = None
        if not args.skip_rest:
            sys.path.insert(0, str(ROOT / "benchmarks"))
            import serving_rest

            rest_json = pathlib.Path(scratch) / "rest.json"
            serving_rest.main([str(export_dir.parent), "--out", str(rest_json)])
            rest = json.loads(rest_json.read_text())
    result = {
        "run": args.run,
        "machine": platform.processor() or platform.machine(),
        "examples": report.examples,
        "tokens": tokens,
        "batches": len(batches),
        "keras_tokens_per_s": tokens / keras_seconds,
        "savedmodel_tokens_per_s": tokens / saved_seconds,
        "ratio": keras_seconds / saved_seconds,
        "rest": rest,
    }
    print("| path | tokens/s |\n|---|---:|")
    print(f"| Keras model (ids in, tag ids out) | {result['keras_tokens_per_s']:,.0f} |")
    print(f"| SavedModel (strings in, tags out, Viterbi) | {result['savedmodel_tokens_per_s']:,.0f} |")
    print(f"SavedModel / Keras = {result['ratio']:.2f}x (target >= 0.8x)")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
