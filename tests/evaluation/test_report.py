"""results.md: the "+D&M" rows and the parser's own scores in the parsing table."""

from lisa_tf.evaluation.report import results_markdown


def _srl(f1):
    return {"srl": {"precision": f1, "recall": f1, "f1": f1}, "srl_swap": {"precision": f1, "recall": f1, "f1": f1}}


def _results(parse_source):
    lisa = {f"{split}.{condition}": _srl(f1) for split in ("dev", "test")
            for condition, f1 in (("predicted", 70.0), ("external_parse", 72.5), ("gold_parse", 80.0))}
    return {
        "dataset": "open",
        "parse_source": parse_source,
        "models": {"lisa": {"name": "LISA", "eval": lisa, "rest": {"status": 200}}},
        "parser": {"name": "D&M parser", "eval": {"dev.parse": {"pos": 93.1, "uas": 88.4, "las": 85.2},
                                                  "test.parse": {"pos": 93.0, "uas": 88.0, "las": 85.0}}},
        "seconds": 60,
    }


def test_dm_parse_rows_and_parser_scores():
    text = results_markdown(_results("D&M"), ["dev", "test"])
    row = next(line for line in text.splitlines() if line.startswith("| LISA + D&M parse"))
    assert "72.50" in row
    parser_rows = [line for line in text.splitlines() if line.startswith("| D&M parser")]
    assert len(parser_rows) == 2 and "88.40" in parser_rows[0] and "85.00" in parser_rows[1]
    assert "+ external parse" not in text


def test_parse_dir_rows_keep_their_name():
    results = _results("external")
    del results["parser"]
    text = results_markdown(results, ["dev", "test"])
    assert "| LISA + external parse" in text and "D&M" not in text
