"""A mistyped path, model name or format is reported before TensorFlow or the model is loaded: the
commands' ``check(args)`` (:func:`lisa_tf_cli.main.main`). Each case runs ``python -m lisa_tf`` in a new
process with ``-X importtime`` and checks the one ``error:`` line, exit status 2, and that neither
TensorFlow nor Keras (nor Beam, which ``label-corpus`` imports for its pipeline) was imported."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

EWT_DEV = str(ROOT / "data" / "propbank-ewt" / "dev.gold_conll.gz")


def _fast_error(argv, cwd) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "lisa_tf", *map(str, argv)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    errors = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(errors) == 1 and errors[0].startswith("error: "), errors
    assert not {"tensorflow", "keras", "apache_beam"} & imported
    return errors[0]


@pytest.mark.parametrize("argv, expected", [
    (["predict", "--input", "MISSING.txt"],
     "error: --input MISSING.txt: No such file or directory; expected a readable text file"),
    (["predict", "--model", "NO_SUCH_NAME", "The cat sat."], "error: NO_SUCH_NAME: no such file or directory, "
                                                             "and no shipped model of that name (shipped: "),
    (["predict", "--model", ".", "The cat sat."], "error: .: not a run directory (model.keras), a .keras file or a "
                                                  "SavedModel export"),
    (["predict", "The cat sat.", "--out", "no/such/dir/out.txt"],
     "error: --out no/such/dir/out.txt: No such file or directory; expected a writable text file"),
    (["predict", "--parse", "MISSING.conllu"], "error: --parse MISSING.conllu: No such file or directory"),
    (["predict"], "error: nothing to label"),
    (["evaluate", "--model", "NO_SUCH_NAME", "--data", EWT_DEV], "error: --model NO_SUCH_NAME: no such file"),
    (["evaluate", "--model", "srl", "--data", "MISSING.gold_conll"], "error: --data MISSING.gold_conll: no such file"),
    (["evaluate", "--model", "srl", "--data", EWT_DEV, "--format", "conll2012"],
     "error: --format conll2012: unknown format; expected one of "),
])
def test_a_wrong_path_name_or_format_is_reported_before_tensorflow_is_imported(tmp_path, argv, expected):
    assert _fast_error(argv, tmp_path).startswith(expected)


def _frame_index_with(tmp_path, change) -> str:
    """The index of the fixture PropBank frames (bark, give, kill, await), saved after ``change`` (a
    function of its JSON)."""
    import gzip
    import json

    from data_pipeline.frame_index import FrameIndex
    from tests.conftest import FIXTURES

    data = FrameIndex.from_frame_files(FIXTURES / "propbank-frames" / "v3.4.0", {
        "repository": "https://github.com/propbank/propbank-frames", "commit": "v3.4.0", "licence": "CC BY-SA 4.0",
        "attribution": "PropBank frames 3.4"}).to_json()
    change(data)
    path = tmp_path / "frames.json.gz"
    path.write_bytes(gzip.compress(json.dumps(data).encode("utf-8")))
    return str(path)


def _barker(data) -> dict:
    return data["rolesets"]["bark.01"]["roles"][0]


@pytest.mark.parametrize("command, change, expected", ids=["predict", "export", "label-corpus"], argvalues=[
    # unchecked: a KeyError traceback once the model had labelled the first sense
    (["predict", "The dog barked."], lambda data: data.pop("rolesets"),
     "the index: expected a frame index (format, source, counts, skipped, rolesets), found no 'rolesets'"),
    # unchecked: a TensorFlow error while the export's meaning tables were built (Invalid number of columns)
    (["export", "--model", "srl", "--out", "export/1"], lambda data: _barker(data).update(f="PAG\tX"),
     r"rolesets['bark.01'].roles[0].f: expected a string without white space, '|' or control characters, found "
     r"'PAG\tX' (a tab at character 4)"),
    # unchecked: the whole corpus labelled, then every sentence with a sense written as a dead letter
    (["label-corpus", "--input", "text.txt", "--output", "out/frames"],
     lambda data: _barker(data).update(vn=[["manner_speaking-37.3"]]),
     "rolesets['bark.01'].roles[0].vn[0]: expected a [VerbNet class, thematic role] pair (a list of 2 strings), "
     "found a list of 1 item"),
])
def test_a_malformed_frame_index_is_reported_before_tensorflow_is_imported(tmp_path, command, change, expected):
    (tmp_path / "text.txt").write_text("The dog barked at the mailman.\n", encoding="utf-8")
    frames = _frame_index_with(tmp_path, change)
    assert _fast_error([*command, "--frames", frames], tmp_path) == f"error: --frames {frames}: {expected}"


_EXPECTED_MODEL_BASE_PATH = ("expected a directory of numeric version directories (1/, 2/, ...) holding SavedModels, "
                             "a packaged model or a run directory")


@pytest.mark.parametrize("argv, expected", [
    # each was one line (or a traceback) only once TensorFlow had loaded, 8 to 28 s later
    (["parse", "--input", "MISSING.txt"],
     "error: --input MISSING.txt: no such file; expected a text file, a CoNLL file or - for standard input"),
    (["parse", "NO_SUCH_NAME", "--input", "text.txt"],  # a FileNotFoundError traceback
     "error: NO_SUCH_NAME: no such file or directory, and no shipped model of that name (shipped: "),
    (["parse", "--input", "-", "--format", "conllu"],
     "error: --format conllu: give the CoNLL file's path, not standard input"),
    (["export", "--model", "NO_SUCH_NAME", "--out", "exports/x/1"],
     "error: --model NO_SUCH_NAME: no such file or directory, and no shipped model of that name (shipped: "),
    (["export", "--model", "run", "--out", "exports/x/1"],
     "error: --model run: not a packaged model (model.keras beside card.json); export a run directory with --run"),
    (["train", "--init", "NO_SUCH_NAME", "--out", "runs/x"],
     "error: train.init NO_SUCH_NAME: no such file or directory, and no shipped model of that name (shipped: "),
    (["serve", "--model_name", "NO_SUCH_NAME"],
     "error: no --model_base_path given and 'NO_SUCH_NAME' is not a shipped model; shipped: "),
    (["serve", "--model_base_path", "NO_SUCH_DIR"],
     f"error: --model_base_path NO_SUCH_DIR: no such directory; {_EXPECTED_MODEL_BASE_PATH}"),
    (["serve", "--model_base_path", "text.txt"],
     f"error: --model_base_path text.txt: a file, not a directory; {_EXPECTED_MODEL_BASE_PATH}"),
    # a model file was "found no such directory", though it exists
    (["serve", "--model_base_path", "run/model.keras"],
     "error: --model_base_path run/model.keras: a model file, not a directory; serve the packaged model or run "
     "directory that holds it (--model_base_path run), whose export is built on the first start"),
    (["serve", "--model_base_path", "mine.keras"],
     "error: --model_base_path mine.keras: a model file, not a directory; serve the packaged model or run directory "
     "it comes from, or export that (python -m lisa_tf export --run RUN --out EXPORTS/NAME/1) and serve the export's "
     "base path (--model_base_path EXPORTS/NAME)"),
    # found missing only once Beam was imported
    (["label-corpus", "--input", "MISSING.txt", "--output", "out/o"],
     "error: --input MISSING.txt: no file matches; expected a file or a glob of text files"),
    (["label-corpus", "--input", "in/*.txt", "--output", "out/o"],
     "error: --input in/*.txt: no file matches; expected a file or a glob of text files"),
    (["label-corpus", "--input", "*.txt", "--output", "out/o"],  # Beam matches nothing without a directory
     "error: --input *.txt: no file matches (a pattern without a directory matches nothing: give one, e.g. "
     "./*.txt); expected a file or a glob of text files"),
    # passed the check (root may write anywhere, by its permissions), then a Beam traceback 10 s later
    (["label-corpus", "--input", "text.txt", "--output", "/proc/lisa_tf_output/o"],
     "error: --output /proc/lisa_tf_output/o: cannot create /proc/lisa_tf_output ("),
])
def test_a_wrong_model_or_path_of_the_other_commands_is_reported_before_tensorflow_is_imported(tmp_path, argv,
                                                                                               expected):
    (tmp_path / "text.txt").write_text("The dog barked.\n", encoding="utf-8")
    (tmp_path / "mine.keras").write_bytes(b"")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "model.keras").write_bytes(b"")
    assert _fast_error(argv, tmp_path).startswith(expected)
