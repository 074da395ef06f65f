"""Domain adaptation on open data: a held-out EWT genre, from scratch vs from a model of the other four.

UD English-EWT's sentence ids name five genres (weblog, newsgroup, email, reviews, answers). For each
held-out genre G (``--held-out``):

1. **base**: LISA (``configs/open/lisa.toml``) trained on the other four genres' training sentences
   (dev: their dev sentences);
2. **(a) scratch**: the same config trained on the first ``--adapt-sentences`` training sentences of G
   alone (dev: G's dev sentences), for the adaptation's step budget;
3. **(b) adapted**: ``train --init`` the base model on those same sentences (lisa_tf.training.init_from_model:
   300 steps, warm-up 50, learning rate x0.05, vocabularies grown);

and scores G's test sentences with the base model unadapted, (a) and (b) (srl-eval F1, predicted
predicates, own parse). Each genre's split files are written with their UD trees beside them
(``NAME.gold_conll`` + ``NAME.conllu``, copied block for block from ``data/propbank-ewt``).

Prints a table, writes ``benchmarks/out/domain_adaptation.json`` and a bar chart PNG beside it. Runs
resume: an interrupted benchmark continues where it stopped.

Run: ``PYTHONPATH=. python benchmarks/domain_adaptation.py --held-out weblog email``;
``--quick`` trains tiny models for a few steps (the test's smoke run).
"""

from __future__ import annotations

import argparse
import gzip
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

EWT = ROOT / "data" / "propbank-ewt"
#: Settings of --quick: a tiny model, a few steps (the pipeline, not the figures).
QUICK = {"model.embedding_size": "50", "model.hidden_size": "32", "model.num_heads": "2", "model.filter_size": "64",
         "model.num_layers": "2", "model.pos_layer": "0", "model.parse_layer": "0", "model.parse_attention_layer": "1",
         "model.parse_mlp_size": "32", "model.dep_label_mlp_size": "16", "model.srl_mlp_size": "32",
         "train.batch_tokens": "512", "data.max_eval_sentences": "20"}


def _conllu_blocks(path: pathlib.Path) -> list[str]:
    text = gzip.open(path, "rt", encoding="utf-8").read()
    return [block for block in text.strip("\n").split("\n\n") if block.strip()]


def write_split(sentences, blocks, out: pathlib.Path) -> pathlib.Path:
    """``out.gold_conll`` with ``out.conllu`` beside it (the same sentences' UD trees)."""
    from data_pipeline.readers.conll12 import gold_conll_lines

    lines = []
    for sentence in sentences:  # one document per sentence keeps the writer's per-document layout simple
        lines += gold_conll_lines(sentence.doc_id or "doc", [sentence])
    out.with_suffix(".gold_conll").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out.with_suffix(".conllu").write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return out.with_suffix(".gold_conll")


def genre_splits(held_out: str, adapt: int, directory: pathlib.Path, limit: int = 0) -> dict:
    """The split files of one held-out genre; ``limit`` keeps the first sentences of each (--quick)."""
    from data_pipeline.readers.conll12 import read_conll12
    from lisa_tf.evaluation.slices import genre

    paths = {}
    for split in ("train", "dev", "test"):
        sentences = read_conll12(EWT / f"{split}.gold_conll.gz")
        blocks = _conllu_blocks(EWT / f"{split}.conllu.gz")
        if len(blocks) != len(sentences):
            raise SystemExit(f"{EWT / split}.conllu.gz: {len(blocks)} sentences, {len(sentences)} in the .gold_conll")
        ours = [i for i, s in enumerate(sentences) if genre(s) == held_out]
        others = [i for i, s in enumerate(sentences) if genre(s) != held_out]
        if split == "train":
            ours = ours[:adapt]
        if limit:
            ours, others = ours[:limit], others[:limit]
        for name, picked in (("genre", ours), ("others", others)):
            if split == "test" and name == "others":
                continue
            paths[f"{name}_{split}"] = str(write_split([sentences[i] for i in picked], [blocks[i] for i in picked],
                                                       directory / f"{name}_{split}"))
    return paths


def _train(config_overrides: list[str], run: pathlib.Path, init: str | None = None) -> dict:
    from lisa_tf.training.loop import train
    from lisa_tf_cli.commands.train import checked_config

    config_path = None if init else ROOT / "configs" / "open" / "lisa.toml"
    return train(checked_config(config_path, config_overrides, run, init), run, verbose=0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--held-out", nargs="+", default=["weblog", "email"],
                        choices=("weblog", "newsgroup", "email", "reviews", "answers"))
    parser.add_argument("--adapt-sentences", type=int, default=200)
    parser.add_argument("--work", default=str(ROOT / "benchmarks" / "out" / "domain_adaptation"),
                        help="split files and runs (resumed when present)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "domain_adaptation.json"))
    parser.add_argument("--quick", action="store_true", help="tiny models, a few steps: the pipeline only")
    args = parser.parse_args(argv)

    from lisa_tf.evaluation.runs import evaluate_runs
    from lisa_tf.training.init_from_model import ADAPTATION

    work = pathlib.Path(args.work)
    quick = [f"{k}={v}" for k, v in QUICK.items()] if args.quick else []
    steps = ["train.max_steps=6", "train.eval_every=6"] if args.quick else []
    results = {"adapt_sentences": args.adapt_sentences, "quick": args.quick, "genres": {}}
    started = time.time()
    for held_out in args.held_out:
        directory = work / held_out
        directory.mkdir(parents=True, exist_ok=True)
        paths = genre_splits(held_out, args.adapt_sentences, directory, limit=40 if args.quick else 0)
        runs = {name: directory / "runs" / name for name in ("base", "scratch", "adapted")}
        print(f"== {held_out}: base on the other genres -> {runs['base']}", flush=True)
        _train([f"data.train={paths['others_train']}", f"data.dev={paths['others_dev']}", "data.parse_train=",
                "data.parse_dev=", *quick, *steps], runs["base"])
        genre_data = [f"data.train={paths['genre_train']}", f"data.dev={paths['genre_dev']}"]
        budget = [f"train.max_steps={ADAPTATION['train.max_steps']}", f"train.eval_every={ADAPTATION['train.eval_every']}"]
        print(f"== {held_out}: (a) from scratch on {args.adapt_sentences} sentences -> {runs['scratch']}", flush=True)
        _train(genre_data + ["data.parse_train=", "data.parse_dev=", *quick, *budget, *steps], runs["scratch"])
        print(f"== {held_out}: (b) from the base model on the same sentences -> {runs['adapted']}", flush=True)
        _train(genre_data + steps, runs["adapted"], init=str(runs["base"]))
        scores = {}
        for name, run in (("unadapted", runs["base"]), ("scratch", runs["scratch"]), ("adapted", runs["adapted"])):
            srl = evaluate_runs([str(run)], paths["genre_test"], data_format="conll12")["srl"]
            scores[name] = {key: round(srl[key], 2) for key in ("precision", "recall", "f1")}
        scores["test_sentences"] = sum(1 for line in open(paths["genre_test"], encoding="utf-8")
                                       if line.startswith("#begin"))
        results["genres"][held_out] = scores
    results["minutes"] = round((time.time() - started) / 60, 1)

    rows = ["| held-out genre | test sentences | unadapted | (a) scratch | (b) adapted | (b) − (a) | (b) − unadapted |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for held_out, s in results["genres"].items():
        rows.append(f"| {held_out} | {s['test_sentences']} | {s['unadapted']['f1']:.2f} | {s['scratch']['f1']:.2f} | "
                    f"{s['adapted']['f1']:.2f} | {s['adapted']['f1'] - s['scratch']['f1']:+.2f} | "
                    f"{s['adapted']['f1'] - s['unadapted']['f1']:+.2f} |")
    print("\n".join(rows))
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    _plot(results, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")
    return 0


def _plot(results: dict, png: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    genres = list(results["genres"])
    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(genres), 3.2))
    for k, (name, label) in enumerate((("unadapted", "unadapted (4 genres)"), ("scratch", "(a) from scratch"),
                                       ("adapted", "(b) adapted"))):
        ax.bar([i + 0.27 * (k - 1) for i in range(len(genres))], [results["genres"][g][name]["f1"] for g in genres],
               width=0.27, label=label)
    ax.set_xticks(range(len(genres)), genres)
    ax.set_ylabel("test F1 (held-out genre)")
    ax.set_title(f"Adapting LISA with {results['adapt_sentences']} sentences of a new genre")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
