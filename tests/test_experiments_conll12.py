"""run_experiments on CoNLL-2012: ``conll12 --quick`` end to end on a miniature OntoNotes-layout tree
(``train/ development/ test/`` of ``.gold_conll`` documents, laid out from the shipped PropBank-EWT
``.gold_conll`` files) with every model the runner plans, and every config of the plan checked before
the first training starts."""

import gzip
import pathlib
import shutil

import pytest

from lisa_tf.config import ConfigError
from lisa_tf_cli import experiments
from tests.conftest import DATA
from tests.test_experiments import SMOKE, _check_results, _run

#: documents of each shipped split laid out per OntoNotes split: 40 training sentences, 10 dev (one of
#: 8-16 tokens for the syntax-head figure) and 10 test
DOCUMENTS = {"train": ("train", 1), "development": ("dev", 2), "test": ("test", 2)}

#: The models the runner plans for conll12 (SA, LISA, DeepAtt-FFN, Selective Connection; the D&M parser
#: for LISA's "+D&M" rows), by key and table name.
PLAN = {"sa": "SA", "lisa": "LISA", "deepatt_ffn": "DeepAtt-FFN", "selective": "Selective Conn."}



def ontonotes_tree(root: pathlib.Path) -> pathlib.Path:
    """``root/{train,development,test}/data/english/annotations/DOC_ID.gold_conll``, one file per
    document (the layout of the CoNLL-2012 release: the document id is the file's path)."""
    for split, (shipped, count) in DOCUMENTS.items():
        with gzip.open(DATA / "propbank-ewt" / f"{shipped}.gold_conll.gz", "rt", encoding="utf-8") as handle:
            documents, lines = [], None
            for line in handle:
                if line.startswith("#begin document"):
                    if len(documents) == count:
                        break
                    lines = [line]
                    documents.append((line.split("(", 1)[1].split(")", 1)[0], lines))
                else:
                    lines.append(line)
        for doc_id, lines in documents:
            path = root / split / "data" / "english" / "annotations" / f"{doc_id}.gold_conll"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(lines), encoding="utf-8")
    return root


@pytest.mark.slow(minutes=2.1)
def test_conll12_quick_on_a_miniature_ontonotes_tree(tmp_path):
    """The whole plan (no ``--models``): a config of the plan that is missing or invalid fails the run
    (Selective Connection's was missing, found after the other models had trained)."""
    tree = ontonotes_tree(tmp_path / "conll-2012")
    out = tmp_path / "conll12"
    result = _run(["conll12", "--data-dir", str(tree), "--quick", "--out", str(out), *SMOKE], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    _check_results(out, ["dev", "test"], tuple(PLAN))
    text = (out / "results.md").read_text()
    for key, name in PLAN.items():
        assert f"configs/conll12/{key}.toml" in result.stdout, key
        assert f"| {name} |" in text, name


@pytest.fixture
def project_copy(tmp_path, monkeypatch):
    """The project's configs in a copy the runner reads (``experiments.ROOT``), and a training that
    fails the test if it is ever started."""
    root = tmp_path / "project"
    shutil.copytree(experiments.ROOT / "configs", root / "configs")
    monkeypatch.setattr(experiments, "ROOT", root)
    started = []
    monkeypatch.setattr("lisa_tf.training.loop.train", lambda config, run_dir, **_: started.append(run_dir))
    data = tmp_path / "data"
    for split in ("train", "development", "test"):
        (data / split).mkdir(parents=True)
    return root, data, started


def test_every_config_of_the_plan_is_checked_before_the_first_training(project_copy, tmp_path):
    root, data, started = project_copy
    (root / "configs" / "conll12" / "selective.toml").unlink()
    with pytest.raises(ConfigError, match=r"configs/conll12/selective\.toml: cannot read config"):
        experiments.run_experiments("conll12", str(data), quick=True, out=str(tmp_path / "out"))
    assert started == [] and not (tmp_path / "out").exists()


def test_an_invalid_config_is_refused_with_its_file_and_key_before_training(project_copy, tmp_path):
    root, data, started = project_copy
    deepatt = root / "configs" / "conll12" / "deepatt_ffn.toml"
    deepatt.write_text(deepatt.read_text().replace("num_heads = 8", "num_heads = 7"))
    with pytest.raises(ConfigError, match=r"configs/conll12/deepatt_ffn\.toml \(run deepatt_ffn\): model\.hidden_size"):
        experiments.run_experiments("conll12", str(data), quick=False, out=str(tmp_path / "out"))
    assert started == []
