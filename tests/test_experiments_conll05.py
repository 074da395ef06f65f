"""run_experiments end to end: ``conll05 --quick`` on a miniature conll05st-release tree laid out from the
public CoNLL-2005 test sets, and a data directory that lacks what the dataset needs."""

import shutil

import pytest

from tests.conftest import shared_path
from tests.test_experiments import SMOKE, _check_results, _run


@pytest.mark.slow(minutes=1.1)
def test_conll05_quick_on_a_miniature_release_tree(tmp_path):
    release = shared_path("conll05st", "conll05st-release")
    tree = tmp_path / "conll05st-release"
    layout = {"train": "test.wsj", "devel": "test.wsj", "test.wsj": "test.wsj", "test.brown": "test.brown"}
    for split, source in layout.items():
        for layer in ("words", "props", "synt.cha"):
            (tree / split / layer).mkdir(parents=True)
            shutil.copy(release / source / layer / f"{source}.{layer}.gz", tree / split / layer / f"{split}.{layer}.gz")
    out = tmp_path / "conll05"
    # One sentence model (with the parser of the "+D&M" rows) and one predicate model: the data layout
    # is what this test is about; tests/test_experiments.py runs the "+ MiniLM" twins.
    models = ("lisa", "deepatt_ffn")
    result = _run(["conll05", "--data-dir", str(tree), "--quick", "--out", str(out), "--models", *models, *SMOKE],
                  tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    _check_results(out, ["dev", "wsj", "brown"], models)


def test_incomplete_data_dir_says_what_is_expected(tmp_path):
    (tmp_path / "release" / "train" / "props").mkdir(parents=True)
    result = _run(["conll05", "--data-dir", str(tmp_path / "release"), "--quick"], tmp_path)
    assert result.returncode == 2
    assert "train/words/" in result.stderr and "Penn Treebank" in result.stderr
