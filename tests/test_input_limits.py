"""One sentence-length policy for the library, ``predict`` and ``parse`` (data_pipeline/input_limits.py), and
input lines that cannot be labelled reported and counted without costing the lines around them."""

from __future__ import annotations

import io
import json

import pytest

from data_pipeline.input_limits import FALLBACK_MAX_TOKENS_PER_SENTENCE, InputTooLong, model_max_tokens_per_sentence
from data_pipeline.splits import read_split
from data_pipeline.text_lines import text_lines
import lisa_tf
from lisa_tf.models.runs import load_run_config
from lisa_tf_cli.main import main
from tests.test_predictor import TEXT


def _longest_training_sentence(run) -> int:
    """Read from the run's training data itself (not from what training recorded)."""
    data = load_run_config(run).data
    return max(len(s) for s in read_split(data.train, data.format, None, data.max_train_sentences))


def test_the_limit_is_the_longest_training_sentence_for_runs_and_exports(lisa_export, tmp_path):
    run, export = lisa_export
    longest = _longest_training_sentence(run)
    assert lisa_tf.load(run).max_sentence_tokens == longest
    assert lisa_tf.load(run / "model.keras").max_sentence_tokens == longest  # a run's .keras file
    assert lisa_tf.load(export).max_sentence_tokens == longest
    assert lisa_tf.load(export.parent).max_sentence_tokens == longest  # the base directory: its newest version
    assert model_max_tokens_per_sentence(tmp_path) == FALLBACK_MAX_TOKENS_PER_SENTENCE  # records nothing
    assert lisa_tf.load(run, max_sentence_tokens=7).max_sentence_tokens == 7


def test_a_sentence_over_the_limit_is_refused_before_the_model_runs(lisa_export, monkeypatch):
    run, export = lisa_export
    longest = _longest_training_sentence(run)
    long_sentence = " ".join(["said"] * (longest + 1)) + " ."
    for predictor in (lisa_tf.load(run), lisa_tf.load(export)):
        with pytest.raises(InputTooLong, match=rf"^text sentence 3: {longest + 2} tokens, over the model's limit "
                                               rf"of {longest} tokens per sentence"):
            predictor.predict(f"{TEXT} {long_sentence}")
        with pytest.raises(InputTooLong, match=r"^tokens\[1\]: "):
            predictor.predict(tokens=[["It", "was", "new", "."], long_sentence.split()])
    # "skip": the other sentences are labelled as they would be alone; the long one comes back unlabelled
    predictor = lisa_tf.load(run)
    results = predictor.predict(paragraphs=["It was new.", f"{TEXT} {long_sentence}"], over_limit="skip")
    assert [r.get("skipped", {}).get("input") for r in results] == [None, None, None, 1]
    assert results[3]["predicates"] == [] and len(results[3]["tokens"]) == longest + 2
    assert results[:3] == predictor.predict("It was new.") + predictor.predict(TEXT)


def test_a_paragraph_over_a_million_characters_is_refused_before_it_is_tokenised(lisa_run, monkeypatch):
    import lisa_tf.labelling.predictor as predictor_module

    def no_tokenising(text):
        raise AssertionError("the paragraph reached the tokeniser")

    monkeypatch.setattr(predictor_module, "split_and_tokenize", no_tokenising)
    with pytest.raises(InputTooLong, match=r"^paragraphs\[0\]: 1,000,001 characters, over the limit of 1,000,000"):
        lisa_tf.load(lisa_run).predict(paragraphs=["a" * 1_000_001])


def test_a_run_without_a_space_longer_than_any_sentence_within_the_limit_is_refused_before_it_is_tokenised(
        lisa_run, monkeypatch):
    import lisa_tf.labelling.predictor as predictor_module

    predictor = lisa_tf.load(lisa_run, max_sentence_tokens=20)  # at most 20 x 512 characters in a sentence
    tokenised = []
    monkeypatch.setattr(predictor_module, "split_and_tokenize",
                        lambda text: tokenised.append(text) or predictor_module.tokenize(text) and [])
    chain = "It was new. " + "a-" * (20 * 512 // 2) + "a"  # 10,241 characters, a million tokens in the case
    with pytest.raises(InputTooLong, match=r"^paragraphs\[0\]: 10,241 characters without a space, more than a "
                                           r"sentence within the model's limit of 20 tokens per sentence holds"):
        predictor.predict(paragraphs=[chain])
    assert tokenised == []
    predictor.predict(paragraphs=["x" * (20 * 512)])  # one run as long as the limit allows: tokenised
    assert tokenised == ["x" * (20 * 512)]


def test_the_longest_run_lies_inside_one_sentence():
    """What makes the refusal above sound: the tokeniser's sentences never split a run without
    whitespace (character by character, as the tokeniser's whitespace class reads it), and
    ``longest_run`` is the longest such run."""
    import itertools
    import random
    import re

    from data_pipeline.tokenizer import SEP, WS, longest_run, split_sentences

    pieces = ["a", "Dog", "-", ".", "!", "?", "Mr.", "'s", '"', ")", "3", " ", "  ", "\n", "\n\n", "\u00a0",
              "\u2009", "\t", SEP, "\u200b", "e.g.", "...", "U.S.", "5pm", "a@b.com"]
    generator = random.Random(7)
    for _ in range(500):
        text = "".join(generator.choice(pieces) for _ in range(generator.randint(1, 40)))
        runs, position = [], 0
        for is_gap, group in itertools.groupby(text, lambda c: c == SEP or re.fullmatch(WS, c) is not None):
            length = len(list(group))
            if not is_gap:
                runs.append((position, position + length))
            position += length
        spans = split_sentences(text)
        for start, end in runs:
            inside = [s for s in spans if s[0] < end and start < s[1]]
            assert len(inside) == 1 and inside[0][0] <= start and end <= inside[0][1], (text, start, end, spans)
        assert longest_run(text) == max((end - start for start, end in runs), default=0), text


@pytest.mark.parametrize("bad", [0, -3, 2.5, "4096"])
def test_a_token_budget_that_is_not_a_positive_whole_number_is_refused(lisa_run, bad):
    with pytest.raises(lisa_tf.labelling.predictor.PredictionInputError, match="token_budget: expected a positive whole number"):
        lisa_tf.load(lisa_run, token_budget=bad)


@pytest.mark.parametrize("bad", [0, -3, 2.5])
def test_a_sentence_limit_that_is_not_a_positive_whole_number_is_refused_not_read_as_the_default(lisa_export, bad):
    from lisa_tf.labelling.predictor import ExportPredictor, PredictionInputError, Predictor

    run, export = lisa_export
    for make in (lambda: lisa_tf.load(run, max_sentence_tokens=bad), lambda: lisa_tf.load(export, max_sentence_tokens=bad),
                 lambda: Predictor(lisa_tf.load(run).model, max_sentence_tokens=bad),
                 lambda: ExportPredictor(export, max_sentence_tokens=bad)):
        with pytest.raises(PredictionInputError, match=rf"max_sentence_tokens: expected a positive whole number, found {bad}"):
            make()


def test_lines_are_decoded_one_by_one_and_read_in_bounded_pieces():
    class Counting(io.BytesIO):
        largest = 0

        def readline(self, size=-1):
            assert size > 0, "an unbounded read of a line"
            line = super().readline(size)
            Counting.largest = max(Counting.largest, len(line))
            return line

    data = b"first line\n\xff\xfe not UTF-8\n" + b"x" * 50_000 + b"\n\nlast line\n"
    lines = list(text_lines(Counting(data), limit=1000))
    assert [(n, text) for n, text, _ in lines] == [(1, "first line"), (2, None), (3, None), (5, "last line")]
    assert lines[1][2].startswith("not valid UTF-8 (byte 0xff at byte 1 of the line)")
    assert lines[2][2].startswith("50,000 bytes, over the limit of 1,000 characters per line")
    assert Counting.largest <= 1 << 20


def test_predict_labels_the_good_lines_and_reports_the_bad_ones(lisa_run, tmp_path, capsys):
    longest = _longest_training_sentence(lisa_run)
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"It was new.\n\xff bad bytes\n" + " ".join(["said"] * (longest + 1)).encode() + b"\n"
                     + TEXT.encode() + b"\n")
    out = tmp_path / "frames.jsonl"
    status = main(["predict", str(lisa_run), "--input", str(path), "--format", "jsonl", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2, err
    predictor = lisa_tf.load(lisa_run)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [record.pop("line") for record in records] == [1] + [4] * len(predictor.predict(TEXT))
    assert records == predictor.predict("It was new.") + predictor.predict(TEXT)
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert [w.split(": ")[1] for w in warnings] == [f"{path}:2", f"{path}:3"]
    assert "not valid UTF-8" in warnings[0] and f"{longest + 1} tokens, over the model's limit" in warnings[1]
    assert err.splitlines()[-1].endswith("; 2 skipped")


def test_parse_skips_and_counts_what_it_cannot_parse(tmp_path, capsys):
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"It was new .\n\xff bad bytes\nThe cat sat .\n")
    out = tmp_path / "parsed.conllu"
    status = main(["parse", "--input", str(path), "--tokenized", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert [block.splitlines()[0].split("\t")[1] for block in out.read_text().strip().split("\n\n")] == ["It", "The"]
    assert f"warning: {path}:2: not valid UTF-8" in err and err.splitlines()[-1].endswith("; 1 skipped")


@pytest.mark.parametrize("command", ["predict", "parse"])
def test_batch_tokens_must_be_positive(capsys, command):
    argv = [command, "--batch-tokens", "0"] + (["--input", "-"] if command == "parse" else ["The cat sat."])
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert "argument --batch-tokens: expected a whole number of at least 1, found '0'" in capsys.readouterr().err


def _package_assets(tmp_path, info: str, config: str = '{"train": {"batch_tokens": 2500}}'):
    assets = tmp_path / "assets"
    assets.mkdir(exist_ok=True)
    (assets / "vocab_info.json").write_text(info, encoding="utf-8")
    (assets / "config.json").write_text(config, encoding="utf-8")
    return tmp_path


def test_recorded_sizes_are_checked_and_capped_at_what_a_model_can_run(tmp_path):
    """A package's ``assets/vocab_info.json`` sets the limits: a longest sentence of 100,000 tokens let one
    request of 2,000 tokens end the server, ``"not json"`` silently became the 2,500-token budget."""
    from data_pipeline.input_limits import SIZE_CAPS, InvalidSizes, TrainingSizes, training_sizes

    shipped = training_sizes(_package_assets(tmp_path, '{"longest_sentence": 159, "longest_token": 140}'))
    assert shipped == TrainingSizes(2500, 159, 140)
    huge = _package_assets(tmp_path, '{"longest_sentence": 100000, "longest_token": 1000000}',
                           '{"train": {"batch_tokens": 1000000000000}}')
    assert training_sizes(huge) == TrainingSizes(SIZE_CAPS["batch_tokens"], SIZE_CAPS["longest_sentence"],
                                                 SIZE_CAPS["longest_token"])
    assert model_max_tokens_per_sentence(huge) == SIZE_CAPS["longest_sentence"]
    assert training_sizes(_package_assets(tmp_path, "{}", "{}")) == TrainingSizes()  # records nothing: defaults
    info = tmp_path / "assets" / "vocab_info.json"
    for text, message in [("not json", "expected a JSON object as training writes it"),
                          ('{"longest_sentence": "159"}', 'longest_sentence is "159"; expected a positive whole number'),
                          ('{"longest_sentence": 0}', "longest_sentence is 0; expected a positive whole number"),
                          ('{"longest_token": true}', "longest_token is true; expected a positive whole number"),
                          ("[159]", "the file is list; expected a JSON object"),
                          ("[" * 100_000, "expected a JSON object as training writes it")]:
        with pytest.raises(InvalidSizes) as refused:
            training_sizes(_package_assets(tmp_path, text))
        assert str(refused.value).startswith(f"{info}: ") and message in str(refused.value), text
    with pytest.raises(InvalidSizes, match=r"config.json: train is list; expected a JSON object"):
        training_sizes(_package_assets(tmp_path, "{}", '{"train": [1]}'))


def test_a_package_with_a_bad_size_record_is_refused_when_it_loads(lisa_export, tmp_path):
    import shutil

    from data_pipeline.input_limits import InvalidSizes

    _, export = lisa_export
    copy = tmp_path / "1"
    shutil.copytree(export, copy)
    (copy / "assets" / "vocab_info.json").write_text("not json", encoding="utf-8")
    with pytest.raises(InvalidSizes, match=r"vocab_info.json: expected a JSON object"):
        lisa_tf.load(copy)
