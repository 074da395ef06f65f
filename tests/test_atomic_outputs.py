"""What ``export``, ``evaluate --out`` and ``package-model`` write appears whole or not at all: a kill at
any moment leaves the old output or the new one (lisa_tf/util/atomic_files.py). A kill is simulated by an
exception that no ``except Exception`` catches, raised right after the file operation it follows;
``tools/kill_resume.py --target`` sends real ``kill -9`` at random moments."""

from __future__ import annotations

import json
import os
import pathlib
import shutil

import pytest

from lisa_tf_cli.main import main
from tests.models.conftest import EWT


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs but ``finally`` blocks (which a real kill skips too,
    so the outputs checked here may not rely on them)."""


def _cut_writes(monkeypatch, fraction=0.5):
    """Every ``Path.write_text`` writes part of its text, then the process is "killed"."""
    def cut(self, data, encoding=None, errors=None, newline=None):
        with open(self, "w", encoding=encoding or "utf-8") as handle:
            handle.write(data[: int(len(data) * fraction)])
        raise Killed(str(self))

    monkeypatch.setattr(pathlib.Path, "write_text", cut)


def test_evaluate_out_keeps_the_old_file_when_killed_while_writing(deepatt_run, tmp_path, monkeypatch, capsys):
    out = tmp_path / "eval" / "dev.json"
    argv = ["evaluate", "--run", str(deepatt_run), "--data", str(EWT / "train.gold_conll.gz"), "--limit", "5",
            "--out", str(out)]
    assert main(argv) == 0
    first, first_md = out.read_text(), out.with_suffix(".md").read_text()
    json.loads(first)
    with monkeypatch.context() as patch:
        _cut_writes(patch)
        with pytest.raises(Killed):
            main(argv)
    assert out.read_text() == first and out.with_suffix(".md").read_text() == first_md
    assert sorted(p.name for p in out.parent.iterdir()) == ["dev.json", "dev.md"]


def test_evaluate_refuses_an_unwritable_out_before_evaluating(deepatt_run, tmp_path, monkeypatch, capsys):
    import lisa_tf.evaluation.runs as runs

    monkeypatch.setattr(runs, "evaluate_runs", lambda *a, **k: pytest.fail("evaluated before checking --out"))
    blocked = tmp_path / "file"
    blocked.write_text("")
    status = main(["evaluate", "--run", str(deepatt_run), "--data", str(EWT / "train.gold_conll.gz"),
                   "--out", str(blocked / "dev.json")])
    lines = capsys.readouterr().err.splitlines()
    assert status == 2 and len(lines) == 1
    assert lines[0].startswith(f"error: --out {blocked / 'dev.json'}: cannot be written")


def test_a_killed_export_leaves_no_version_a_server_would_load(deepatt_run, tmp_path, monkeypatch):
    """The run's config.json (the server's request limits) is copied after the SavedModel is written:
    an export killed in between must not leave a version directory behind."""
    import export.saved_model as saved_model
    from export.saved_model import export_run

    version = tmp_path / "srl" / "1"

    def killed_copy(source, target, **kwargs):
        raise Killed(str(target))

    with monkeypatch.context() as patch:
        patch.setattr(saved_model.shutil, "copy", killed_copy)
        with pytest.raises(Killed):
            export_run(deepatt_run, version)
    assert not version.exists()
    export_run(deepatt_run, version)  # the next export is not hindered by what the killed one left
    assert sorted(p.name for p in version.parent.iterdir()) == ["1"]
    assert {"config.json", "vocab_info.json"} <= {p.name for p in (version / "assets").iterdir()}


def _fake_experiment(tmp_path: pathlib.Path, lisa_run: pathlib.Path) -> pathlib.Path:
    results = tmp_path / "results"
    (results / "runs").mkdir(parents=True)
    for name in ("lisa", "parser"):  # package_models only needs trained runs under these names
        os.symlink(lisa_run, results / "runs" / name)
    (results / "results.json").write_text(json.dumps({
        "dataset": "propbank-ewt", "models": {"lisa": {"name": "LISA", "eval": {}}},
        "parser": {"name": "D&M", "eval": {}}}))
    return results


def _complete(package: pathlib.Path) -> str:
    """The package's generation (the text its files were written with), once all its files are there."""
    texts = {json.loads((package / "card.json").read_text())} | {
        (package / name).read_text() for name in ("MODEL_CARD.md", "model.keras", "assets/config.json")}
    assert len(texts) == 1, f"{package} mixes files of two packagings: {texts}"
    return texts.pop()


def test_package_model_killed_while_replacing_leaves_each_package_whole(lisa_run, tmp_path, monkeypatch):
    """The packaging steps that need trained models of a real experiment are replaced by writers of small
    files (each package's files all hold one generation's text); what is checked is how the finished
    packages replace the old ones in ``models/``."""
    import lisa_tf.models.runs as runs
    import lisa_tf.packages.model_card as model_card
    import lisa_tf.packages.writing as packaging

    results, out = _fake_experiment(tmp_path, lisa_run), tmp_path / "models"
    generation = {"text": "old"}

    def fake_package(model, run_dir, build, float16=False):
        for name in ("model.keras", "assets/config.json"):
            (build / name).parent.mkdir(parents=True, exist_ok=True)
            (build / name).write_text(generation["text"])
        return {}

    monkeypatch.setattr(packaging, "_package", fake_package)
    monkeypatch.setattr(packaging, "_check", lambda *a, **k: {})
    monkeypatch.setattr(packaging, "_slices", lambda *a, **k: {})
    model = runs.load_run(lisa_run)
    monkeypatch.setattr(packaging, "_load_packaged", lambda build: model)
    monkeypatch.setattr(packaging, "_repository_paths", lambda card: generation["text"])
    monkeypatch.setattr(runs, "load_run", lambda run_dir, *a, **k: model)
    monkeypatch.setattr(model_card, "srl_card_markdown", lambda card: generation["text"])
    monkeypatch.setattr(model_card, "parser_card_markdown", lambda card: generation["text"])
    packaging.package_models(results, out)
    assert _complete(out / "srl") == _complete(out / "parser") == "old"

    # "kill" right after each file operation in models/ in turn, from the first on
    operations = [(module, name) for module in (shutil, os) for name in ("rmtree", "move", "rename", "replace")
                  if hasattr(module, name)]
    for kill_after in range(1, 12):
        generation["text"] = f"new {kill_after}"
        seen = {"count": 0}

        def counting(function):
            def operation(*args, **kwargs):
                result = function(*args, **kwargs)
                if any(str(a).startswith(str(out)) for a in args):
                    seen["count"] += 1
                    if seen["count"] == kill_after:
                        raise Killed(f"after {function.__name__}{args}")
                return result
            return operation

        with monkeypatch.context() as patch:
            for module, name in operations:
                patch.setattr(module, name, counting(getattr(module, name)))
            try:
                packaging.package_models(results, out)
            except Killed:
                pass
        assert seen["count"] >= kill_after or kill_after > 1, "no file operation in models/ was seen"
        for kind in ("srl", "parser"):
            _complete(out / kind)
    packaging.package_models(results, out)  # a packaging after the kills leaves nothing else behind
    assert sorted(p.name for p in out.iterdir()) == ["parser", "srl"]
