"""The training loop every model shares.

``train(config, run_dir)`` checks the config, reads the data, builds (or reloads) the vocabularies,
builds the model under the distribution strategy and precision policy of the config, restores the
newest checkpoint if there is one, and runs ``keras.Model.fit`` with one "epoch" per evaluation
interval (``train.eval_every`` steps) until exactly ``train.max_steps`` steps
(:class:`~lisa_tf.training.callbacks.StepLimit`: when ``max_steps`` is not a multiple of the
interval, the last interval is shorter). At the end of every interval, in this order:

1. :class:`~lisa_tf.training.checkpoints.IntervalCheckpoint` writes ``checkpoints/step-N.weights.h5``
   (weights, optimiser state, dropout seed states and the position in the training data; the
   newest two are kept);
2. :class:`~lisa_tf.training.callbacks.DevEvaluation` scores the dev set with the project's srl-eval,
   keeps the best weights in ``best/``, stops early after ``patience`` intervals without improvement,
   and writes the interval's line to ``metrics.jsonl`` last;
3. :class:`~lisa_tf.training.callbacks.TimeBudget` (``train.max_minutes``) stops at the last
   evaluation that leaves no room for another interval within the wall-clock budget.

Re-running ``train`` on the same run directory resumes from the newest readable checkpoint with the
same step and optimiser state (a damaged one falls back to the one before it, with a warning), and
first redoes that checkpoint's evaluation if a kill interrupted it; a finished run given a larger
``train.max_steps`` continues (unless it stopped early). So after ``kill -9`` at any moment every
evaluation is in ``metrics.jsonl`` exactly once and ``best/`` is chosen over all of them.

A resumed run reads the training data on from where the checkpoint left it: the batch sequence of
:func:`~data_pipeline.dataset.make_dataset` depends on the seed alone (not on the iterators made
before, as ``Dataset.shuffle``'s reshuffling does), and ``make_dataset(start=...)`` starts it at the
checkpoint's position without computing the batches before it (a few seconds for 100,000 batches).
Restarting it at the first batch would train each resumed stretch on batches already seen, and a
run split into ``max_minutes`` sessions would never reach most of the data. With the
dropout seed states restored too, a run stopped and resumed any number of times computes the same
losses and weights, to the last bit, as the run that never stopped
(``tests/training/test_resume.py``).

A continuation of a finished run leaves it as it was (``done.json``, ``config.json``) until it has
written its first checkpoint, so a continuation that fails early (a bad override, a kill) loses
nothing. A ``done.json`` that cannot be read counts as "not finished" (with a warning), so the run
resumes from its checkpoints and writes it again.
Progress is shown as steps of ``max_steps`` (:mod:`lisa_tf.training.progress`); the last line names
the run directory, the best dev F1 and its step, and the wall time.

Run directory: ``model.keras`` (the whole model, written when it is built and again with the best
weights when training ends; :mod:`lisa_tf.models.runs` loads it), ``config.json``, ``vocab/``,
``checkpoints/``, ``best/``, ``metrics.jsonl``, ``curves.png``, ``logs/`` (TensorBoard), ``weights/``
(latest per-evaluation weights), ``final.weights.h5`` and ``done.json`` when training ends. Nothing
is written to it before the config has been checked and the data read, and every file is written
beside its target and renamed into place (:mod:`lisa_tf.util.atomic_files`; TensorBoard's event files
excepted): a kill leaves the old file or the new one, never a part.
"""
from __future__ import annotations

import json
import math
import pathlib
import sys
import time
from typing import Callable, Optional

import keras
import numpy as np

from data_pipeline.dataset import make_dataset
from data_pipeline.embeddings import embedding_dimension, load_glove
from data_pipeline.vocab import Vocabularies, predicate_bio_tags

from data_pipeline.splits import read_split

from lisa_tf.config import ConfigError, ExperimentConfig, validate_config
from lisa_tf.decoding.sense_choice import lexicon_for_run
from lisa_tf.decoding.viterbi import start_log_probs, transition_log_probs
from lisa_tf.evaluation.parse_eval import parse_scores
from lisa_tf.evaluation.srl_eval import score
from lisa_tf.labelling.batches import predict_sentences
from lisa_tf.labelling.parse import parse_sentences
from lisa_tf.models import DependencyParser, build_model
from lisa_tf.models.runs import DONE_FILE, MODEL_FILE, check_same_model, read_done, save_model, weights_file
from lisa_tf.models.weights import frozen_parts
from lisa_tf.training import init_from_model
from lisa_tf.training.callbacks import DevEvaluation, StepLimit, TimeBudget
from lisa_tf.training.checkpoints import IntervalCheckpoint, has_checkpoint, restore_checkpoint, save_weights_whole
from lisa_tf.training.optimizers import encoder_learning_rate_scales, make_optimizer
from lisa_tf.training.precision import set_policy
from lisa_tf.training.progress import StepProgress, duration
from lisa_tf.training.strategy import is_chief, make_strategy
from lisa_tf.util.atomic_files import partial_directory, write_text
from lisa_tf.util.graph_passes import without_idle_passes


def build_vocabularies(config: ExperimentConfig, train_sentences, run_dir: pathlib.Path,
                       base: Optional[Vocabularies] = None) -> Vocabularies:
    """Vocabularies from the training data, saved in ``run_dir/vocab`` (reloaded when resuming);
    ``base`` (the ``train.init`` model's) grown by the data's new entries."""
    directory = run_dir / "vocab"
    if (directory / "srl.txt").exists():
        return Vocabularies.load(directory)
    vocabs = Vocabularies.build(train_sentences)
    if base is not None:
        vocabs = base.extended(vocabs)
    with partial_directory(directory) as partial:  # whole or not at all
        vocabs.save(partial)
    return vocabs


def embedding_matrix(config: ExperimentConfig, vocabs: Vocabularies) -> Optional[np.ndarray]:
    """GloVe rows for the word vocabulary, or None (random initialisation)."""
    if not config.data.embeddings:
        return None
    matrix, coverage = load_glove(config.data.embeddings, vocabs.words, seed=config.train.seed)
    print(f"embeddings: {coverage}", flush=True)
    return matrix


def dev_evaluation(model, dev_sentences, vocabs: Vocabularies, token_budget: int) -> Callable[[], dict]:
    """The dev scorer of the model's task: srl-eval for the SRL models; for the dependency parser
    labelled attachment (:func:`lisa_tf.evaluation.parse_eval.parse_scores`: ``f1`` = LAS, plus ``uas``, ``pos``)."""
    if isinstance(model, DependencyParser):
        return lambda: parse_scores(dev_sentences, parse_sentences(model, dev_sentences, token_budget),
                                    model.dep_labels)
    return lambda: score(dev_sentences, predict_sentences(model, dev_sentences, vocabs, token_budget=token_budget))


def _training_features(config: ExperimentConfig, model, train_sentences, run_dir: pathlib.Path):
    """The batch features of training: the model's preprocessor (a fine-tuned encoder runs in the
    training step on the tokens), plus, for a model with a frozen contextual encoder, that encoder's layers read from the feature cache (built here for the
    sentences not in it yet), so training never runs the encoder. The cache is
    ``RUN/../.contextual-cache``: runs side by side (as ``run_experiments.sh`` writes them) share it."""
    if not config.model.contextual or config.model.contextual_trainable:  # a fine-tuned encoder runs in the step
        return model.preprocessor
    from lisa_tf.models.feature_cache import FeatureCache

    cache = FeatureCache(run_dir.parent / ".contextual-cache", config.model.contextual, config.model.contextual_pooling)
    encoder, = frozen_parts(model)
    cache.build([s.words for s in train_sentences], encoder=encoder)
    return lambda features: cache.attach(model.preprocessor(features))


def _require_parse(config: ExperimentConfig, sentences) -> None:
    """LISA (its syntax head) and the parser learn from dependency trees: the training data must
    give them, one of two ways (docs/data-formats.md); SA and DeepAtt need none."""
    model = config.model
    needs = model.kind == "parser" or (model.kind == "lisa" and model.syntax)
    if needs and sentences and not any(s.heads is not None for s in sentences):
        who = "the dependency parser" if model.kind == "parser" else "LISA's syntax head (model.syntax = true)"
        raise ConfigError(
            f"data.train {config.data.train}: has no dependency trees, which {who} learns from; give them either "
            "as a tree column in the file (CoNLL-2012 parse bits, converted with head rules, or CoNLL-U heads) or "
            "as a CoNLL-U file of the same sentences' trees (data.parse_train=FILE.conllu and data.parse_dev=, or "
            "NAME.conllu beside NAME.gold_conll); SA "
            "(model.kind = sa) needs no parse (docs/data-formats.md)")


def _check_embedding_size(config: ExperimentConfig) -> None:
    """GloVe vectors are the word embeddings as they are: their dimension is model.embedding_size."""
    if not config.data.embeddings:
        return
    dim = embedding_dimension(config.data.embeddings)
    if dim != config.model.embedding_size:
        raise ConfigError(f"model.embedding_size is {config.model.embedding_size}, but data.embeddings "
                          f"{config.data.embeddings} holds {dim}-dimensional vectors; set model.embedding_size={dim}, "
                          "or data.embeddings= for random ones")


def _encoder_lengths(model, sentences) -> Optional[list[int]]:
    """For a model whose contextual encoder trains in the step, each sentence's word-piece length
    (batches are bounded by it: the encoder's activations kept for the gradient grow with pieces,
    and a batch of many one-word sentences with long pieces would otherwise hold gigabytes);
    None (token counts) otherwise."""
    from lisa_tf.models.weights import fine_tuned_parts

    encoders = fine_tuned_parts(model)
    if not encoders:
        return None
    return encoders[0].piece_lengths([s.words for s in sentences])


def train(config: ExperimentConfig, run_dir: str | pathlib.Path, verbose: Optional[int] = None) -> dict:
    """Train (or resume) the experiment in ``run_dir``; returns the run's summary (``done.json``).

    ``verbose``: 0 prints evaluations only, 1 a progress line redrawn in place, 2 a plain progress
    line every 30 s; None = 1 on a terminal, else 2.
    """
    run_dir = pathlib.Path(run_dir)
    validate_config(config)
    check_same_model(config, run_dir)
    finished = read_done(run_dir)
    if finished is not None and (finished["steps"] >= config.train.max_steps or finished.get("stopped_early")):
        how = ", stopped early" if finished.get("stopped_early") else ""
        print(f"{run_dir}: training already finished (step {finished['steps']}{how}); nothing to do", flush=True)
        return finished

    started = time.time()
    strategy = make_strategy(config.train.strategy)  # first: multi-worker set-up precedes any TF op
    keras.utils.set_random_seed(config.train.seed)
    policy = set_policy(config.train.mixed_precision)
    chief = is_chief(strategy)
    data = config.data
    train_sentences = read_split(data.train, data.format, data.parse_train or None, data.max_train_sentences)
    _require_parse(config, train_sentences)
    _check_embedding_size(config)
    init_model = None
    if config.train.init and not has_checkpoint(run_dir / "checkpoints"):  # a run starting from a model, at step 0
        init = init_from_model.init_path(config.train.init)
        init_from_model.check_same_settings(config, init)
        init_model = init_from_model.load_init_model(init)
    dev_sentences = read_split(data.dev, data.format, data.parse_dev or None, data.max_eval_sentences)
    # the data is readable: from here on the run directory is written
    run_dir.mkdir(parents=True, exist_ok=True)
    if finished is None:
        config.save(run_dir / "config.json")
    else:
        # The finished run stays as it was (config.json, done.json) until this continuation has
        # written its first checkpoint (continuation_started below).
        print(f"{run_dir}: finished at step {finished['steps']}; continuing to train.max_steps={config.train.max_steps}",
              flush=True)
    vocabs = build_vocabularies(config, train_sentences, run_dir,
                                init_model.vocabularies() if init_model is not None else None)
    print(
        f"train: {len(train_sentences)} sentences, dev: {len(dev_sentences)}; policy {policy}; "
        f"{strategy.num_replicas_in_sync} replica(s)",
        flush=True,
    )
    lexicon = lexicon_for_run(config, vocabs.senses.entries, train_sentences)
    if config.train.init:  # the starting model's forms and rolesets too
        lexicon = init_from_model.run_lexicon(lexicon, vocabs.senses.entries, init_model, run_dir)
    with strategy.scope():
        model = build_model(config.model, vocabs, embedding_matrix(config, vocabs), sense_lexicon=lexicon)
        model.compile(optimizer=make_optimizer(config.train, encoder_learning_rate_scales(model, config.train)))
        model.build_from_batch()
        restored = restore_checkpoint(model, run_dir / "checkpoints")
        if init_model is not None and restored.step == 0:
            counts = init_from_model.copy_weights(init_model, model)
            added = vocabs.info["extends"]
            print(f"starting from {config.train.init}: {counts['copied']} weights copied, {counts['grown']} grown by "
                  f"the new data's {len(vocabs.words) - added['words']} words and {len(vocabs.srl) - added['srl']} "
                  "SRL tags", flush=True)
    step = restored.step
    position = restored.data_position
    if position is None:
        position = step
        if step:
            print(f"warning: {restored.path}: holds no training data position; reading the training data on "
                  f"from batch {position} (one per step)", file=sys.stderr, flush=True)
    dataset, report = make_dataset(
        train_sentences,
        vocabs,
        layout=model.layout,
        token_budget=config.train.batch_tokens,
        seed=config.train.seed,
        unknown_labels="error",
        batch_multiple=strategy.num_replicas_in_sync,
        repeat=True,
        preprocess=_training_features(config, model, train_sentences, run_dir),
        start=position,
        sentence_lengths=_encoder_lengths(model, train_sentences),
    )
    print(f"training examples: {report.examples} ({report.tokens} tokens)", flush=True)
    if report.bio.get("nested_spans"):
        print(f"{report.bio['nested_spans']} of {report.bio['spans']} argument spans lie inside another argument of "
              "the same predicate and are left out of the BIO tags", flush=True)
    # A run from a model sets them at step 0, from the model's and the new data's; resumed, its checkpoint holds them.
    if config.model.transition_log_probs and (init_model is not None or not config.train.init):
        tag_sequences = [predicate_bio_tags(p, len(s))[0] for s in train_sentences for p in s.predicates]
        matrix = transition_log_probs(tag_sequences, vocabs.srl.entries)
        start = start_log_probs(tag_sequences, vocabs.srl.entries)
        if init_model is not None:
            matrix, start = init_from_model.kept_transitions(init_model, matrix, start)
        model.set_transitions(matrix, start)
    if chief and step == 0:
        save_model(model, run_dir / MODEL_FILE)

    max_steps = config.train.max_steps
    interval = max(1, config.train.eval_every)
    initial_epoch = step // interval
    # One interval more than the steps left need: loss scaling (mixed_float16) leaves the step
    # count where it was for a batch whose gradients are not finite; StepLimit ends at max_steps.
    epochs = initial_epoch + math.ceil(max(max_steps - step, 0) / interval) + 1
    if verbose is None:
        verbose = 1 if sys.stdout.isatty() else 2
    progress = StepProgress(max_steps, live=verbose == 1, enabled=verbose != 0)
    print(f"starting at step 0 of {max_steps}" if step == 0 else
          f"resumed from checkpoint at step {step} of {max_steps}", flush=True)

    def continuation_started(_step: int) -> None:
        """Once this session has written a checkpoint the run is no longer the finished one: its
        config is the continuation's, and a ``done.json`` left (finished or damaged) goes."""
        if chief and (run_dir / DONE_FILE).exists():
            config.save(run_dir / "config.json")
            (run_dir / DONE_FILE).unlink()

    evaluate_dev = dev_evaluation(model, dev_sentences, vocabs, config.train.batch_tokens)
    evaluation = DevEvaluation(evaluate_dev, run_dir, patience=config.train.patience, write=chief,
                                keep_weights=config.train.keep_weights, report=progress.line)
    stop = evaluation.resume(model, step, start=init_model is not None)
    callbacks = [
        progress,
        StepLimit(max_steps),
        # before the evaluation: see lisa_tf.training.callbacks
        IntervalCheckpoint(run_dir / "checkpoints", data_position=position, saved=continuation_started),
        evaluation,
        keras.callbacks.TensorBoard(str(run_dir / "logs"), update_freq="epoch", write_graph=False),
    ]
    budget = TimeBudget(config.train.max_minutes, report=progress.line) if config.train.max_minutes > 0 else None
    if budget is not None:
        callbacks.append(budget)
    if not stop and step < max_steps:
        with without_idle_passes(training=True):  # the training step's graph and the dev evaluation's, on CPU
            model.fit(dataset, steps_per_epoch=interval, epochs=epochs, initial_epoch=initial_epoch,
                      callbacks=callbacks, verbose=0, shuffle=False)
    seconds = time.time() - started
    if chief:
        save_weights_whole(model, run_dir / "final.weights.h5")
        save_model(model, run_dir / MODEL_FILE, weights_file(run_dir, "best"))  # the finished run: best dev weights
    best = max(evaluation.records, key=lambda r: r["dev_f1"])
    summary = {
        "run": str(run_dir),
        "steps": int(model.optimizer.iterations.numpy()),
        "max_steps": max_steps,
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
        if finished is not None:
            config.save(run_dir / "config.json")  # the continuation's, also when it wrote no checkpoint
        write_text(run_dir / DONE_FILE, json.dumps(summary, indent=2) + "\n")
    how = " (stopped early)" if summary["stopped_early"] else (" (time budget)" if summary["stopped_at_time_budget"] else "")
    print(f"finished {run_dir}: step {summary['steps']} of {max_steps}{how}; "
          f"best dev F1 {best['dev_f1']:.2f} at step {best['step']} (weights in {run_dir / 'best'}); "
          f"wall time {duration(seconds)}", flush=True)
    return summary
