"""Starting a run from a trained model (``train --init MODEL``, ``train.init``): domain adaptation.

A few hundred annotated sentences of one's own domain train a poor model from scratch; starting from a
shipped model keeps what it learnt from the 12,500 PropBank-EWT sentences. The run

1. takes the model's configuration (its ``model`` settings are the run's, so every weight has its
   place), with :data:`ADAPTATION`'s training settings on top: fewer steps, a short warm-up and a
   lower learning rate, which suit a few hundred sentences (the user's overrides come last);
2. grows the model's vocabularies by the new data's entries (:meth:`Vocabularies.extended`): old
   words and labels keep their index, new ones get new embedding and output rows;
3. copies every weight of the model into the new one before the first step: a table that grew gets
   the old rows in its leading block, and its new rows start where they change no prediction
   (:func:`copy_weights`): a new word reads the embedding of the unknown word, which the model read
   for it before; a new label (SRL tag, roleset, POS tag, dependency label) scores
   :data:`NEW_LABEL_MARGIN` below the mean of the old labels' scores, whatever the input, so it is
   never the model's choice and takes almost none of the probability until training raises it. The
   model's word-form lexicon of rolesets and its tag-transition statistics are kept too, grown by the
   new data's (:func:`merged_lexicon`, :func:`kept_transitions`);
4. scores the starting model on the dev data as step 0: the run's best weights are the model's own
   until a step of training beats them, so adapting never leaves a model worse on the dev data than
   the one it started from. Step 0 is the model's own score: ``evaluate`` of the model on the same dev
   data gives the same F1.

A resumed run continues from its own checkpoints (the model is only read at step 0).
"""

from __future__ import annotations

import json
import pathlib
from typing import Optional

import numpy as np

from data_pipeline.errors import UserError

#: Training settings for adapting a model to a few hundred sentences (applied before the user's
#: overrides). The learning rate is the model's times :data:`LEARNING_RATE_SCALE`.
#: The model's own parse files (``data.parse_*``) belong to its training data, not the new data: a
#: tree column in the new file, a ``NAME.conllu`` beside it or the user's ``data.parse_*`` give its trees.
ADAPTATION = {"train.max_steps": "300", "train.eval_every": "50", "train.warmup_steps": "50",
              "train.patience": "0", "train.max_minutes": "0", "data.parse_train": "", "data.parse_dev": ""}
#: Measured on a held-out EWT genre (benchmarks/domain_adaptation.py, weblog, 200 sentences, dev F1 of the
#: four-genre model 43.84 at step 0): x0.2 fell to 39.4-42.3 at every evaluation, x0.05 stayed at 43.4-43.9.
LEARNING_RATE_SCALE = 0.05
#: How far (in logits) a new label's score starts below the mean of the old labels' scores. Its
#: probability is then at most e^-10 (4.5e-5) of an average old label's, below the best label's by
#: more, for every input, in float32, float16 and bfloat16 alike; a bias such as -1e4 would do the same
#: but is out of training's reach (with the shipped models' learning rate the adaptation moves a weight by
#: about 0.05 in its 300 steps), so the new labels could never be learnt.
NEW_LABEL_MARGIN = 10.0


class InitModelError(UserError):
    """``train.init`` does not name a model the run can start from (the message says why)."""


def init_path(spec: str) -> pathlib.Path:
    """The model ``train.init`` names: a packaged model (or a shipped one's name), a run, a ``.keras`` file."""
    from lisa_tf.packages.finding import model_path

    try:
        return model_path(spec, "srl", "train.init")
    except FileNotFoundError as error:
        raise InitModelError(f"train.init {error}") from None


def recorded_config(path: pathlib.Path) -> Optional[pathlib.Path]:
    """The configuration a model was trained with: a package's ``assets/config.json``, a run's
    ``config.json``; None for a ``.keras`` file, which records none."""
    from lisa_tf.packages.finding import PACKAGE_ASSETS, is_package

    if is_package(path):
        return path / PACKAGE_ASSETS / "config.json"
    if path.is_dir() and (path / "config.json").exists():
        return path / "config.json"
    return None


def adaptation_overrides(path: pathlib.Path) -> list[str]:
    """:data:`ADAPTATION` and the scaled learning rate for a run starting from the model at ``path``."""
    config = recorded_config(path)
    rate = json.loads(config.read_text())["train"]["learning_rate"] if config else None
    lowered = [f"train.learning_rate={rate * LEARNING_RATE_SCALE:g}"] if rate else []
    return [f"{k}={v}" for k, v in ADAPTATION.items()] + lowered


def load_init_model(path: pathlib.Path):
    """The trained model at ``path`` (float32), with its best weights when it is a run."""
    from lisa_tf.models.runs import load_model_file, load_run
    from lisa_tf.packages.finding import KERAS_FILE, is_package

    if is_package(path):
        return load_model_file(path / KERAS_FILE)
    if path.is_file():
        return load_model_file(path)
    return load_run(path)


def check_same_settings(config, path: pathlib.Path) -> None:
    """The run's ``model`` settings are the model's (those it records): else no weight has its place. The
    settings that shape no weight (dropout rates, label smoothing, the losses' weights:
    :data:`~lisa_tf.config.TRAINING_ONLY_MODEL_SETTINGS`) may be the run's own."""
    from lisa_tf.config import TRAINING_ONLY_MODEL_SETTINGS, load_config
    from lisa_tf.models.runs import model_differences

    recorded = recorded_config(path)
    if recorded is None:
        return
    differ = model_differences(load_config(recorded).model, config.model, str(path), ignore=TRAINING_ONLY_MODEL_SETTINGS)
    if differ:
        raise InitModelError(f"train.init {path}: another model ({'; '.join(differ)}); start from a model with "
                             "these settings, or leave out --config and model.* overrides to take its own (only "
                             "dropout rates, label smoothing and the losses' weights may differ)")


def copy_weights(source, target) -> dict:
    """Copy every weight of ``source`` into ``target`` (the same architecture, perhaps with grown
    vocabularies): equal shapes whole, a grown table into its leading block (the old rows of an
    embedding, the old columns of an output layer), its new entries from :func:`grown_weight`.
    Returns ``{"copied": n, "grown": m}``.

    Raises:
        InitModelError: the models differ in their number of weights or in a weight's rank, or a
            weight of ``target`` is smaller than ``source``'s (a vocabulary never shrinks).
    """
    if len(source.weights) != len(target.weights):
        raise InitModelError(f"train.init: the model has {len(source.weights)} weights, the run's {len(target.weights)}: "
                             "another architecture")
    counts = {"copied": 0, "grown": 0}
    for old, new in zip(source.weights, target.weights):
        value = np.asarray(old)
        shape = tuple(new.shape)
        if value.shape == shape:
            new.assign(value)
            counts["copied"] += 1
            continue
        if len(value.shape) != len(shape) or any(a > b for a, b in zip(value.shape, shape)):
            raise InitModelError(f"train.init: weight {new.path} is {shape} in the run, {value.shape} in the model")
        new.assign(grown_weight(value, np.array(new), new.path, new.trainable))
        counts["grown"] += 1
    return counts


def grown_weight(old: np.ndarray, initial: np.ndarray, path: str, trainable: bool = True) -> np.ndarray:
    """A weight grown from ``old`` to ``initial``'s shape, its new entries chosen so that the model's
    predictions stay what they were:

    - a word embedding table (``…/embeddings``): a new word's row is the unknown word's (row
      :data:`~data_pipeline.vocab.OOV_ID`), which the model read for that word before it had a row;
    - a weight the model does not train (the Viterbi transition scores): the grown model's own
      initial values (the BIO constraints of its tags);
    - an output layer (a kernel, a biaffine label scorer's tensors, a bias): along each grown axis the
      new entries are the mean of the old ones, so a new label's score is the mean of the old labels'
      (every label's score is linear in its own slice of these weights), and a bias's new entries are
      :data:`NEW_LABEL_MARGIN` lower, so the new label scores that far below the mean for every input.

    ``initial`` (the grown model's weight as built) is kept where ``old`` is empty along a grown axis.
    """
    from data_pipeline.vocab import OOV_ID

    grown = initial.copy()
    if any(size == 0 for size in old.shape):
        return grown
    if not trainable:
        grown[tuple(slice(0, n) for n in old.shape)] = old
        return grown
    if path.endswith("embeddings") and old.shape[1:] == initial.shape[1:]:
        extra = initial.shape[0] - old.shape[0]
        return np.concatenate([old, np.repeat(old[OOV_ID:OOV_ID + 1], extra, axis=0)]).astype(initial.dtype)
    value = old
    for axis, size in enumerate(initial.shape):
        extra = size - value.shape[axis]
        if extra:
            mean = value.mean(axis=axis, keepdims=True)
            value = np.concatenate([value, np.repeat(mean, extra, axis=axis)], axis=axis)
    value = value.astype(initial.dtype)
    if path.endswith("bias") and value.ndim == 1:
        value[old.shape[0]:] -= NEW_LABEL_MARGIN
    return value


def kept_transitions(source, matrix: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Viterbi tag-transition and first-tag log-probabilities (``model.transition_log_probs``) of a
    run from ``source``: ``source``'s own for its tags, estimated on far more sentences than the new
    data holds and the ones its predictions were made with; the new data's estimates (``matrix``,
    ``start``, over the grown tags) for every transition to or from a new tag."""
    matrix, start = np.array(matrix, np.float32), np.array(start, np.float32)
    old = np.asarray(source.transitions)
    matrix[: old.shape[0], : old.shape[1]] = old
    start[: old.shape[0]] = np.asarray(source.start_transitions)
    return matrix, start


def merged_lexicon(old: Optional[dict], new: Optional[dict], sense_labels) -> Optional[dict]:
    """The word-form lexicon of rolesets (:func:`lisa_tf.decoding.sense_choice.build_lexicon`'s fields)
    of a run from a model: the model's lexicon ``old`` (which knows the forms and rolesets of the
    model's own training data) and the new data's ``new`` (built for the grown ``sense_labels``, of which
    the model's are the first), each form's candidates the union of the two. A form neither gives
    candidates keeps a fallback roleset (the new lexicon's, else the old one's). ``new`` alone when
    either is missing (a model without senses, or a run without a sense head)."""
    if old is None or new is None:
        return new
    from lisa_tf.decoding.sense_choice import fallback_index  # TensorFlow: not before a run is made

    labels = list(sense_labels)
    known = {label: i for i, label in enumerate(labels)}

    def entries(lexicon) -> dict:
        names = lexicon["rolesets"]
        return {form: ([names[i] for i in ids], names[fallback] if fallback >= 0 else None)
                for form, ids, fallback in zip(lexicon["forms"], lexicon["candidates"], lexicon["fallbacks"])}

    core = dict(zip(old["rolesets"], old["core_roles"]))
    core.update(zip(new["rolesets"], new["core_roles"]))
    before, after = entries(old), entries(new)
    rolesets, extra = list(labels), {}
    forms, candidates, fallbacks = [], [], []
    for form in sorted(set(before) | set(after)):
        old_ids, old_fallback = before.get(form, ([], None))
        new_ids, new_fallback = after.get(form, ([], None))
        ids = sorted({known[name] for name in old_ids + new_ids if name in known})
        first = new_fallback or old_fallback
        fallback = fallback_index(first, rolesets, extra) if not ids and first else -1
        forms.append(form)
        candidates.append(ids)
        fallbacks.append(fallback)
    return {"forms": forms, "candidates": candidates, "fallbacks": fallbacks, "rolesets": rolesets,
            "core_roles": [core.get(name, "*") for name in rolesets]}


def recorded_lexicon(path: pathlib.Path) -> Optional[dict]:
    """The word-form lexicon a ``.keras`` model file records (its config's ``sense_lexicon``), read
    without loading the model; None when it records none or the file is missing."""
    import zipfile

    if not path.is_file() or not zipfile.is_zipfile(path):
        return None
    with zipfile.ZipFile(path) as archive:
        try:
            config = json.loads(archive.read("config.json"))
        except (KeyError, ValueError):
            return None
    return config.get("config", {}).get("sense_lexicon")


def run_lexicon(new: Optional[dict], sense_labels, init_model, run_dir: pathlib.Path) -> Optional[dict]:
    """The lexicon of a run from a model: :func:`merged_lexicon` of the starting model's (``init_model``,
    at step 0) or, when the run resumes from its checkpoints, of the one the run recorded at step 0 in
    its ``model.keras``, and the new data's ``new``."""
    from lisa_tf.models.runs import MODEL_FILE

    if init_model is not None:
        old = getattr(init_model, "sense_lexicon", None)
        old = dict(old) if old is not None else None
    else:
        old = recorded_lexicon(run_dir / MODEL_FILE)
    return merged_lexicon(old, new, sense_labels)
