"""What each model kind needs from the data (docs/data-formats.md): a CoNLL-2012 file whose parse
column holds no tree ("*" on every token) reads as sentences without a parse; LISA then refuses to
train with an error naming the two ways to give one, and SA trains on it."""

from __future__ import annotations

import gzip

from data_pipeline.splits import read_split
from lisa_tf_cli.main import main
from tests.conftest import DATA, ROOT
from tests.models.conftest import tiny_overrides
from tests.models.test_lisa import TINY_LISA


def _without_trees(path, sentences: int = 20) -> None:
    """The first EWT training sentences with their parse column blanked to "*" (a file without trees)."""
    out, seen = [], 0
    for line in gzip.open(DATA / "propbank-ewt" / "train.gold_conll.gz", "rt", encoding="utf-8"):
        line = line.rstrip("\n")
        if line and not line.startswith("#"):
            columns = line.split()
            columns[5] = "*"
            line = "  ".join(columns)
        out.append(line)
        if not line:
            seen += 1
            if seen == sentences:
                break
    path.write_text("\n".join(out + ["#end document"]) + "\n", encoding="utf-8")


def _overrides(path, **extra) -> list[str]:
    return [*tiny_overrides(**extra), f"data.train={path}", f"data.dev={path}", "data.parse_train=",
            "data.parse_dev=", "train.max_steps=2", "train.eval_every=2"]


def test_a_file_without_trees_is_read_without_a_parse_and_lisa_says_how_to_give_one(tmp_path, capsys):
    data = tmp_path / "no_trees.gold_conll"
    _without_trees(data)
    sentences = read_split(str(data), "conll12")
    assert len(sentences) == 20 and all(s.heads is None for s in sentences) and sum(len(s.predicates) for s in sentences)
    assert main(["train", "--config", str(ROOT / "configs/open/lisa.toml"), "--out", str(tmp_path / "lisa"),
                 "--verbose", "0", *_overrides(data, **TINY_LISA)]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"error: data.train {data}: has no dependency trees")
    assert "tree column in the file" in error and "data.parse_train=FILE.conllu" in error
    assert "docs/data-formats.md" in error
    assert not (tmp_path / "lisa").exists()  # refused before any work
    sa = ["train", "--config", str(ROOT / "configs/open/sa.toml"), "--out", str(tmp_path / "sa"), "--verbose", "0",
          *_overrides(data)]
    # (the tiny model's 32-wide embeddings are not the config's 50-dimensional GloVe: a clear error too)
    assert main(sa) == 2 and "set model.embedding_size=50" in capsys.readouterr().err
    assert main(sa + ["data.embeddings="]) == 0
