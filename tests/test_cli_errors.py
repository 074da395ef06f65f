"""User mistakes on the command line: one ``error: …`` line on stderr naming the file, key or flag and
what is expected, exit status 2, no traceback; and nothing written where the mistake stopped a command."""

from __future__ import annotations

import pytest

from lisa_tf.config import PROJECT_ROOT
from lisa_tf_cli.main import main

OPEN_LISA = str(PROJECT_ROOT / "configs" / "open" / "lisa.toml")


def one_error(capsys, argv) -> str:
    """Run the command line in process; check it exits 2 with one ``error:`` line; return that line."""
    status = main([str(a) for a in argv])
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def test_argparse_mistakes_still_exit_2(capsys):
    for argv in (["--bogus"], ["train"], ["nocommand"], ["export", "--run"]):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2
    assert "usage:" in capsys.readouterr().err


@pytest.mark.parametrize("override, fragment", [
    ("train.max_step=3", "unknown key train.max_step (did you mean train.max_steps?)"),
    ("trian.max_steps=3", "unknown section 'trian' (did you mean train?)"),
])
def test_mistyped_config_key_is_one_line(capsys, tmp_path, override, fragment):
    line = one_error(capsys, ["train", "--config", OPEN_LISA, "--out", tmp_path / "run", override])
    assert fragment in line
    path = tmp_path / "typo.toml"
    path.write_text("[train]\nmax_setps = 3\n")
    line = one_error(capsys, ["train", "--config", path, "--out", tmp_path / "run"])
    assert line.startswith(f"error: {path}: unknown key train.max_setps (did you mean train.max_steps?)")
    assert not (tmp_path / "run").exists()


def test_train_without_config_for_a_new_run(capsys, tmp_path):
    out = tmp_path / "new"
    line = one_error(capsys, ["train", "--out", out])
    assert line == f"error: --config is required for a new run ({out / 'config.json'} does not exist)"
    assert not out.exists()


@pytest.mark.parametrize("overrides, fragment", [
    (["train.max_steps=-5"], "train.max_steps must be at least 1, found -5"),
    (["model.num_layers=2"], "model.parse_layer and model.parse_attention_layer must satisfy"),
    (["data.train=/nonexistent/train.gold_conll"], "data.train: /nonexistent/train.gold_conll: no such file"),
])
def test_invalid_config_is_refused_before_anything_is_written(capsys, tmp_path, overrides, fragment):
    out = tmp_path / "runs" / "lisa"
    line = one_error(capsys, ["train", "--config", OPEN_LISA, "--out", out, *overrides])
    assert fragment in line
    assert not (tmp_path / "runs").exists()


def test_resuming_with_another_model_is_refused_before_anything_is_written(capsys, tmp_path):
    from lisa_tf.config import load_config

    out = tmp_path / "run"
    out.mkdir()
    load_config(OPEN_LISA).save(out / "config.json")
    before = (out / "config.json").read_text()
    line = one_error(capsys, ["train", "--out", out, "model.num_layers=8", "train.max_steps=10"])
    assert line == (f"error: --out {out} holds a run of a different model (model.num_layers is 6 in the run, 8 here); "
                    "resume it with its own config (leave out --config and model.* overrides) or choose a new --out")
    assert sorted(p.name for p in out.iterdir()) == ["config.json"] and (out / "config.json").read_text() == before
    (tmp_path / "file").write_text("")
    line = one_error(capsys, ["train", "--config", OPEN_LISA, "--out", tmp_path / "file"])
    assert "exists and is not a directory" in line


# ------------------------------------------------------------------------------- run directories
EWT_DEV = str(PROJECT_ROOT / "data" / "propbank-ewt" / "dev.gold_conll.gz")


def _run_commands(run, tmp_path):
    return {
        "evaluate": ["evaluate", "--run", run, "--data", EWT_DEV],
        "export": ["export", "--run", run, "--out", tmp_path / "exports" / "srl" / "1"],
        "average-checkpoints": ["average-checkpoints", "--run", run],
    }


@pytest.mark.parametrize("command", ["evaluate", "export", "average-checkpoints"])
def test_run_that_does_not_exist_or_is_not_a_run(capsys, tmp_path, command):
    missing = tmp_path / "missing"
    line = one_error(capsys, _run_commands(missing, tmp_path)[command])
    assert line == f"error: --run {missing}: no such directory"
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("not a run\n")
    line = one_error(capsys, _run_commands(other, tmp_path)[command])
    assert line == (f"error: --run {other}: not a run directory (no model.keras); expected a directory written by "
                    "`python -m lisa_tf train`")
    assert not (tmp_path / "exports").exists()


def test_predict_names_a_missing_or_foreign_model_path(capsys, tmp_path):
    line = one_error(capsys, ["predict", tmp_path / "missing", "The cat sat."])
    assert line == f"error: {tmp_path / 'missing'}: no such file or directory"
    line = one_error(capsys, ["predict", tmp_path, "The cat sat."])
    assert line.startswith(f"error: {tmp_path}: not a run directory (model.keras), a .keras file or a SavedModel export")


def test_predict_names_an_unreadable_input_or_unwritable_output(capsys, tmp_path, deepatt_run):
    line = one_error(capsys, ["predict", deepatt_run, "--input", tmp_path / "missing.txt"])
    assert line == f"error: --input {tmp_path / 'missing.txt'}: No such file or directory; expected a readable text file"
    line = one_error(capsys, ["predict", deepatt_run, "The cat sat.", "--out", tmp_path / "no" / "frames.txt"])
    assert line.startswith(f"error: --out {tmp_path / 'no' / 'frames.txt'}: No such file or directory")
    line = one_error(capsys, ["predict", deepatt_run])
    assert line.startswith("error: nothing to label")


@pytest.mark.parametrize("command", ["evaluate", "export", "average-checkpoints"])
def test_missing_or_foreign_weights_file(capsys, tmp_path, deepatt_run, command):
    missing = tmp_path / "step-9.weights.h5"
    argv = _run_commands(deepatt_run, tmp_path)[command]
    line = one_error(capsys, argv + ["--weights", missing])
    assert line == f"error: --weights {missing}: no such file; expected best, final or a path to a .weights.h5 file"
    notes = tmp_path / "notes.txt"
    notes.write_text("not weights\n")
    line = one_error(capsys, argv + ["--weights", notes])
    assert line == f"error: --weights {notes}: expected best, final or a path to a .weights.h5 file"
    assert not (tmp_path / "exports").exists()


def test_average_checkpoints_names_what_the_run_kept(capsys, deepatt_run):
    kept = sorted((deepatt_run / "weights").glob("step-*.weights.h5"))
    line = one_error(capsys, ["average-checkpoints", "--run", deepatt_run, "--last", len(kept) + 1])
    assert line == (f"error: --last {len(kept) + 1}: {deepatt_run / 'weights'} holds {len(kept)} step-N.weights.h5 "
                    f"checkpoint(s); give --last {len(kept)} or fewer")


# ------------------------------------------------------------------------------------- export
@pytest.fixture
def untrained_run(deepatt_run, tmp_path):
    """A run as ``train`` leaves it before its first evaluation: the built model, its config and
    vocabularies, no trained weights."""
    import shutil

    run = tmp_path / "untrained"
    run.mkdir()
    for name in ("model.keras", "config.json"):
        shutil.copy(deepatt_run / name, run / name)
    shutil.copytree(deepatt_run / "vocab", run / "vocab")
    return run


def test_export_into_a_non_empty_directory_is_refused(capsys, tmp_path, deepatt_run):
    version = tmp_path / "srl" / "1"
    version.mkdir(parents=True)
    (version / "saved_model.pb").write_bytes(b"an earlier export")
    line = one_error(capsys, ["export", "--run", deepatt_run, "--out", version])
    assert line == (f"error: {version}: directory exists and is not empty; export into a new version directory, "
                    f"e.g. {tmp_path / 'srl' / '2'}")
    assert (version / "saved_model.pb").read_bytes() == b"an earlier export"


def test_export_of_a_run_without_trained_weights(capsys, tmp_path, untrained_run):
    out = tmp_path / "srl" / "1"
    line = one_error(capsys, ["export", "--run", untrained_run, "--out", out])
    assert line == (f"error: --run {untrained_run}: the run has no trained weights (neither best/model.weights.h5 nor "
                    "final.weights.h5: training has not reached its first evaluation); train it (python -m lisa_tf "
                    f"train --out {untrained_run}), or give --allow-untrained to export its untrained model")
    assert not out.exists()
    line = one_error(capsys, ["evaluate", "--run", untrained_run, "--data", EWT_DEV])
    assert line.startswith(f"error: {untrained_run}: the run has no trained weights")

    assert main(["export", "--run", str(untrained_run), "--out", str(out), "--allow-untrained"]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"warning: --run {untrained_run}: the run has no trained weights (neither "
                                         "best/model.weights.h5 nor final.weights.h5: training has not reached its "
                                         "first evaluation); exporting its untrained model (--allow-untrained)"]
    assert (out / "saved_model.pb").exists() and captured.out == f"SavedModel written to {out}\n"


# ---------------------------------------------------------------------------------- ensembles
def test_ensemble_of_different_model_kinds_is_refused_up_front(capsys, deepatt_run, lisa_run):
    line = one_error(capsys, ["evaluate", "--run", deepatt_run, lisa_run, "--data", EWT_DEV, "--limit", 5])
    assert line == (f"error: {lisa_run} is a lisa model and {deepatt_run} a deepatt model; an ensemble averages the "
                    "softmax outputs of runs of one model kind (all deepatt, all lisa, all sa or all selective) with "
                    "the same model.gold_predicates, trained on the same data (same vocabularies)")


def test_ensemble_of_loaded_models_of_different_kinds_is_refused(deepatt_run, lisa_run):
    from data_pipeline.splits import read_split
    from lisa_tf.labelling.batches import EnsembleError, predict_sentences
    from lisa_tf.models.runs import load_run

    models = [load_run(lisa_run), load_run(deepatt_run)]
    sentences = read_split(EWT_DEV, "conll12", None, 2)
    with pytest.raises(EnsembleError, match="model 2 is a deepatt model and model 1 a lisa model; an ensemble"):
        predict_sentences(models, sentences)


# ------------------------------------------------------------------ labels unseen in training
def test_evaluate_reports_gold_labels_the_run_never_saw(capsys, deepatt_run):
    import json

    assert main(["evaluate", "--run", str(deepatt_run), "--data", EWT_DEV, "--limit", "20", "--json"]) == 0
    captured = capsys.readouterr()
    metrics = json.loads(captured.out)
    # The run saw the first 20 EWT training sentences; the first 20 dev sentences hold these roles besides.
    assert metrics["unseen_labels"] == {"ARGM-DIR": 1, "ARGM-PRD": 1, "C-ARG1": 1}
    tags = (deepatt_run / "vocab" / "srl.txt").read_text().split()
    assert "B-ARG0" in tags and not {"B-ARGM-DIR", "B-ARGM-PRD", "B-C-ARG1"} & set(tags)
    assert captured.err.splitlines() == [
        "warning: 3 gold argument(s) have role labels the run never saw in training, so it cannot predict them "
        "(each counts as a miss): ARGM-DIR (1), ARGM-PRD (1), C-ARG1 (1)"]


def test_a_keras_file_with_python_code_is_refused_in_one_line(capsys, tmp_path):
    import keras

    path = tmp_path / "lambda.keras"
    keras.Sequential([keras.Input((3,)), keras.layers.Lambda(lambda x: x * 2)]).save(path)
    line = one_error(capsys, ["predict", path, "The cat sat."])
    assert line.startswith(f"error: {path}: refused: the file holds Python code (a Lambda layer), which Keras' "
                           "safe mode does not run")


def test_a_keras_file_missing_a_part_or_a_damaged_weights_file_is_one_line(capsys, tmp_path, deepatt_run):
    import shutil
    import zipfile

    from tests.models.conftest import EWT

    run = tmp_path / "run"
    shutil.copytree(deepatt_run, run)
    with zipfile.ZipFile(deepatt_run / "model.keras") as whole, zipfile.ZipFile(run / "model.keras", "w") as cut:
        for name in whole.namelist():
            if name != "config.json":
                cut.writestr(name, whole.read(name))
    line = one_error(capsys, ["predict", run, "The cat sat."])
    assert line == (f"error: {run / 'model.keras'}: not a readable .keras model file (There is no item named "
                    "'config.json' in the archive); replace it with a complete copy")
    shutil.copy(deepatt_run / "model.keras", run / "model.keras")
    best = run / "best" / "model.weights.h5"
    best.write_bytes(best.read_bytes()[:100])
    line = one_error(capsys, ["evaluate", "--run", run, "--data", EWT / "train.gold_conll.gz", "--limit", "2"])
    assert line.startswith(f"error: {best}: not a readable weights file (")


@pytest.mark.parametrize("out", ["/proc/lisa_tf_run", "/proc/self/lisa_tf_run/x"])
def test_train_into_a_place_that_cannot_be_written_is_one_line(capsys, out):
    line = one_error(capsys, ["train", "--config", OPEN_LISA, "--out", out, "train.max_steps=1"])
    assert line.startswith(f"error: --out {out}: cannot be written (")


def test_evaluate_refuses_a_predicate_column_with_two_v(capsys, deepatt_run, tmp_path):
    """Gold data whose predicate column holds two ``(V*)``: one error line naming file:line, exit 2."""
    data = tmp_path / "two_v.gold_conll"
    data.write_text("#begin document (d); part 000\n"
                    "d 0 0 They PRP (TOP(S(NP*) - - - - * (ARG0*) -\n"
                    "d 0 1 love VBP (VP* love love.01 - - * (V*) -\n"
                    "d 0 2 it PRP (NP*))) - - - - * (V*) -\n"
                    "\n#end document\n", encoding="utf-8")
    line = one_error(capsys, ["evaluate", "--run", deepatt_run, "--data", data])
    assert line == (f"error: {data}:4: a second (V*) in the predicate's column (tokens 2 and 3); expected one V phrase "
                    "per column: its predicate")
