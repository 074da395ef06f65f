"""``nlp.pipe`` with the ``lisa_srl`` component against ``lisa_tf.load().predict`` on the same sentences,
in one run: the tokens/s of each and their ratio (the target: spaCy at 0.8x or more).

The texts are the CoNLL-U ``# text`` lines of PropBank-EWT (``--split``, the first ``--sentences``),
one Doc each. The spaCy side is the whole pipeline a user runs: ``spacy.blank("en")``'s tokenizer, the
sentencizer and ``lisa_srl`` (``nlp.pipe(texts, batch_size=--batch-size)``, by default spaCy's own
batch size). The other side is the
predictor the component holds (the same weights and compiled functions), given the sentences spaCy
made as ``predict(tokens=...)``. Both count the same tokens (the words of those sentences). Each
side is timed ``--repeats`` times, alternating, after one warm-up pass of each on the first
``--batch-size`` texts; the rates are the best pass of each. The frames of the last passes are
compared too (:func:`compare_frames`), and the time the component spends outside the model is
reported (``spacy_pipe_seconds`` less ``spacy_pipe_label_seconds``).

Run: ``PYTHONPATH=. nice -n 5 python benchmarks/spacy_pipe.py [--model srl] [--sentences 0 (all)] [--out
benchmarks/out/spacy_pipe.json]``
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.raw_text_srl import texts_of  # noqa: E402


def sentence_words(docs) -> list[list[str]]:
    """The words of every sentence of ``docs`` as the component sends them (no whitespace tokens)."""
    return [[t.text for t in sent if not t.is_space] for doc in docs for sent in doc.sents]


def compare_frames(docs, results) -> tuple[bool, float]:
    """Whether ``doc._.frames`` of every Doc are the ``predict`` results of its sentences (predicates,
    roles, spans, descriptions, in Doc order), and the largest difference between their scores: the
    two sides batch the sentences differently, and a row's padding changes the float rounding of its
    probabilities in the fourth decimal now and then."""
    sentences = [(doc, sent) for doc in docs for sent in doc.sents]
    of_doc: dict = {}
    for (doc, sent), result in zip(sentences, results):
        kept = [t.i for t in sent if not t.is_space]
        of_doc.setdefault(id(doc), []).extend(
            (kept[p["token"]], p["description"], [(a["role"], kept[a["token_start"]], kept[a["token_end"] - 1] + 1)
                                                  for a in p["arguments"]], [a["score"] for a in p["arguments"]])
            for p in result["predicates"])
    equal, largest = True, 0.0
    for doc in docs:
        mine = [(f["token"], f["description"], [(a["role"], a["token_start"], a["token_end"]) for a in f["arguments"]],
                 [a["score"] for a in f["arguments"]]) for f in doc._.frames]
        theirs = of_doc.get(id(doc), [])
        equal = equal and [m[:3] for m in mine] == [t[:3] for t in theirs]
        largest = max([largest] + [abs(x - y) for m, t in zip(mine, theirs) for x, y in zip(m[3], t[3])])
    return equal, largest


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="srl", help="a shipped model's name or a model path (default: srl)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--sentences", type=int, default=0, help="the first N texts of the split (0: all)")
    parser.add_argument("--batch-size", type=int, default=0, help="Docs per nlp.pipe batch (0: the pipeline's "
                        "own, nlp.batch_size: 1,000 for spacy.blank)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "spacy_pipe.json"))
    args = parser.parse_args(argv)

    import spacy

    texts = texts_of(ROOT / "data" / "propbank-ewt" / f"{args.split}.conllu.gz")
    texts = texts[: args.sentences] if args.sentences else texts
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": args.model})
    predictor = nlp.get_pipe("lisa_srl").predictor
    args.batch_size = args.batch_size or nlp.batch_size

    warm = list(nlp.pipe(texts[: args.batch_size], batch_size=args.batch_size))  # traces the compiled functions
    predictor.predict(tokens=sentence_words(warm))
    label, inside = predictor.label, []

    def timed_label(*given, **options):  # the component's time in the model, to see its own overhead
        started = time.perf_counter()
        try:
            return label(*given, **options)
        finally:
            inside[-1] += time.perf_counter() - started

    spacy_seconds, predict_seconds = [], []
    for _ in range(args.repeats):
        inside.append(0.0)
        predictor.label = timed_label
        started = time.perf_counter()
        docs = list(nlp.pipe(texts, batch_size=args.batch_size))
        spacy_seconds.append(time.perf_counter() - started)
        del predictor.label
        words = sentence_words(docs)
        started = time.perf_counter()
        results = predictor.predict(tokens=words)
        predict_seconds.append(time.perf_counter() - started)
    tokens = sum(len(w) for w in words)
    spacy_rate, predict_rate = tokens / min(spacy_seconds), tokens / min(predict_seconds)
    report = {
        "model": args.model, "split": args.split, "texts": len(texts), "sentences": len(words), "tokens": tokens,
        "frames": sum(len(d._.frames) for d in docs), "batch_size": args.batch_size, "repeats": args.repeats,
        "spacy_pipe_seconds": spacy_seconds, "spacy_pipe_label_seconds": inside, "predict_seconds": predict_seconds,
        "spacy_pipe_tokens_per_second": spacy_rate, "predict_tokens_per_second": predict_rate,
        "ratio": spacy_rate / predict_rate,
    }
    report["frames_equal"], report["largest_score_difference"] = compare_frames(docs, results)
    print("| path | tokens/s |\n|---|---:|")
    print(f"| nlp.pipe (tokenizer, sentencizer, lisa_srl; batch_size {args.batch_size}) | {spacy_rate:.0f} |")
    print(f"| predict(tokens=...) on the same sentences | {predict_rate:.0f} |")
    print(f"{len(texts)} texts, {len(words)} sentences, {tokens} tokens, model {args.model}: nlp.pipe / predict = "
          f"{report['ratio']:.2f}x; frames equal: {report['frames_equal']} (scores within "
          f"{report['largest_score_difference']:.4f}); the component outside the model: "
          f"{min(a - b for a, b in zip(spacy_seconds, inside)):.2f} s a pass")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    main()
