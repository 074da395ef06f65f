"""The training loop every model shares.

``train(config, run_dir)`` reads the data, builds (or reloads) the vocabularies, builds the model under
the distribution strategy and precision policy of the config, and runs ``keras.Model.fit`` with one
"epoch" per evaluation interval (``train.eval_every`` steps):

* ``keras.callbacks.BackupAndRestore`` (``checkpoints/``) saves weights, optimiser state and the
  interval count after every interval; re-running ``train`` on the same run directory resumes from the
  last interval with the same step and optimiser state; a finished run given a larger
  ``train.max_steps`` continues from its last checkpoint (unless it stopped early);
* :class:`~lisa_tf.training.callbacks.DevEvaluation` scores the dev set with the project's srl-eval,
  appends ``metrics.jsonl``, keeps the best weights in ``best/`` and stops early after ``patience``
  intervals without improvement;
* :class:`~lisa_tf.training.callbacks.TimeBudget` (``train.max_minutes``) stops at the last evaluation
  that leaves no room for another interval within the wall-clock budget;
* ``keras.callbacks.TensorBoard`` writes ``logs/``; the console shows Keras' progress bar.

Run directory: ``model.keras`` (the whole model, written when it is built and again with the best
weights when training ends; :mod:`lisa_tf.runs` loads it), ``config.json``, ``vocab/``,
``checkpoints/``, ``best/``, ``metrics.jsonl``, ``curves.png``, ``logs/``, ``weights/`` (latest
per-evaluation weights), ``final.weights.h5`` and ``done.json`` when training ends.
"""

from __future__ import annotations

import json
import math
import pathlib
import sys
import time
from typing import Optional

import keras
import numpy as np

from data_pipeline.dataset import make_dataset
from data_pipeline.embeddings import load_glove
from data_pipeline.vocab import Vocabularies, predicate_bio_tags

from data_pipeline.splits import read_split

from lisa_tf.config import ExperimentConfig
from lisa_tf.decoding.viterbi import start_log_probs, transition_log_probs
from lisa_tf.models import build_model
from lisa_tf.evaluation.srl_eval import score
from lisa_tf.predict import predict_sentences
from lisa_tf.runs import MODEL_FILE, load_run_config, save_model, weights_file
from lisa_tf.training.callbacks import DevEvaluation, ResumeReport, TimeBudget
from lisa_tf.training.optimizers import make_optimizer
from lisa_tf.training.precision import set_policy
from lisa_tf.training.strategy import is_chief, make_strategy


def build_vocabularies(config: ExperimentConfig, train_sentences, run_dir: pathlib.Path) -> Vocabularies:
    """Vocabularies from the training data, saved in ``run_dir/vocab`` (reloaded when resuming)."""
    directory = run_dir / "vocab"
    if (directory / "srl.txt").exists():
        return Vocabularies.load(directory)
    vocabs = Vocabularies.build(train_sentences)
    vocabs.save(directory)
    return vocabs


def embedding_matrix(config: ExperimentConfig, vocabs: Vocabularies) -> Optional[np.ndarray]:
    """GloVe rows for the word vocabulary, or None (random initialisation)."""
    if not config.data.embeddings:
        return None
    matrix, coverage = load_glove(config.data.embeddings, vocabs.words, seed=config.train.seed)
    print(f"embeddings: {coverage}", flush=True)
    return matrix


def train(config: ExperimentConfig, run_dir: str | pathlib.Path, verbose: Optional[int] = None) -> dict:
    """Train (or resume) the experiment in ``run_dir``; returns the best dev scores."""
    run_dir = pathlib.Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    if (run_dir / "config.json").exists():
        saved = load_run_config(run_dir)
        if saved.model != config.model:
            raise ValueError(
                f"{run_dir} holds a run of a different model; resume it with its own config or choose a new --out"
            )
    config.save(run_dir / "config.json")
    if (run_dir / "done.json").exists():
        done = json.loads((run_dir / "done.json").read_text())
        if done["steps"] >= config.train.max_steps or done.get("stopped_early"):
            how = ", stopped early" if done.get("stopped_early") else ""
            print(f"{run_dir}: training already finished (step {done['steps']}{how}); nothing to do", flush=True)
            return done
        print(f"{run_dir}: finished at step {done['steps']}; continuing to train.max_steps={config.train.max_steps}",
              flush=True)
        (run_dir / "done.json").unlink()

    strategy = make_strategy(config.train.strategy)  # first: multi-worker set-up precedes any TF op
    keras.utils.set_random_seed(config.train.seed)
    policy = set_policy(config.train.mixed_precision)
    chief = is_chief(strategy)
    data = config.data
    train_sentences = read_split(data.train, data.format, data.parse_train or None, data.max_train_sentences)
    dev_sentences = read_split(data.dev, data.format, data.parse_dev or None, data.max_eval_sentences)
    vocabs = build_vocabularies(config, train_sentences, run_dir)
    print(
        f"train: {len(train_sentences)} sentences, dev: {len(dev_sentences)}; policy {policy}; "
        f"{strategy.num_replicas_in_sync} replica(s)",
        flush=True,
    )
    with strategy.scope():
        model = build_model(config.model, vocabs, embedding_matrix(config, vocabs))
    dataset, report = make_dataset(
        train_sentences,
        vocabs,
        layout=model.layout,
        token_budget=config.train.batch_tokens,
        seed=config.train.seed,
        unknown_labels="error",
        batch_multiple=strategy.num_replicas_in_sync,
        repeat=True,
        preprocess=model.preprocessor,
    )
    print(f"training examples: {report.examples} ({report.tokens} tokens); nested spans left out of BIO: {report.bio}", flush=True)
    with strategy.scope():
        model.compile(optimizer=make_optimizer(config.train))
        model.build_from_batch(next(iter(dataset)))
    if config.model.transition_log_probs:
        tag_sequences = [predicate_bio_tags(p, len(s))[0] for s in train_sentences for p in s.predicates]
        model.set_transitions(
            transition_log_probs(tag_sequences, vocabs.srl.entries), start_log_probs(tag_sequences, vocabs.srl.entries)
        )
    if chief:
        save_model(model, run_dir / MODEL_FILE)

    interval = max(1, config.train.eval_every)
    epochs = math.ceil(config.train.max_steps / interval)

    def evaluate_dev() -> dict:
        predicted = predict_sentences(model, dev_sentences, vocabs, token_budget=config.train.batch_tokens)
        return score(dev_sentences, predicted)

    evaluation = DevEvaluation(evaluate_dev, run_dir, patience=config.train.patience, write=chief,
                                keep_weights=config.train.keep_weights)
    callbacks = [
        keras.callbacks.BackupAndRestore(str(run_dir / "checkpoints"), save_freq="epoch", delete_checkpoint=False),
        ResumeReport(),
        evaluation,
        keras.callbacks.TensorBoard(str(run_dir / "logs"), update_freq="epoch", write_graph=False),
    ]
    budget = TimeBudget(config.train.max_minutes) if config.train.max_minutes > 0 else None
    if budget is not None:
        callbacks.append(budget)
    if verbose is None:
        verbose = 1 if sys.stdout.isatty() else 2
    started = time.time()
    model.fit(dataset, steps_per_epoch=interval, epochs=epochs, callbacks=callbacks, verbose=verbose)
    seconds = time.time() - started
    if chief:
        model.save_weights(run_dir / "final.weights.h5")
        save_model(model, run_dir / MODEL_FILE, weights_file(run_dir, "best"))  # the finished run: best dev weights
    best = max(evaluation.records, key=lambda r: r["dev_f1"])
    summary = {
        "steps": int(model.optimizer.iterations.numpy()),
        "best_step": best["step"],
        "best_dev_f1": best["dev_f1"],
        "policy": policy,
        "replicas": strategy.num_replicas_in_sync,
        "optimizer": type(model.optimizer).__name__,
        "seconds_this_session": round(seconds, 1),
        "stopped_early": evaluation.stopped_early,
        "stopped_at_time_budget": bool(budget and budget.stopped),
    }
    if chief:
        (run_dir / "done.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary
