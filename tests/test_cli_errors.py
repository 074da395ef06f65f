"""User mistakes on the command line: one ``error: …`` line on stderr naming the file, key or flag and
what is expected, exit status 2, no traceback; and nothing written where the mistake stopped a command."""

from __future__ import annotations

import pytest

from lisa_tf.cli import main
from lisa_tf.config import PROJECT_ROOT

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
