"""The throughput benchmark runs and compares like with like (its speed figures are not asserted:
targets are met in benchmarks/, never in timed tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def test_throughput_benchmark_compares_equal_sized_models(tmp_path):
    out = tmp_path / "throughput.json"
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "benchmarks/throughput.py", "--models", "deepatt_paper", "keras_hub_paper",
         "--policy", "float32", "--sentences", "30", "--batches", "2", "--batch-tokens", "512",
         "--matmul-size", "128", "--paired-rounds", "1", "--repeats", "1", "--paper-size", "2", "64", "--out", str(out)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    rows = {r["model"]: r for r in report["rows"]}
    assert set(rows) == {"deepatt_paper", "keras_hub_paper"}
    ours, hub = rows["deepatt_paper"], rows["keras_hub_paper"]
    # same embeddings, depth, width, heads and FFN: parameter counts agree to within biases/norms
    assert abs(ours["parameters"] - hub["parameters"]) / hub["parameters"] < 0.01
    assert ours["tokens"] == hub["tokens"] > 0
    for row in rows.values():
        assert row["train_tokens_per_s"] > 0 and row["infer_tokens_per_s"] > 0 and row["peak_training_rss_mb"] > 0
    assert ours["decode"] == "viterbi" and ours["viterbi_overhead"] > 0
    assert set(report["deepatt_over_keras_hub"]) == {"float32"}
    assert "DeepAtt-FFN / keras-hub" in done.stdout
    # the paired comparison: one round of alternating passes, a ratio per round and their median
    pair = report["paired"]["float32"]
    assert pair["rounds"] == 1 and len(pair["train_ratios"]) == len(pair["inference_ratios"]) == 1
    assert pair["train"] == pair["train_ratios"][0] > 0 and pair["inference"] > 0
    for kind in ("train", "inference"):
        fastest_ours, fastest_hub = pair["fastest_step_seconds"][kind]
        assert fastest_ours > 0 and fastest_hub > 0 and pair["fastest_steps"][kind] == fastest_hub / fastest_ours
    assert "paired passes" in done.stdout and "fastest step" in done.stdout


def test_a_contextual_config_trains_on_cached_features_like_training(tmp_path):
    """SA with and without MiniLM vectors on the same batches: the MiniLM model reads the encoder's
    layers from a feature cache built beside --out (as training does), so its training rate is that of
    cached features."""
    out = tmp_path / "throughput.json"
    tiny = "model.num_layers=2,model.pos_layer=0,model.hidden_size=32,model.num_heads=4,model.filter_size=64,model.predicate_identifier_layers=0"
    models = [f"configs/open/sa.toml:{tiny}", f"configs/open/sa_minilm.toml:{tiny}"]
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "benchmarks/throughput.py", "--models", *models, "--policy", "float32",
         "--sentences", "12", "--batches", "2", "--batch-tokens", "256", "--matmul-size", "64", "--repeats", "1",
         "--out", str(out)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {r["model"]: r for r in json.loads(out.read_text())["rows"]}
    glove, minilm = rows[models[0]], rows[models[1]]
    assert glove["tokens"] == minilm["tokens"] > 0 and minilm["train_tokens_per_s"] > 0
    # the cache holds the 12 sentences' features; the frozen encoder is not among the trained weights
    cached = [f for f in (tmp_path / ".contextual-cache").rglob("*") if f.is_file()]
    assert cached and sum(f.stat().st_size for f in cached) > 12 * 5 * 7 * 384 * 2
    assert glove["parameters"] < minilm["parameters"] < glove["parameters"] + 1_000_000
    assert "contextual features (minilm): 12/12 sentences" in done.stderr


def test_training_clock_times_every_step_inside_fit():
    import numpy as np
    import keras
    from benchmarks.throughput import _fit
    import tensorflow as tf

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    data = tf.data.Dataset.from_tensor_slices((np.ones((10, 4), "float32"), np.zeros((10, 1), "float32"))).batch(2)
    log = []
    seconds = _fit(model, data, 3, log)
    assert len(log) == 1 and len(log[0]) == 3  # one pass of three steps
    assert all(step > 0 for step in log[0]) and 0 < sum(log[0]) <= seconds


@pytest.mark.slow(minutes=1.4)
def test_labelling_speed_benchmark_measures_every_path_on_a_tiny_input(lisa_run, tmp_path):
    """``benchmarks/labelling_speed.py`` on the tiny LISA run and 12 sentences: every path gives a rate,
    the server answers the first request of each signature, and the JSON holds what the table shows."""
    out = tmp_path / "speed.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/labelling_speed.py", "--model", str(lisa_run), "--sentences", "12",
         "--single", "3", "--clients", "2", "--repeats", "1", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    [record] = json.loads(out.read_text())["models"]
    assert record["sentences"] == 12 and record["network"] > 0
    paths = ("keras_tokens", "keras_text", "export_tokens", "export_text", "predict_input", "rest_text",
             "rest_tokens", "grpc_tokens", "rest_text_8_per_request")
    assert set(record["ratios_to_network"]) == set(paths)
    rates = [record.get(p, record["server"].get(p, record.get(f"{p}_tokens_per_s"))) for p in paths]
    assert all(rate > 0 for rate in rates), rates
    for key in ("first_request", "first_request_without_warmup"):
        assert set(record["server"][key]) == {"serving_default", "with_parse", "sentences", "text"}
    assert record["cold_start_s"] > record["import_tensorflow_s"] > 0
    assert "| network alone (pre-built batches, compiled) |" in done.stdout


def test_predict_stream_memory_benchmark_samples_a_whole_run(lisa_run, tmp_path):
    """``benchmarks/predict_stream_memory.py`` on the tiny LISA run and 60 lines: every line's sentences
    are written or counted as skipped (the tiny run's sentence limit is 36 tokens), memory is sampled through the run, and the table and plot are produced."""
    out = tmp_path / "stream.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/predict_stream_memory.py", "--model", str(lisa_run), "--lines", "60",
         "--every", "0.2", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    record = json.loads(out.read_text())
    assert record["sentences_written"] + record["skipped"] >= 60 and record["samples"] >= 3
    assert 0 < record["rss_mb_at_first_output"] <= record["rss_mb_peak"]
    assert "labelled" in record["last_stderr_line"] and out.with_suffix(".png").stat().st_size > 1000


@pytest.mark.slow(minutes=1.1)
def test_domain_adaptation_benchmark_runs_on_a_tiny_input(tmp_path):
    """``benchmarks/domain_adaptation.py --quick``: the held-out genre's splits hold that genre only,
    the three models are trained (the adapted one from the base model) and scored on its test slice."""
    from data_pipeline.readers.conll12 import read_conll12
    from lisa_tf.evaluation.slices import genre

    out, work = tmp_path / "adaptation.json", tmp_path / "work"
    done = subprocess.run(
        [sys.executable, "benchmarks/domain_adaptation.py", "--quick", "--held-out", "email", "--work", str(work),
         "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "starting from" in done.stdout and "| email | 40 |" in done.stdout
    scores = json.loads(out.read_text())["genres"]["email"]
    assert set(scores) == {"unadapted", "scratch", "adapted", "test_sentences"}
    assert out.with_suffix(".png").stat().st_size > 0
    splits = work / "email"
    assert {genre(s) for s in read_conll12(splits / "genre_test.gold_conll")} == {"email"}
    assert "email" not in {genre(s) for s in read_conll12(splits / "others_train.gold_conll")}
    adapted = json.loads((splits / "runs" / "adapted" / "config.json").read_text())
    assert adapted["train"]["init"] == str(splits / "runs" / "base")


@pytest.mark.slow(minutes=1.0)
def test_label_corpus_benchmark_compares_with_predict_on_a_tiny_input(tmp_path):
    """``benchmarks/label_corpus.py`` on 4 EWT test sentences in one file, one worker, and a "large" file
    of 20 lines (2 sentences): predict --input and label-corpus write the same frames (the benchmark
    checks it and fails otherwise), the JSON holds a rate and a memory series for each path, and the
    plot is written."""
    out = tmp_path / "label_corpus.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/label_corpus.py", "--model", "srl-fast", "--sentences", "4", "--files", "1",
         "--workers", "1", "--shard-bytes", "150", "--large-lines", "20", "--real-every", "10", "--every", "0.2",
         "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    record = json.loads(out.read_text())
    assert record["sentences"] == 4 and record["same_frames_as_predict"] is True and record["shards"] >= 2
    assert set(record["paths"]) == {"predict_input", "label_corpus_1_workers"}
    assert all(p["tokens_per_s"] > 0 and p["tokens"] == record["paths"]["predict_input"]["tokens"]
               and p["lines"] == 4 and p["peak_rss_mb"] > 0 and p["rss_series"] for p in record["paths"].values())
    large = record["large"]
    assert set(large["paths"]) == {"predict_input", "label_corpus", "label_corpus_tenth"}
    assert large["paths"]["label_corpus"]["lines"] == 20 and large["paths"]["label_corpus_tenth"]["lines"] == 2
    assert large["paths"]["label_corpus"]["tokens"] == large["paths"]["predict_input"]["tokens"] > 0
    assert large["lines_per_s_vs_predict"] > 0 and large["peak_rss_vs_tenth"] > 0
    assert out.with_suffix(".png").stat().st_size > 1000
    assert "| label-corpus, DirectRunner, 1 worker |" in done.stdout


def test_frame_index_coverage_benchmark_on_a_tiny_input(tmp_path):
    """``benchmarks/frame_index_coverage.py`` with the fixture frames (bark, give, kill, await) on three
    hand-written predicates: bark.01 with ARG0 and ARG2 (both its roles), kill.04 with ARG0, ARG1 and
    ARG3 (it has 0-2), and hug.01, which the index lacks."""
    from data_pipeline.frame_index import FrameIndex

    index = tmp_path / "frames.json.gz"
    source = {"repository": "propbank-frames", "commit": "v3.4.0", "licence": "CC BY-SA 4.0", "attribution": "test"}
    FrameIndex.from_frame_files(ROOT / "tests" / "fixtures" / "propbank-frames" / "v3.4.0", source).save(index)
    rows = [
        [("The", "(ARG0*"), ("dog", "*)"), ("barked", "(V*)", "bark", "bark.01"), ("at", "(ARG2*"), ("the", "*"),
         ("mailman", "*)"), (".", "*")],
        [("They", "(ARG0*)"), ("killed", "(V*)", "kill", "kill.04"), ("time", "(ARG1*)"), ("reading", "(ARG3*)"),
         (".", "*")],
        [("I", "(ARG0*)"), ("hugged", "(V*)", "hug", "hug.01"), ("her", "(ARG1*)"), (".", "*")],
    ]
    lines = ["#begin document (test/frames); part 000"]
    for sentence in rows:
        for i, (word, bracket, *predicate) in enumerate(sentence):
            lemma, roleset = predicate or ("-", "-")
            lines.append(f"test/frames 0 {i} {word} XX * {lemma} {roleset} - - * {bracket} -")
        lines.append("")
    data = tmp_path / "tiny.gold_conll"
    data.write_text("\n".join(lines + ["#end document", ""]), encoding="utf-8")
    out = tmp_path / "coverage.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/frame_index_coverage.py", "--index", str(index), "--data", str(data),
         "--out", str(out)], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
        timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())["files"]["tiny.gold_conll"]
    assert (result["predicates"], result["predicates_in_index"], result["lemma_finds_roleset"]) == (3, 2, 2)
    assert (result["core_arguments"], result["core_arguments_in_roleset"]) == (5, 4)
    assert result["rolesets_missing"] == {"hug.01": 1} and result["arguments_outside_roleset"] == {"kill.04 ARG3": 1}
    assert "| tiny.gold_conll | 3 | 66.67% | 80.000% of 5 | 66.67% |" in done.stdout


def test_cli_start_benchmark_runs_on_a_tiny_model(lisa_run, tmp_path):
    """``benchmarks/cli_start.py`` with the tiny LISA run, one run of each figure: every figure is
    measured and the targets are judged."""
    out = tmp_path / "cli_start.json"
    done = subprocess.run([sys.executable, "benchmarks/cli_start.py", "--model", str(lisa_run), "--runs", "1",
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    for name in ("error_missing_input", "error_missing_model", "import_tensorflow", "predict_first", "predict_second"):
        assert report[name]["runs"] == 1 and report[name]["median_s"] > 0
    assert len(report["targets"]) == 2 and "second predict" in done.stdout


def test_spacy_pipe_benchmark_compares_the_same_sentences(tmp_path):
    out = tmp_path / "spacy_pipe.json"
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "benchmarks/spacy_pipe.py", "--model", "srl-fast", "--sentences", "8",
         "--batch-size", "4", "--repeats", "1", "--out", str(out)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["texts"] == 8 and report["sentences"] >= 8 and report["tokens"] > report["sentences"]
    assert report["frames"] > 0 and report["frames_equal"] is True and report["largest_score_difference"] < 0.001
    assert len(report["spacy_pipe_seconds"]) == len(report["predict_seconds"]) == 1
    assert 0 < report["spacy_pipe_label_seconds"][0] < report["spacy_pipe_seconds"][0]
    assert report["ratio"] == report["spacy_pipe_tokens_per_second"] / report["predict_tokens_per_second"]
    assert report["predict_tokens_per_second"] == report["tokens"] / report["predict_seconds"][0]
    assert "nlp.pipe / predict" in done.stdout


def test_sense_lexicon_benchmark_on_a_tiny_input(tmp_path):
    """``benchmarks/sense_lexicon.py`` with the same 150 EWT dev sentences as training and test data: every
    gold roleset was seen with its own word form, so each is among its word's candidates."""
    from data_pipeline.readers.conll12 import gold_conll_lines, read_conll12

    data = tmp_path / "tiny.gold_conll"
    sentences = read_conll12(ROOT / "data" / "propbank-ewt" / "dev.gold_conll.gz")[:150]
    data.write_text("\n".join(gold_conll_lines("test/senses", sentences)) + "\n", encoding="utf-8")
    out = tmp_path / "lexicon.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/sense_lexicon.py", "--train", str(data), "--test", str(data), "--conllu", "",
         "--out", str(out)], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
        timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())["lexicon"]
    assert result["predicates"] > 200 and result["gold_among_candidates"] == result["predicates"]
    assert result["candidate_recall"] == 1.0 and result.get("none", 0) == 0 and result.get("fallback", 0) == 0


def test_ablation_table_reads_each_runs_change_and_curve(lisa_run, tmp_path):
    """``benchmarks/ablations.py``: a lever's row names what its run's config changed (run controls and
    the checkout its data paths were read from left out), its dev F1 at the steps it reached, and its
    difference from the baseline at the last step both reached."""
    import json
    import shutil

    from benchmarks.ablations import markdown, table

    lever = tmp_path / "lever"
    lever.mkdir()
    config = json.loads((lisa_run / "config.json").read_text())
    config["model"]["word_dropout"] = 0.25
    config["train"]["max_minutes"] = 7.0
    config["data"]["train"] = "/elsewhere/checkout/data/" + config["data"]["train"].rpartition("/data/")[2]
    (lever / "config.json").write_text(json.dumps(config))
    base = tmp_path / "base"
    base.mkdir()
    shutil.copy(lisa_run / "config.json", base / "config.json")
    (base / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "dev_f1": f}) + "\n"
                                                for s, f in ((500, 50.0), (1000, 60.0), (1500, 64.0))))
    (lever / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "dev_f1": f}) + "\n"
                                                 for s, f in ((500, 51.5), (1000, 60.25))))
    result = table({"baseline": base, "word dropout": lever})
    baseline, row = result["rows"]
    assert row["changes"] == "model.word_dropout=0.25" and baseline["changes"] == "(the shipped recipe)"
    assert (row["delta_at"], row["delta"], row["best"]) == (1000, 0.25, 60.25)
    assert "| word dropout | model.word_dropout=0.25 | 51.50 | 60.25 | — | 60.25 | +0.25 @ 1,000 |" in markdown(result)


def test_warm_path_profile_splits_a_predict_call_into_its_phases(lisa_run):
    """``benchmarks/warm_path.py``'s clock, in this process on the tiny LISA run: each phase of a
    ``predict(texts)`` call is timed, the phases add up to no more than the call, and the library's
    functions are themselves again afterwards."""
    import lisa_tf
    from benchmarks.warm_path import PHASES, profile
    from lisa_tf.labelling import batches, predictor

    originals = (predictor.prepare, predictor.frame, predictor.ExportPredictor._run, batches.label_sentences)
    model = lisa_tf.load(lisa_run)
    texts = ["The dog barked at the mailman.", "Shares soared on Tuesday after the company said it would buy them."]
    result = profile(lambda: model.predict(texts), tokens=20, repeats=1)
    phases = result["phases_s"]
    assert set(phases) == set(PHASES)
    assert phases["prepare"] > 0 and phases["network"] > 0 and phases["frames"] > 0
    assert sum(phases.values()) <= result["seconds"] + 0.005 and result["tokens_per_s"] == round(20 / result["seconds"])
    assert (predictor.prepare, predictor.frame, predictor.ExportPredictor._run, batches.label_sentences) == originals


def test_predicate_passes_reads_each_sentence_once_per_predicate():
    """``benchmarks/predicate_passes.py``: a predicate-aware model's passes over real EWT test sentences:
    one copy of a sentence per predicate, holding that predicate alone, and one of a sentence without any."""
    from benchmarks.predicate_passes import one_per_predicate
    from data_pipeline.splits import read_split

    data = ROOT / "data" / "propbank-ewt"
    gold = read_split(str(data / "test.gold_conll.gz"), "conll12", str(data / "test.conllu.gz"), 60)
    assert any(not s.predicates for s in gold) and any(len(s.predicates) > 1 for s in gold)
    passes = one_per_predicate(gold)
    assert len(passes) == sum(max(1, len(s.predicates)) for s in gold)
    assert all(len(p.predicates) <= 1 for p in passes)
    for sentence in gold:
        copies = [p for p in passes if p.words == sentence.words]
        assert sorted(q.position for p in copies for q in p.predicates) == sorted(q.position for q in sentence.predicates)
