"""Training and inference tokens/s of DeepAtt-FFN against a keras-hub TransformerEncoder stack, and the
machine's matmul rate, in one run.

Models (``--models``, default ``deepatt_paper keras_hub_paper``):

* ``deepatt_paper``: DeepAtt-FFN at the paper's size (Tan et al. 2018 §4 "Model Setup": 10 layers, d = 200, 8 heads,
  FFN 800, 100-d word ⊕ 100-d predicate-mask embeddings), built by :func:`lisa_tf.models.build_model`;
* ``keras_hub_paper``: the same embeddings and softmax around a stack of 10
  ``keras_hub.layers.TransformerEncoder(intermediate_dim=800, num_heads=8)`` with a
  ``keras_hub.layers.SinePositionEncoding`` — the stock baseline our attention layer has to match;
* any ``configs/**/*.toml``, optionally with overrides after a colon: that configuration's model (e.g.
  ``configs/open/lisa.toml`` or ``configs/open/selective.toml:model.selective=false,model.bilstm_encoder=true``).
  A model with contextual word vectors (``configs/open/lisa_minilm.toml``) reads its frozen encoder's
  layers from the feature cache, as training does (:mod:`lisa_tf.models.feature_cache`; built for the
  sampled sentences in ``.contextual-cache`` beside ``--out`` on first use): its tokens/s are those of
  training on cached features, to set against the same config without them.

All models see the same real batches (PropBank-EWT train, token-budget batching, each model's own
layout), the same optimiser (Nadam, clip 1.0) and the same dtype policy (``--policy``, default ``auto``:
bf16 on a CPU with native bf16, else float32; several may be given). For each it measures

* training tokens/s: ``model.fit`` over the batches, after one untimed pass that traces the step, timed
  from the first step to the end of the last (:class:`TrainingClock`); every timing is the best of three
  passes (the machine is shared: single passes varied by tens of percent);
* inference tokens/s: the forward pass to probabilities (``encode``) and, for SRL models, the decoding
  (argmax or Viterbi, ``decode``) in ``tf.function`` s; ``viterbi_overhead`` = decode time / encode time;
* utilisation: estimated FLOPs (2 × kernel parameters per token + 4·d·T per attention layer; training
  = 3 × forward) per second over the machine's measured matmul rate for the policy's compute dtype;
* peak resident memory of the process up to the end of training (``ru_maxrss``; run one model per
  process, as ``benchmarks/run.py`` does, for a per-model figure).

The matmul rate is ``tf.matmul`` of square matrices (``--matmul-size``) in float32 and bfloat16.

When both paper-size models are measured, a *paired* comparison follows (``--paired-rounds``, default 4):
both models in one process, training passes and then inference passes on the same batches in the order
DeepAtt, keras-hub, keras-hub, DeepAtt per round; the DeepAtt / keras-hub ratio of each round (faster pass
of each) and their median; and the training and inference ratios of the sums of each batch's fastest
step over all passes (the batches come in the same order in every pass), which a slowdown of the machine
moves only if it hits the same batch in every pass. Separate best-of-3 rates of two models
measured minutes apart on this shared machine gave ratios from 0.6× to 1.5× for the same code; paired
rounds see the same machine state and are the figure to compare with the ≥ 1.0× target.

Prints a table and the DeepAtt / keras-hub ratios (target ≥ 1.0×) and writes
``benchmarks/out/throughput.json`` (or ``--out``). Run:
``PYTHONPATH=. python benchmarks/throughput.py [--policy auto float32] [--sentences 600]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import platform
import resource
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from data_pipeline.dataset import make_dataset  # noqa: E402
from data_pipeline.splits import read_split  # noqa: E402
from data_pipeline.vocab import Vocabularies  # noqa: E402
from lisa_tf.config import ModelConfig, load_config  # noqa: E402
from lisa_tf.models import build_model  # noqa: E402
from lisa_tf.models.feature_cache import FeatureCache  # noqa: E402
from lisa_tf.models.losses import masked_cross_entropy, per_replica  # noqa: E402
from lisa_tf.models.preprocessor import SrlPreprocessor  # noqa: E402
from lisa_tf.models.weights import frozen_parts  # noqa: E402
from lisa_tf.training.precision import resolve_policy  # noqa: E402

OUT = ROOT / "benchmarks" / "out" / "throughput.json"
#: Where the contextual features of the sampled sentences are cached (``main`` puts it beside ``--out``).
FEATURE_CACHE = OUT.parent / ".contextual-cache"
tf.get_logger().setLevel("ERROR")  # retracing notices for the batch shapes are expected
OPEN_DATA = load_config(ROOT / "configs" / "open" / "deepatt_ffn.toml").data
#: DeepAtt-FFN, Tan et al. 2018 §4 "Model Setup" (the paper's model: without the predicate identifier,
#: which the keras-hub stack it is paired with has no counterpart of)
PAPER = ModelConfig(kind="deepatt", sublayer="ffn", embedding_size=100, hidden_size=200, num_heads=8,
                    filter_size=800, num_layers=10, decode="viterbi", predicate_identifier_layers=0)


def matmul_rate(dtype: str, size: int = 1024, seconds: float = 2.0) -> float:
    """Measured GFLOP/s of ``tf.matmul`` of two ``size``² matrices in ``dtype``."""
    a = tf.random.normal([size, size], dtype=tf.float32)
    a, b = tf.cast(a, dtype), tf.cast(tf.transpose(a), dtype)
    step = tf.function(lambda: tf.reduce_sum(tf.cast(tf.matmul(a, b)[:1, :1], tf.float32)))
    step()
    runs, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        step()
        runs += 1
    return 2 * size**3 * runs / (time.perf_counter() - started) / 1e9


class HubTagger(keras.Model):
    """DeepAtt's embeddings and softmax around ``keras_hub.layers.TransformerEncoder`` blocks."""

    layout = "predicate"

    def __init__(self, config: ModelConfig, vocab_size: int, num_labels: int, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        self.words = keras.layers.Embedding(vocab_size, config.embedding_size)
        self.predicate_mask = keras.layers.Embedding(2, config.embedding_size)
        self.project = keras.layers.Dense(config.hidden_size, use_bias=False) if 2 * config.embedding_size != config.hidden_size else None
        self.position = keras_hub.layers.SinePositionEncoding()
        self.blocks = [
            keras_hub.layers.TransformerEncoder(
                intermediate_dim=config.filter_size, num_heads=config.num_heads, dropout=config.residual_dropout
            )
            for _ in range(config.num_layers)
        ]
        self.classifier = keras.layers.Dense(num_labels, dtype="float32")

    def call(self, features, training=False):
        x = tf.concat([self.words(features["word_ids"]), self.predicate_mask(features["predicate_indicator"])], -1)
        if self.project is not None:
            x = self.project(x)
        x = x + self.position(x)
        for block in self.blocks:
            x = block(x, padding_mask=features["token_mask"], training=training)
        return {"srl_logits": self.classifier(x)}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        return per_replica(masked_cross_entropy(x["srl_tag_ids"], y_pred["srl_logits"], x["token_mask"], self.config.label_smoothing))

    def predict_scores(self, features):
        return {"srl_probs": tf.nn.softmax(self(features, training=False)["srl_logits"])}


def forward_flops_per_token(model, config: ModelConfig, mean_length: float) -> float:
    """2 × (kernel parameters, embeddings excluded) + 4·d·T per attention layer: a per-token estimate."""
    kernels = sum(
        int(np.prod(v.shape)) for v in model.trainable_variables
        if len(v.shape) >= 2 and "embedding" not in v.path and "predicate_mask" not in v.path
    )
    return 2.0 * kernels + 4.0 * config.hidden_size * mean_length * config.num_layers


class TrainingClock(keras.callbacks.Callback):
    """Seconds from ``on_train_begin`` to ``on_train_end`` of one ``fit`` call (``seconds``) and of each
    training step (``steps``): the training without ``fit``'s own set-up and tear-down, which on the
    benchmark machine stretched whole calls to 5.12-5.13 s in 6 of 8 passes whose steps took
    3.75-4.41 s (the same for every model)."""

    def on_train_begin(self, logs=None):
        self.steps = []
        self.started = time.perf_counter()

    def on_train_batch_begin(self, batch, logs=None):
        self.step_started = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.steps.append(time.perf_counter() - self.step_started)

    def on_train_end(self, logs=None):
        self.seconds = time.perf_counter() - self.started


def _fit(model, dataset, steps: int, step_log: list | None = None) -> float:
    """Seconds of one ``fit`` pass over ``steps`` batches, timed by :class:`TrainingClock`; the
    per-step seconds are appended to ``step_log`` when given."""
    clock = TrainingClock()
    model.fit(dataset, steps_per_epoch=steps, epochs=1, verbose=0, callbacks=[clock], shuffle=False)
    if step_log is not None:
        step_log.append(clock.steps)
    return clock.seconds


def _timed(fn, batches, step_log: list | None = None) -> float:
    """Seconds of ``fn`` over ``batches``; the per-batch seconds are appended to ``step_log`` when given."""
    seconds = []
    for batch in batches:
        started = time.perf_counter()
        fn(batch)
        seconds.append(time.perf_counter() - started)
    if step_log is not None:
        step_log.append(seconds)
    return float(sum(seconds))


def compile_and_trace(model, dataset, batches):
    """Compile ``model`` with the benchmark optimiser, trace its train step and its forward pass on the
    batch shapes (untimed); returns the traced forward pass (``encode``)."""
    model.compile(optimizer=keras.optimizers.Nadam(1e-4, beta_2=0.98, epsilon=1e-9, global_clipnorm=1.0))
    _fit(model, dataset, len(batches))
    encode = tf.function(lambda b: model.predict_scores(b), reduce_retracing=True)
    for batch in batches:
        encode(batch)
    return encode


def measure(model, config: ModelConfig, dataset, batches, tokens: int, matmul: dict, policy: str,
            repeats: int = 3) -> dict:
    """Training and inference rates of one built model on the given batches (best of ``repeats`` passes)."""
    encode = compile_and_trace(model, dataset, batches)
    train_seconds = min(_fit(model, dataset, len(batches)) for _ in range(repeats))
    peak_training = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {}
    encode_seconds = min(_timed(encode, batches) for _ in range(repeats))
    if hasattr(model, "decode_scores"):
        scores = [encode(b) for b in batches]
        decode = tf.function(lambda s, b: model.decode_scores(s, b), reduce_retracing=True)
        for s, b in zip(scores, batches):
            decode(s, b)
        decode_seconds = min(_timed(lambda pair: decode(*pair), list(zip(scores, batches))) for _ in range(repeats))
        result.update(decode=config.decode, decode_tokens_per_s=tokens / decode_seconds,
                      viterbi_overhead=decode_seconds / encode_seconds)
    lengths = np.concatenate([b["length"].numpy() for b in batches])
    flops = forward_flops_per_token(model, config, float(np.mean(lengths)))
    compute_dtype = "bfloat16" if "bfloat16" in policy else ("float16" if "float16" in policy else "float32")
    peak = matmul.get(compute_dtype, matmul["float32"]) * 1e9
    train_rate, infer_rate = tokens / train_seconds, tokens / encode_seconds
    result.update(
        parameters=int(sum(np.prod(v.shape) for v in model.trainable_variables)),
        train_tokens_per_s=train_rate,
        infer_tokens_per_s=infer_rate,
        forward_gflop_per_token=flops / 1e9,
        train_utilisation=3 * flops * train_rate / peak,
        infer_utilisation=flops * infer_rate / peak,
        peak_training_rss_mb=peak_training,
    )
    return result


def model_spec(name: str):
    """(ModelConfig, DataConfig) of a benchmark model name, or of ``CONFIG[:key=value,…]`` (overrides)."""
    if name in ("deepatt_paper", "keras_hub_paper"):
        return PAPER, OPEN_DATA
    path, _, overrides = name.partition(":")
    config = load_config(path, [o for o in overrides.split(",") if o])
    return config.model, config.data


def build(name: str, model_config: ModelConfig, vocabs: Vocabularies):
    """The model of a benchmark name."""
    if name == "keras_hub_paper":
        return HubTagger(model_config, len(vocabs.words), len(vocabs.srl.entries), name="keras_hub")
    # the papers' networks: no sense head (the keras-hub tagger has none to compare with)
    return build_model(dataclasses.replace(model_config, sense_loss_weight=0.0), vocabs)


def sample_batches(train_sentences, vocabs: Vocabularies, layout: str, batch_tokens: int, count: int, attach=None):
    """``count`` batches spread evenly over the length-sorted batches (short, medium and long), and a
    ``tf.data`` pipeline that repeats them; ``attach`` (a feature cache's) adds features to each batch."""
    dataset, _ = make_dataset(train_sentences, vocabs, layout=layout, token_budget=batch_tokens, shuffle=False,
                              unknown_labels="map", preprocess=SrlPreprocessor(vocabs.words.entries, layout))
    every = list(dataset)
    batches = [every[i] for i in np.linspace(0, len(every) - 1, min(count, len(every))).round().astype(int)]
    if attach is not None:
        batches = [attach(b) for b in batches]
    spec = {k: tf.TensorSpec([None] * v.shape.rank, v.dtype) for k, v in batches[0].items()}
    repeated = tf.data.Dataset.from_generator(lambda: iter(batches), output_signature=spec).repeat()
    return batches, repeated


class Prepared:
    """A built model of a benchmark name under the current policy, with its batches."""

    def __init__(self, name: str, resolved_policy: str, sentences: int, batch_tokens: int, max_batches: int,
                 data_cache: dict):
        keras.utils.set_random_seed(1)
        self.name = name
        self.config, config_data = model_spec(name)
        key = (config_data.train, config_data.parse_train)
        if key not in data_cache:
            data_cache[key] = read_split(config_data.train, config_data.format, config_data.parse_train or None, sentences)
        vocabs = Vocabularies.build(data_cache[key])
        self.model = build(name, self.config, vocabs)
        attach = None
        encoders = frozen_parts(self.model)
        if encoders:  # training reads the frozen encoder's layers from the feature cache: so does this
            cache = FeatureCache(FEATURE_CACHE, self.config.contextual, self.config.contextual_pooling)
            cache.build([s.words for s in data_cache[key]], encoder=encoders[0])
            attach = cache.attach
        self.batches, self.dataset = sample_batches(data_cache[key], vocabs, self.model.layout, batch_tokens, max_batches,
                                                    attach)
        self.tokens = int(sum(int(b["length"].numpy().sum()) for b in self.batches))
        self.model(self.batches[0], training=False)
        print(f"{name} [{resolved_policy}]: {len(self.batches)} batches, {self.tokens} tokens ...", flush=True)


def paired(policy: str, rounds: int, sentences: int, batch_tokens: int, max_batches: int) -> dict:
    """DeepAtt-FFN / keras-hub tokens/s measured in alternating passes on the same batches.

    Both paper-size models live in one process; each round times training passes in the order DeepAtt,
    keras-hub, keras-hub, DeepAtt and takes each model's faster pass, then does the same for inference.
    A slowdown of the shared machine that lasts longer than a pass hits both models of a round alike, so
    the per-round ratios are much steadier than ratios of separately measured rates; the median over
    rounds is reported with all rounds.
    """
    resolved = resolve_policy(policy)
    keras.mixed_precision.set_global_policy(resolved)
    cache = {}
    pair = [Prepared(name, resolved, sentences, batch_tokens, max_batches, cache)
            for name in ("deepatt_paper", "keras_hub_paper")]
    encoders = [compile_and_trace(item.model, item.dataset, item.batches) for item in pair]
    train, infer, step_logs, infer_logs = [], [], ([], []), ([], [])
    for r in range(rounds):
        # A B B A: a drift within the round affects both models alike; each model's faster pass counts.
        seconds = [[], []]
        for i in (0, 1, 1, 0):
            seconds[i].append(_fit(pair[i].model, pair[i].dataset, len(pair[i].batches), step_logs[i]))
        train.append(min(seconds[1]) / min(seconds[0]))
        seconds = [[], []]
        for i in (0, 1, 1, 0):
            seconds[i].append(_timed(encoders[i], pair[i].batches, infer_logs[i]))
        infer.append(min(seconds[1]) / min(seconds[0]))
        print(f"  round {r + 1}/{rounds}: training {train[-1]:.2f}×, inference {infer[-1]:.2f}×", flush=True)
    keras.backend.clear_session()
    keras.mixed_precision.set_global_policy("float32")
    # The batches come in the same order in every pass: each batch's fastest step over all passes.
    fastest = {kind: [float(np.min(np.array(log), axis=0).sum()) for log in logs]
               for kind, logs in (("train", step_logs), ("inference", infer_logs))}
    return {"policy": resolved, "rounds": rounds, "train_ratios": train, "inference_ratios": infer,
            "train": float(np.median(train)), "inference": float(np.median(infer)),
            "fastest_step_seconds": fastest,
            "fastest_steps": {kind: hub / ours for kind, (ours, hub) in fastest.items()}}


def run(models, policies, sentences: int, batch_tokens: int, max_batches: int, matmul_size: int,
        matmul: dict | None = None, repeats: int = 3) -> dict:
    """Every model under every policy; returns the JSON report (``matmul``: GFLOP/s measured before;
    each rate is the best of ``repeats`` passes)."""
    matmul = matmul or {dtype: matmul_rate(dtype, matmul_size) for dtype in ("float32", "bfloat16")}
    data_cache = {}
    rows = []
    for policy in policies:
        resolved = resolve_policy(policy)
        for name in models:
            keras.mixed_precision.set_global_policy(resolved)
            item = Prepared(name, resolved, sentences, batch_tokens, max_batches, data_cache)
            row = {"model": name, "policy": resolved, "batches": len(item.batches), "tokens": item.tokens}
            row.update(measure(item.model, item.config, item.dataset, item.batches, item.tokens, matmul, resolved,
                               repeats))
            rows.append(row)
            keras.backend.clear_session()
    keras.mixed_precision.set_global_policy("float32")
    return {
        "machine": {"processor": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
                    "tensorflow": tf.__version__, "keras": keras.__version__, "keras_hub": keras_hub.__version__},
        "matmul_gflops": matmul,
        "matmul_size": matmul_size,
        "batch_tokens": batch_tokens,
        "rows": rows,
        "deepatt_over_keras_hub": ratios(rows),
    }


def ratios(rows: list[dict]) -> dict:
    """DeepAtt-FFN / keras-hub stack tokens/s (training, inference), per policy measured for both."""
    result = {}
    for policy in sorted({r["policy"] for r in rows}):
        by_name = {r["model"]: r for r in rows if r["policy"] == policy}
        if "deepatt_paper" in by_name and "keras_hub_paper" in by_name:
            ours, hub = by_name["deepatt_paper"], by_name["keras_hub_paper"]
            result[policy] = {
                "train": ours["train_tokens_per_s"] / hub["train_tokens_per_s"],
                "inference": ours["infer_tokens_per_s"] / hub["infer_tokens_per_s"],
            }
    return result


def markdown(report: dict) -> str:
    """The report as Markdown tables."""
    lines = []
    if "rows" in report:
        m = report["matmul_gflops"]
        lines += [
            f"Matmul rate ({report['matmul_size']}², measured): float32 {m['float32']:.1f} GFLOP/s, "
            f"bfloat16 {m['bfloat16']:.1f} GFLOP/s",
            "",
            "| model | policy | params | train tok/s | train util. | infer tok/s | infer util. | decode | decode/encode | peak RSS MB |",
            "|---|---|---:|---:|---:|---:|---:|---|---:|---:|",
        ]
        for r in report["rows"]:
            overhead = f"{r['viterbi_overhead']:.2f}" if "viterbi_overhead" in r else "–"
            lines.append(
                f"| {r['model']} | {r['policy']} | {r['parameters']:,} | {r['train_tokens_per_s']:,.0f} | "
                f"{100 * r['train_utilisation']:.1f}% | {r['infer_tokens_per_s']:,.0f} | {100 * r['infer_utilisation']:.1f}% | "
                f"{r.get('decode', '–')} | {overhead} | {r['peak_training_rss_mb']:,.0f} |"
            )
        for policy, ratio in report["deepatt_over_keras_hub"].items():
            lines += ["", f"DeepAtt-FFN / keras-hub TransformerEncoder stack [{policy}], separate best-of-3 rates: "
                          f"training {ratio['train']:.2f}×, inference {ratio['inference']:.2f}× (target ≥ 1.0×)"]
    for policy, pair in report.get("paired", {}).items():
        rounds = ", ".join(f"{r:.2f}" for r in pair["train_ratios"])
        lines += ["", f"DeepAtt-FFN / keras-hub TransformerEncoder stack [{policy}], paired passes (median of "
                      f"{pair['rounds']} rounds): training {pair['train']:.2f}× (rounds: {rounds}), "
                      f"inference {pair['inference']:.2f}× (target ≥ 1.0×); from each batch's fastest step over "
                      f"all {2 * pair['rounds']} passes: training {pair['fastest_steps']['train']:.2f}×, "
                      f"inference {pair['fastest_steps']['inference']:.2f}×"]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["deepatt_paper", "keras_hub_paper"],
                        help="deepatt_paper, keras_hub_paper or config files")
    parser.add_argument("--policy", nargs="+", default=["auto"], help="dtype policies (auto, float32, mixed_bfloat16)")
    parser.add_argument("--sentences", type=int, default=600, help="PropBank-EWT training sentences to batch")
    parser.add_argument("--batch-tokens", type=int, default=4096)
    parser.add_argument("--batches", type=int, default=8, help="batches per timed pass")
    parser.add_argument("--matmul-size", type=int, default=1024)
    parser.add_argument("--matmul-gflops", nargs=2, type=float, metavar=("FLOAT32", "BFLOAT16"),
                        help="use these matmul rates (measured earlier in the same run) instead of measuring")
    parser.add_argument("--no-dropout", action="store_true",
                        help="dropout off in both paper-size models (like-for-like: keras-hub's block has no ReLU dropout)")
    parser.add_argument("--paper-size", nargs=2, type=int, metavar=("LAYERS", "WIDTH"),
                        help="build both paper-shaped models with these layers and hidden size (filter 4 x WIDTH) "
                             "instead of the paper's 10 and 200: a quick check of the benchmark, not its figures")
    parser.add_argument("--paired-rounds", type=int, default=4,
                        help="rounds of alternating DeepAtt / keras-hub passes (when both are in --models; 0 = none)")
    parser.add_argument("--paired-only", action="store_true", help="only the paired DeepAtt / keras-hub comparison")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per rate (the best counts)")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    global FEATURE_CACHE
    FEATURE_CACHE = pathlib.Path(args.out).parent / ".contextual-cache"
    global PAPER
    if args.no_dropout:
        PAPER = dataclasses.replace(PAPER, residual_dropout=0.0, attention_dropout=0.0, relu_dropout=0.0)
    if args.paper_size:
        layers, width = args.paper_size
        PAPER = dataclasses.replace(PAPER, num_layers=layers, hidden_size=width, filter_size=4 * width)
    matmul = dict(zip(("float32", "bfloat16"), args.matmul_gflops)) if args.matmul_gflops else None
    report = {} if args.paired_only else run(args.models, args.policy, args.sentences, args.batch_tokens, args.batches,
                                               args.matmul_size, matmul, args.repeats)
    if args.paired_rounds > 0 and {"deepatt_paper", "keras_hub_paper"} <= set(args.models):
        report["paired"] = {}
        for policy in args.policy:
            pair = paired(policy, args.paired_rounds, args.sentences, args.batch_tokens, args.batches)
            report["paired"][pair["policy"]] = pair
    print(markdown(report))
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, default=float) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
