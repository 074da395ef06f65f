"""Tokeniser and sentence splitter (``data_pipeline.tokenizer``) against UD English-EWT test.

Data: the test documents of ``../shared/data/ud-english-ewt`` (``not-to-release/file-lists/files.test``,
in that order; 316 documents, 2,077 sentences), or any CoNLL-U files given with ``--conllu``.

Gold tokens. Each sentence's ``# text`` line is the raw input. The gold tokens are the **syntactic
words** (what the SRL corpora and this project's models use), each with its character span in the
``# text`` string: the surface tokens (multiword-token range lines ``n-m`` and the words outside ranges)
are walked through the text (skipping whitespace; every form is checked to occur verbatim), and the
words of a multiword token get consecutive sub-spans (``don't`` = ``do`` [0, 2) + ``n't`` [2, 5)); in
EWT every multiword token is the concatenation of its words, a range where it is not would be kept as
one gold token (counted in ``mwt_not_concatenated``). Empty nodes are skipped. A predicted token is
right when a gold token has the same text and the same span; so ``its`` (EWT: ``it`` + ``s``) costs two
gold tokens, and a sentence is right when its token list equals the gold list.

Figures: (a) ``token_recall`` = gold tokens reproduced / gold tokens (target ≥ 99 %), with precision
and F1; (b) ``sentence_accuracy`` = sentences tokenised entirely right (target ≥ 95 %); (c) the
splitter on paragraphs rebuilt from the ``# text`` lines (joined with one space; a paragraph ends at
``# newpar`` / ``# newdoc``): ``boundary`` P/R/F1 of the sentence-internal boundaries (the end offset
of every sentence but a paragraph's last; the paragraph end is given and not scored), next to
``punctuated_boundary_share``, the share of those boundaries that follow ``.``, ``!``, ``?`` or ``…``
(what a punctuation-driven splitter can find); ``sentence_ends`` P/R/F1 over every sentence end,
paragraph ends included; and the UD shared-task ``sentences`` F1 (a predicted sentence is right when
its span equals a gold sentence's), the figure published for Stanza / UDPipe; (d) tokens per second of
:func:`tokenize` (Python ``re``) and of :func:`tokenize_tf` inside a ``tf.function`` (batches of
``--batch`` sentences, after one warm-up pass), and that both give identical tokens and offsets. The
most frequent token and splitter errors are listed. ``--split train``/``dev`` run the same on the
splits the rules were developed on.

Prints a table and writes ``benchmarks/out/tokenizer.json``.
Run: ``PYTHONPATH=. python benchmarks/tokenizer.py [--out benchmarks/out/tokenizer.json]``.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import pathlib
import sys
import time
from typing import Iterable, Optional, Sequence

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from data_pipeline.column_file import read_blocks  # noqa: E402
from data_pipeline.errors import DataFormatError  # noqa: E402

EWT = pathlib.Path(os.environ.get("LISA_TF_SHARED_DATA", ROOT.parent / "shared" / "data")) / "ud-english-ewt"


@dataclasses.dataclass
class GoldSentence:
    """A CoNLL-U sentence's raw text, its gold syntactic words with spans, and where it sits."""

    sent_id: str
    text: str
    tokens: list[tuple[str, int, int]]
    new_doc: bool
    new_par: bool


def ewt_files(split: str = "test", ewt: pathlib.Path = EWT) -> list[pathlib.Path]:
    """The UD English-EWT documents of a split (train, dev, test) in the official order."""
    names = (ewt / "not-to-release" / "file-lists" / f"files.{split}").read_text().split()
    return [ewt / "not-to-release" / "sources" / f"{name}.gz" for name in names]


def read_gold(paths: Iterable[os.PathLike | str], counts: Optional[collections.Counter] = None) -> list[GoldSentence]:
    """Sentences with a ``# text`` line from CoNLL-U files, gold spans as described in the module docstring.

    Raises:
        DataFormatError: a sentence without ``# text``, or a form that does not occur in the text where expected.
    """
    counts = collections.Counter() if counts is None else counts
    result = []
    for path in paths:
        for block in read_blocks(path, comment_prefix="#", separator="\t"):
            fields = dict(c[1:].strip().split(" = ", 1) for c in block.comments if " = " in c)
            if "text" not in fields:
                raise DataFormatError(block.path, block.first_line,
                                      "expected a '# text = ...' comment before the sentence")
            text = fields["text"]
            tokens, position, covered = [], 0, 0
            for i, row in enumerate(block.rows):
                word_id, form = row[0], row[1]
                if "." in word_id:
                    continue
                if "-" in word_id:
                    first, last = (int(x) for x in word_id.split("-"))
                    words = [r[1] for r in block.rows[i + 1:] if r[0].isdigit() and first <= int(r[0]) <= last]
                    covered = last
                elif int(word_id) <= covered:
                    continue
                else:
                    words = [form]
                while position < len(text) and text[position].isspace():
                    position += 1
                if text[position:position + len(form)] != form:
                    raise DataFormatError(block.path, block.line_of(i),
                                          f"form {form!r} not found at offset {position} of the text")
                if "".join(words) != form:
                    counts["mwt_not_concatenated"] += 1
                    words = [form]
                for word in words:
                    tokens.append((word, position, position + len(word)))
                    position += len(word)
            counts["sentences"] += 1
            result.append(GoldSentence(fields.get("sent_id", ""), text, tokens,
                                       any(c.startswith("# newdoc") for c in block.comments),
                                       any(c.startswith("# newpar") for c in block.comments)))
    return result


def score_tokens(gold: Sequence[GoldSentence], predicted: Sequence[Sequence[tuple[str, int, int]]]) -> dict:
    """Token precision/recall/F1 and sentence accuracy; ``errors`` counts (gold tokens missed, predicted)
    per sentence pattern."""
    n_gold = n_pred = n_match = right = 0
    errors: collections.Counter = collections.Counter()
    for sentence, tokens in zip(gold, predicted):
        gold_set = set(sentence.tokens)
        pred_set = {tuple(t) for t in tokens}
        n_gold += len(gold_set)
        n_pred += len(pred_set)
        n_match += len(gold_set & pred_set)
        if gold_set == pred_set:
            right += 1
        else:
            missed = " ".join(t[0] for t in sorted(gold_set - pred_set, key=lambda t: t[1]))
            extra = " ".join(t[0] for t in sorted(pred_set - gold_set, key=lambda t: t[1]))
            errors[f"gold [{missed}] -> ours [{extra}]"] += 1
    precision, recall = n_match / max(n_pred, 1), n_match / max(n_gold, 1)
    return {
        "sentences": len(gold), "gold_tokens": n_gold, "predicted_tokens": n_pred, "matched_tokens": n_match,
        "token_recall": recall, "token_precision": precision,
        "token_f1": 2 * precision * recall / max(precision + recall, 1e-12),
        "sentence_accuracy": right / max(len(gold), 1), "errors": errors,
    }


def paragraphs(gold: Sequence[GoldSentence]) -> list[tuple[str, list[tuple[int, int]]]]:
    """Paragraph texts (sentence texts joined with one space) and their gold sentence spans."""
    result: list[tuple[str, list[tuple[int, int]]]] = []
    for sentence in gold:
        if sentence.new_doc or sentence.new_par or not result:
            result.append(("", []))
        text, spans = result[-1]
        start = len(text) + (1 if text else 0)
        text = f"{text} {sentence.text}" if text else sentence.text
        spans.append((start, start + len(sentence.text)))
        result[-1] = (text, spans)
    return result


def _punctuated(sentence: str) -> bool:
    """Whether a sentence ends in sentence-final punctuation (before closing quotes and brackets)."""
    return sentence.rstrip("\"'\u201d\u2019)]} ").endswith((".", "!", "?", "\u2026"))


def score_splitter(paras: Sequence[tuple[str, list[tuple[int, int]]]], split) -> dict:
    """Boundary P/R/F1 (paragraph-internal sentence ends; and all sentence ends, paragraph ends
    included), UD sentence-span P/R/F1, and the share of internal boundaries after sentence-final
    punctuation (the recall a punctuation-driven splitter can reach)."""
    n = collections.Counter()
    errors: collections.Counter = collections.Counter()
    for text, gold_spans in paras:
        spans = split(text)
        gold_b = {end for _, end in gold_spans[:-1]}
        pred_b = {end for _, end in spans[:-1]}
        gold_e, pred_e = {end for _, end in gold_spans}, {end for _, end in spans}
        n["b_gold"] += len(gold_b)
        n["b_pred"] += len(pred_b)
        n["b_match"] += len(gold_b & pred_b)
        n["e_gold"] += len(gold_e)
        n["e_pred"] += len(pred_e)
        n["e_match"] += len(gold_e & pred_e)
        n["s_gold"] += len(gold_spans)
        n["s_pred"] += len(spans)
        n["s_match"] += len(set(gold_spans) & set(spans))
        n["punctuated"] += sum(_punctuated(text[a:b]) for a, b in gold_spans[:-1])
        for end in gold_b - pred_b:
            errors[f"missed: {text[max(0, end - 25):end]!r} | {text[end:end + 15]!r}"] += 1
        for end in pred_b - gold_b:
            errors[f"extra:  {text[max(0, end - 25):end]!r} | {text[end:end + 15]!r}"] += 1

    def prf(kind):
        match, pred, gold = n[f"{kind}_match"], n[f"{kind}_pred"], n[f"{kind}_gold"]
        p, r = match / max(pred, 1), match / max(gold, 1)
        return {"precision": p, "recall": r, "f1": 2 * p * r / max(p + r, 1e-12), "gold": gold, "predicted": pred}

    return {"paragraphs": len(paras), "boundary": prf("b"), "sentence_ends": prf("e"), "sentences": prf("s"),
            "punctuated_boundary_share": n["punctuated"] / max(n["b_gold"], 1), "errors": errors}


def _tf_speed(texts: Sequence[str], batch: int) -> tuple[float, list[list[tuple[str, int, int]]]]:
    """Seconds for one pass of ``tokenize_tf`` over ``texts`` (after a warm-up pass) and its tokens."""
    import tensorflow as tf

    from data_pipeline.tokenizer import tokenize_tf

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def run(x):
        tokens, starts, ends = tokenize_tf(x)
        return tokens.flat_values, starts.flat_values, ends.flat_values, tokens.row_splits

    batches = [tf.constant(list(texts[i:i + batch])) for i in range(0, len(texts), batch)]
    for b in batches:
        run(b)
    start = time.perf_counter()
    outputs = [run(b) for b in batches]
    seconds = time.perf_counter() - start
    result = []
    for tokens, starts, ends, splits in outputs:
        tokens, starts, ends, splits = tokens.numpy(), starts.numpy(), ends.numpy(), splits.numpy()
        for a, b in zip(splits[:-1], splits[1:]):
            result.append([(tokens[i].decode("utf-8"), int(starts[i]), int(ends[i])) for i in range(a, b)])
    return seconds, result


def main(argv=None) -> int:
    """Run the benchmark; returns a process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="test", choices=["train", "dev", "test"],
                        help="UD EWT split (test is the reported one; the rules were developed on train and dev)")
    parser.add_argument("--conllu", nargs="*", help="CoNLL-U files instead of a UD EWT split")
    parser.add_argument("--batch", type=int, default=256, help="sentences per tokenize_tf call")
    parser.add_argument("--show", type=int, default=25, help="most frequent errors to print")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "tokenizer.json"))
    args = parser.parse_args(argv)

    if args.conllu:
        files = [pathlib.Path(p) for p in args.conllu]
    else:
        if not (EWT / "not-to-release" / "file-lists" / f"files.{args.split}").exists():
            print(f"tokenizer benchmark: {EWT} not found (the shared data folder beside the checkout)", file=sys.stderr)
            return 1
        files = ewt_files(args.split)

    from data_pipeline.tokenizer import split_sentences, tokenize

    counts: collections.Counter = collections.Counter()
    gold = read_gold(files, counts)
    texts = [s.text for s in gold]

    start = time.perf_counter()
    python_tokens = [tokenize(t) for t in texts]
    python_seconds = time.perf_counter() - start
    tokens = score_tokens(gold, python_tokens)
    paras = paragraphs(gold)
    start = time.perf_counter()
    splitter = score_splitter(paras, split_sentences)
    split_seconds = time.perf_counter() - start

    tf_seconds, tf_tokens = _tf_speed(texts, args.batch)
    same = sum(1 for a, b in zip(python_tokens, tf_tokens) if [tuple(t) for t in a] == b)
    n_tokens = sum(len(t) for t in python_tokens)

    token_errors, split_errors = tokens.pop("errors"), splitter.pop("errors")
    import tensorflow as tf

    results = {
        "data": ([os.path.relpath(f, ROOT) for f in files] if args.conllu
                 else f"ud-english-ewt {args.split} (files.{args.split})"),
        "files": len(files),
        "gold": dict(counts),
        "tokens": tokens,
        "splitter": splitter,
        "speed": {
            "tokens": n_tokens,
            "python_tokens_per_second": n_tokens / python_seconds,
            "tf_tokens_per_second": n_tokens / tf_seconds,
            "tf_batch": args.batch,
            "splitter_sentences_per_second": sum(len(s) for _, s in paras) / split_seconds,
        },
        "python_tf_identical_sentences": same,
        "tensorflow": tf.__version__,
        "cpu_count": os.cpu_count(),
        "top_token_errors": token_errors.most_common(args.show),
        "top_split_errors": split_errors.most_common(args.show),
    }

    source = "CoNLL-U" if args.conllu else f"UD English-EWT {args.split}"
    print(f"{source}: {len(files)} files, {tokens['sentences']} sentences, {tokens['gold_tokens']} gold tokens, "
          f"{splitter['paragraphs']} paragraphs")
    print(f"{'measure':46} {'value':>9}")
    rows = [
        ("(a) gold tokens reproduced (recall)", 100 * tokens["token_recall"], "%"),
        ("    token precision", 100 * tokens["token_precision"], "%"),
        ("    token F1", 100 * tokens["token_f1"], "%"),
        ("(b) sentences tokenised entirely right", 100 * tokens["sentence_accuracy"], "%"),
        ("(c) sentence-internal boundary F1", 100 * splitter["boundary"]["f1"], ""),
        ("    boundary precision", 100 * splitter["boundary"]["precision"], "%"),
        ("    boundary recall", 100 * splitter["boundary"]["recall"], "%"),
        ("    (internal boundaries after . ! ? …)", 100 * splitter["punctuated_boundary_share"], "%"),
        ("    all sentence ends F1 (paragraph ends incl.)", 100 * splitter["sentence_ends"]["f1"], ""),
        ("    UD sentence F1 (spans, all sentences)", 100 * splitter["sentences"]["f1"], ""),
        ("(d) tokens/s, tokenize (Python re)", results["speed"]["python_tokens_per_second"], ""),
        (f"    tokens/s, tokenize_tf (batch {args.batch})", results["speed"]["tf_tokens_per_second"], ""),
        ("Python == TF (sentences identical)", 100 * same / len(gold), "%"),
    ]
    for name, value, unit in rows:
        print(f"{name:46} {value:9.2f}{unit}" if value < 1000 else f"{name:46} {value:9.0f}")
    print(f"most frequent token errors (of {sum(token_errors.values())} sentences with one):")
    for text, n in token_errors.most_common(args.show):
        print(f"  {n:4d}  {text}")
    print(f"most frequent splitter errors (of {sum(split_errors.values())}):")
    for text, n in split_errors.most_common(args.show):
        print(f"  {n:4d}  {text}")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
