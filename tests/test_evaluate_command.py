"""``evaluate``'s output: its tables on the terminal (the metrics JSON in ``--out FILE``, or on standard
output with ``--json``), and ``n/a`` for a figure the model does not predict or the data cannot score,
in evaluate's tables and in the experiments' results table."""

from __future__ import annotations

import json
import shutil

from lisa_tf_cli.main import main
from tests.conftest import DATA

TRAIN = str(DATA / "propbank-ewt" / "train.gold_conll.gz")


def test_evaluate_prints_its_tables_and_the_json_only_when_asked(deepatt_run, tmp_path, capsys):
    argv = ["evaluate", "--run", str(deepatt_run), "--data", TRAIN, "--limit", "5"]
    assert main(argv) == 0
    tables = capsys.readouterr().out
    assert tables.startswith("SRL\n\n| Model | single run P | single run R | single run F1 |") and "{" not in tables
    assert main(argv + ["--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["sentences"] == 5 and "f1" in metrics["srl"]
    out = tmp_path / "dev.json"
    assert main(argv + ["--out", str(out)]) == 0
    shown = capsys.readouterr().out
    assert json.loads(out.read_text()) == metrics
    assert shown == tables + f"metrics written to {out} (tables in {out.with_suffix('.md')})\n"
    assert out.with_suffix(".md").read_text() == tables


def test_what_a_model_does_not_predict_or_the_data_cannot_score_is_n_a(deepatt_run, lisa_run, tmp_path):
    """DeepAtt finds its predicates (its predicate identifier) but tags no POS and parses nothing: POS,
    UAS and LAS are n/a, not the 100.00 of the data's own tags passed through. LISA on a ``.gold_conll``
    file without a CoNLL-U file beside it reads trees converted from the constituency parse, labelled
    NMOD, SBJ, …, none of which is among its UD labels: LAS is n/a, not 0.00; POS and UAS are scored."""
    from lisa_tf.evaluation.report import results_markdown
    from lisa_tf.evaluation.runs import evaluate_runs, metrics_markdown

    deepatt = evaluate_runs([str(deepatt_run)], TRAIN, limit=5)
    assert {k: deepatt["parsing"][k] for k in ("pos", "uas", "las")} == {"pos": None, "uas": None, "las": None}
    assert "predicate_f1" in deepatt["parsing"] and "Parsing" not in metrics_markdown(deepatt)

    alone = tmp_path / "train.gold_conll.gz"
    shutil.copy(TRAIN, alone)
    lisa = evaluate_runs([str(lisa_run)], str(alone), limit=5)
    assert lisa["parsing"]["las"] is None and lisa["parsing"]["uas"] > 0 and lisa["parsing"]["pos"] > 50
    lines = metrics_markdown(lisa).splitlines()
    row = lines[lines.index("Parsing") + 4]
    assert row == f"| {lisa_run} | {lisa['parsing']['pos']:.2f} | {lisa['parsing']['uas']:.2f} | n/a |"

    rest = {"status": 200}
    results = {"dataset": "open", "seconds": 1, "models": {
        "lisa": {"name": "LISA", "eval": {"dev.predicted": lisa}, "rest": rest},
        "deepatt_ffn": {"name": "DeepAtt-FFN", "eval": {"dev.predicted": deepatt}, "rest": rest}}}
    text = results_markdown(results, ["dev"]).splitlines()
    assert next(line for line in text if line.startswith("| DeepAtt-FFN (Dev) |")) == "| DeepAtt-FFN (Dev) | n/a | n/a | n/a |"
    assert next(line for line in text if line.startswith("| LISA (Dev) |")).endswith(" | n/a |")
