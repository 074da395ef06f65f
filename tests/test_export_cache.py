"""A packaged model is one artifact (``model.keras`` + card + ``assets/``); its SavedModel export is
built from it where it is needed (lisa_tf.packages.export_cache), in 16-bit storage or not (lisa_tf.packages.storage_precision)."""

from __future__ import annotations

import io
import json
import os
import pathlib
import subprocess
import sys
import time
import zipfile

import h5py
import keras
import numpy as np
import pytest

from tests.conftest import ROOT


def _make_package(run: pathlib.Path, out: pathlib.Path, float16: bool = False) -> pathlib.Path:
    from lisa_tf.models.runs import load_run
    from lisa_tf.packages.finding import CARD_FILE
    from lisa_tf.packages.writing import _package

    out.mkdir(parents=True)
    files = _package(load_run(run), run, out, float16)
    (out / CARD_FILE).write_text(json.dumps({"kind": "srl", "files": files}))
    return out


@pytest.fixture(scope="module")
def package(lisa_run, tmp_path_factory):
    return _make_package(lisa_run, tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LISA_TF_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_package_holds_one_model_file_and_its_request_limits(package, lisa_run):
    from data_pipeline.input_limits import model_max_tokens_per_sentence

    assert sorted(p.name for p in package.iterdir()) == ["assets", "card.json", "english-word-forms", "model.keras",
                                                         "propbank-frames"]
    assert sorted(p.name for p in (package / "assets").iterdir()) == ["config.json", "vocab_info.json"]
    # the model has a sense head: it shows the PropBank frame index's meanings, whose attribution and
    # CC BY-SA 4.0 licence the package carries
    frames = ROOT / "data" / "propbank-frames"
    assert sorted(p.name for p in (package / "propbank-frames").iterdir()) == ["ATTRIBUTION", "LICENSE"]
    for name in ("ATTRIBUTION", "LICENSE"):
        assert (package / "propbank-frames" / name).read_bytes() == (frames / name).read_bytes()
    assert "CC BY-SA 4.0" in (package / "propbank-frames" / "ATTRIBUTION").read_text()
    # its sense lexicon's irregular forms come from the word-form table: its attribution and licence too
    forms = ROOT / "data" / "english-word-forms"
    for name in ("ATTRIBUTION", "LICENSE"):
        assert (package / "english-word-forms" / name).read_bytes() == (forms / name).read_bytes()
    longest = json.loads((lisa_run / "vocab" / "vocab_info.json").read_text())["longest_sentence"]
    assert model_max_tokens_per_sentence(package) == longest == model_max_tokens_per_sentence(lisa_run)


def test_the_export_is_built_once_per_model_file_and_predict_then_uses_it(package, cache, tmp_path):
    from export.cache_build import build_export
    from lisa_tf.labelling.predictor import ExportPredictor, Predictor, load
    from lisa_tf.packages.export_cache import cached_export, export_base

    assert cached_export(package) is None
    assert type(load(package, prefer_export=True)) is Predictor  # no export yet: the .keras file
    reports = []
    base = build_export(package, report=reports.append)
    assert len(reports) == 1 and str(base) in reports[0]
    assert base.parent == cache / "exports" and base.name.startswith("tiny-")
    assert sorted(p.name for p in base.iterdir() if not p.name.startswith(".")) == ["1"]
    assert {"config.json", "vocab_info.json"} <= {p.name for p in (base / "1" / "assets").iterdir()}
    built = (base / "1" / "saved_model.pb").stat().st_mtime_ns
    assert build_export(package, report=reports.append) == base and len(reports) == 1  # reused, not rebuilt
    assert (base / "1" / "saved_model.pb").stat().st_mtime_ns == built
    through_export = load(package, prefer_export=True)
    assert type(through_export) is ExportPredictor
    texts = ["The cat sat on the mat.", "Shares soared on Tuesday."]
    assert through_export.predict(paragraphs=texts) == load(package, prefer_export=False).predict(paragraphs=texts)

    # another model file in the same place is another export
    changed = tmp_path / "tiny"
    _make_package(pathlib.Path(json.loads((package / "card.json").read_text())["files"]["run"]), changed, float16=True)
    assert export_base(changed) != export_base(package) and cached_export(changed) is None


def test_the_library_labels_through_an_export_of_the_token_signatures_and_the_server_keeps_every_one(package, cache,
                                                                                                     capsys):
    """``predict``'s export (``NAME-labelling-KEY``) holds the token signatures only, without the text ones
    or the checkpoint ops TensorFlow Serving restores variables with; the server's keeps them all; neither
    build removes the other; ``predict`` labels through the server's when it finds only that one (no second
    build), ``load()`` too, and takes the labelling export over it; the token signatures of both answer alike."""
    import numpy as np
    import tensorflow as tf
    from tensorflow.core.protobuf import saved_model_pb2

    from export.cache_build import build_export
    from export.saved_model import TEXT_SIGNATURES
    from lisa_tf.labelling.predictor import load
    from lisa_tf.packages.export_cache import cached_export
    from lisa_tf_cli.main import main

    served = build_export(package, report=lambda line: None)
    assert load(package).path == str(served / "1")  # the server's, while there is no other
    assert main(["predict", "--model", str(package), "--format", "jsonl", "The cat sat on the mat."]) == 0
    assert "building" not in capsys.readouterr().err and cached_export(package, labelling=True) is None
    labelling = build_export(package, report=lambda line: None, labelling=True)
    assert labelling.name.startswith("tiny-labelling-") and labelling.parent == served.parent
    assert cached_export(package) == served / "1" and cached_export(package, labelling=True) == labelling / "1"
    assert load(package).path == str(labelling / "1")

    def meta_graph(base):
        proto = saved_model_pb2.SavedModel()
        proto.ParseFromString((base / "1" / "saved_model.pb").read_bytes())
        return proto.meta_graphs[0]

    lean, full = meta_graph(labelling), meta_graph(served)
    assert set(full.signature_def) - set(lean.signature_def) == set(TEXT_SIGNATURES) == {"text", "sentences"}
    assert set(lean.signature_def) < set(full.signature_def) and "serving_default" in lean.signature_def
    assert full.saver_def.restore_op_name and not lean.saver_def.restore_op_name
    tokens = tf.constant([["The", "cat", "sat", "on", "the", "mat", "."],
                          ["Shares", "soared", "on", "Tuesday", ".", "", ""]])
    answers = [tf.saved_model.load(str(base / "1")).signatures["serving_default"](tokens=tokens)
               for base in (labelling, served)]
    assert answers[0].keys() == answers[1].keys()
    assert all(np.array_equal(answers[0][key].numpy(), answers[1][key].numpy()) for key in answers[0])


def test_export_writes_a_packaged_model_by_path_or_name(package, tmp_path, capsys):
    from lisa_tf_cli.main import main

    out = tmp_path / "exports" / "tiny" / "1"
    assert main(["export", "--model", str(package), "--out", str(out)]) == 0
    assert (out / "saved_model.pb").exists() and (out / "assets" / "config.json").exists()
    # its meaning tables come from the frame files: their attribution and licence go along
    for name in ("ATTRIBUTION", "LICENSE"):
        assert (out / "assets" / f"frames_{name}").read_bytes() == (ROOT / "data" / "propbank-frames" / name).read_bytes()
    assert main(["export", "--model", str(package), "--out", str(tmp_path / "z" / "1"),
                 "--frames", str(tmp_path / "none.json.gz")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(
        f"error: --frames {tmp_path / 'none.json.gz'}: no such file; expected a frame index")
    assert main(["export", "--model", "no-such-model", "--out", str(tmp_path / "x" / "1")]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("error: --model no-such-model: no such file or directory") and "shipped:" in error
    assert main(["export", "--model", str(tmp_path / "exports"), "--out", str(tmp_path / "y" / "1")]) == 2
    assert "not a packaged model" in capsys.readouterr().err


def test_serve_builds_the_export_on_its_first_start_and_reuses_it(package, cache):
    """``serve --model_base_path PACKAGE`` twice: the first start builds the export and says so, the
    second serves the cached one at once."""

    def start() -> tuple[list[str], float]:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        begun = time.perf_counter()
        server = subprocess.Popen([sys.executable, "-m", "lisa_tf", "serve", "--model_name", "tiny",
                                   "--model_base_path", str(package), "--rest_api_port", "0"],
                                  cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = []
        try:
            for line in server.stdout:
                lines.append(line.rstrip())
                if line.startswith("REST API at"):
                    break
            return lines, time.perf_counter() - begun
        finally:
            server.terminate()
            server.wait(timeout=60)

    first, _ = start()
    assert any(line.startswith("building the SavedModel export of") for line in first), first
    assert any(line.startswith("REST API at") for line in first), first
    second, _ = start()
    assert not any("building" in line for line in second) and second[-1].startswith("REST API at"), second


def test_16_bit_storage_halves_the_file_and_loads_as_float32(lisa_run, tmp_path):
    """Every float32 weight of the file is stored as float16, read back into float32 variables with
    float16's rounding, and the model labels as before; a weight float16 cannot hold stays float32."""
    from lisa_tf.models.runs import load_model_file, load_run, save_model

    model = load_run(lisa_run)
    wide, narrow = save_model(model, tmp_path / "wide.keras"), save_model(model, tmp_path / "narrow.keras",
                                                                          float16_weights=True)
    def weights_size(path):  # the weights inside the archive (its config, the sense lexicon included, is text)
        with zipfile.ZipFile(path) as archive:
            return archive.getinfo("model.weights.h5").file_size

    assert weights_size(narrow) < 0.6 * weights_size(wide)
    with zipfile.ZipFile(narrow) as archive, h5py.File(io.BytesIO(archive.read("model.weights.h5"))) as weights:
        stored = []
        weights.visititems(lambda name, item: stored.append(item[()]) if isinstance(item, h5py.Dataset) else None)
    assert sum(values.dtype == np.float16 for values in stored) > 10
    # kept float32: only the decoder's transition constraints (-1e9 on illegal BIO transitions)
    assert all(np.abs(values).max() > 65504 for values in stored if values.dtype == np.float32)
    loaded = load_model_file(narrow)
    for original, stored in zip(model.weights, loaded.weights):
        assert stored.dtype == original.dtype
        values = np.asarray(original)
        rounded = values if np.abs(values).max() > 65504 else values.astype(np.float16).astype(values.dtype)
        np.testing.assert_array_equal(np.asarray(stored), rounded)
    # the network computes as before, to float16's rounding of its weights
    from data_pipeline.dataset import make_dataset
    from data_pipeline.splits import read_split

    sentences = read_split(str(ROOT / "data/propbank-ewt/dev.gold_conll.gz"), "conll12", None, 30)
    batch = next(iter(make_dataset(sentences, model.vocabularies(), layout=model.layout, shuffle=False,
                                   unknown_labels="map", preprocess=model.preprocessor)[0]))
    before, after = model(batch, training=False), loaded(batch, training=False)
    compared = [name for name, value in before.items() if value.dtype.is_floating]
    assert "srl_scores" in compared or len(compared) >= 3, compared
    for name in compared:
        expected = np.asarray(before[name], np.float64)
        finite = np.isfinite(expected) & (np.abs(expected) < 1e8)
        np.testing.assert_allclose(np.asarray(after[name], np.float64)[finite], expected[finite],
                                   atol=0.02 * np.abs(expected[finite]).max() + 1e-3, err_msg=name)

    # a weight beyond float16's range keeps float32
    dense = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2)])
    dense.layers[0].kernel.assign(np.array([[1e6, 0.5], [0.25, 1.0]], np.float32))
    dense.save(tmp_path / "large.keras")
    from lisa_tf.packages.storage_precision import store_weights_in_float16

    assert store_weights_in_float16(tmp_path / "large.keras") == {"float16": 1, "float32": 1}
    reloaded = keras.saving.load_model(tmp_path / "large.keras")
    assert float(reloaded.layers[0].kernel[0, 0]) == 1e6


def test_a_twin_with_a_config_file_of_its_own_is_trained_from_it():
    from lisa_tf_cli.experiments import _config_source

    assert _config_source("open", "lisa_finetune") == (ROOT / "configs/open/lisa_finetune.toml", [])
    assert _config_source("open", "lisa") == (ROOT / "configs/open/lisa.toml", [])
    assert _config_source("open", "selective_finetune") == (
        ROOT / "configs/open/selective.toml", ["model.contextual=minilm", "model.contextual_trainable=true"])


def test_predict_builds_the_export_on_its_first_call_and_reuses_it(package, cache, capsys):
    """``predict`` with a packaged model labels through its export, built into the cache by the first
    call (which says so) and reused by the next."""
    from lisa_tf.packages.export_cache import cached_export
    from lisa_tf_cli.main import main

    assert main(["predict", "--model", str(package), "--format", "jsonl", "The cat sat on the mat."]) == 0
    first = capsys.readouterr()
    assert cached_export(package, labelling=True) is not None and "building the SavedModel export" in first.err
    assert main(["predict", "--model", str(package), "--format", "jsonl", "The cat sat on the mat."]) == 0
    second = capsys.readouterr()
    assert "building" not in second.err and second.out == first.out


def test_an_unusable_cache_directory_is_one_line(package, tmp_path, monkeypatch, capsys):
    """A cache path under a file: ``serve`` stops with one line naming it (exit 2); ``predict`` warns
    and labels with the .keras model."""
    from lisa_tf_cli.main import main

    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("LISA_TF_CACHE", str(blocker / "cache"))
    assert main(["serve", "--model_base_path", str(package), "--rest_api_port", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: export cache {blocker / 'cache' / 'exports'}: Not a directory; expected a writable "
                   "directory (set LISA_TF_CACHE to one)"]
    assert main(["predict", "--model", str(package), "The cat sat on the mat."]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(f"warning: export cache {blocker / 'cache' / 'exports'}: Not a directory")
    assert "sat" in captured.out


def test_a_subdirectory_of_assets_is_hashed_not_opened(package, tmp_path):
    import shutil

    from lisa_tf.packages.export_cache import package_key

    copy = tmp_path / "tiny"
    shutil.copytree(package, copy)
    before = package_key(copy)
    (copy / "assets" / "notes").mkdir()
    assert package_key(copy) == before
    (copy / "assets" / "notes" / "readme.txt").write_text("hello\n")
    assert package_key(copy) != before


def test_serve_takes_a_trained_run_through_the_export_cache(lisa_run, cache, monkeypatch, capsys):
    """``serve --model_base_path RUN``: the run's export (its best weights, config and request limits)
    is built into the cache on the first start and served from there; a second start reuses it."""
    import argparse

    from export import rest_server
    from lisa_tf.labelling.predictor import ExportPredictor, load
    from lisa_tf.packages.export_cache import latest_version
    from lisa_tf_cli.commands import serve

    served = []

    class Started(Exception):
        pass

    def make_server(name, base, *args, **kwargs):
        served.append(pathlib.Path(base))
        raise Started

    monkeypatch.setattr(rest_server, "make_server", make_server)
    parser = argparse.ArgumentParser()
    serve.add_arguments(parser)
    args = ["--model_name", "mine", "--model_base_path", str(lisa_run), "--rest_api_port", "0"]
    with pytest.raises(Started):
        serve.run(parser.parse_args(args))
    assert capsys.readouterr().out.startswith(f"building the SavedModel export of {lisa_run}")
    base = served[0]
    assert base.parent == cache / "exports" and base.name.startswith(f"{lisa_run.name}-")
    version = latest_version(base)
    assert version == base / "1"
    assert (version / "assets" / "config.json").read_text() == (lisa_run / "config.json").read_text()
    texts = ["The cat sat on the mat.", "Shares soared on Tuesday."]
    assert ExportPredictor(version).predict(paragraphs=texts) == load(lisa_run).predict(paragraphs=texts)
    with pytest.raises(Started):
        serve.run(parser.parse_args(args))
    assert served[1] == base and "building" not in capsys.readouterr().out


def test_a_new_frame_index_gets_a_new_export(package, tmp_path, monkeypatch):
    """A sense model's export holds meaning tables built from the shipped frame index: another index is
    another cache key, never the stale export."""
    import shutil

    import lisa_tf.packages.export_cache as export_cache

    before = export_cache.package_key(package)
    copy = tmp_path / "frames.json.gz"
    shutil.copy(export_cache.DEFAULT_FRAME_INDEX, copy)
    monkeypatch.setattr(export_cache, "DEFAULT_FRAME_INDEX", copy)
    assert export_cache.package_key(package) == before
    copy.write_bytes(copy.read_bytes() + b"\n")
    assert export_cache.package_key(package) != before


def test_a_new_export_removes_the_earlier_ones_of_its_source_unless_in_use(package, cache, tmp_path, monkeypatch):
    """After a build, the earlier exports of the same source path are removed; a model of the same name
    elsewhere keeps its export; one being built by another process (its lock held) or used (its use
    lock held) stays until a later build finds it free. The exporter is replaced by one that writes a
    marker: what is tested is which exports stay."""
    import shutil

    from export.cache_build import build_export
    import export.saved_model
    from lisa_tf.packages import export_cache
    from lisa_tf.packages.export_cache import export_base

    def fake_export(source, target, frames=None, labelling=False):
        target.mkdir(parents=True)
        (target / "saved_model.pb").write_bytes(b"built from " + bytes(str(source), "utf-8"))

    monkeypatch.setattr(export.saved_model, "export_package", fake_export)
    source = tmp_path / "a" / "tiny"
    shutil.copytree(package, source)
    namesake = tmp_path / "b" / "tiny"
    shutil.copytree(package, namesake)
    (namesake / "assets" / "note.txt").write_text("another model of the same name")
    step = iter(range(100))

    def rebuilt() -> pathlib.Path:  # new limits in the source: a new key, a new export
        (source / "assets" / "note.txt").write_text(f"change {next(step)}")
        reports = []
        base = build_export(source, report=reports.append)
        rebuilt.reports = reports
        return base

    def exports() -> set:
        return {p for p in (cache / "exports").iterdir() if not p.name.startswith(".")}

    def ended() -> None:  # what this process's end does: its use locks are released
        for handle in export_cache._held.values():
            handle.close()
        export_cache._held.clear()

    first = rebuilt()
    ended()
    other = build_export(namesake, report=lambda line: None)
    ended()
    second = rebuilt()
    ended()
    assert exports() == {second, other}  # the first is gone, the namesake's kept
    assert rebuilt.reports[-1] == f"removed the earlier export {first} of {source}"
    # the second is mid-build in another process (its build lock held): kept by the third build
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
         "print('held', flush=True); sys.stdin.read()", str(second.with_name(f".{second.name}.lock"))],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    third = rebuilt()
    ended()
    assert exports() == {second, third, other}
    holder.communicate("", timeout=30)
    fourth = rebuilt()  # free now: the second and third go; this process goes on using the fourth
    assert exports() == {fourth, other}
    fifth = rebuilt()
    assert exports() == {fourth, fifth, other}
    assert not [p for p in (cache / "exports").iterdir() if ".removing-" in p.name]
    assert export_base(source) == fifth and export_base(namesake) == other
