"""A mistyped path, model name or format is reported before TensorFlow or the model is loaded: the
commands' ``check(args)`` (:func:`lisa_tf_cli.main.main`). Each case runs ``python -m lisa_tf`` in a new
process with ``-X importtime`` and checks the one ``error:`` line, exit status 2, and that neither
TensorFlow nor Keras was imported."""

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
    assert not {"tensorflow", "keras"} & imported
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
