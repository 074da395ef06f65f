"""From a trained dependency parser (:mod:`lisa_tf.models.parser`) to parsed sentences and CoNLL-U.

:func:`parse_sentences` batches sentences by token budget with the model's own preprocessor, scores
every (dependent, head) pair in-graph, and decodes each sentence on the CPU with
:func:`lisa_tf.decoding.mst.decode_tree` (a tree: one root, no cycle); each token's label is the best
label for its chosen head. :func:`parse_with_export` parses with a parser's SavedModel export instead
(:mod:`export.saved_model`: Eisner's projective trees, decoded in-graph). :func:`conllu_lines` writes
the result in CoNLL-U, which is what LISA takes with ``--parse`` (only the HEAD column matters there).
The dev scores the training loop records for a parser run are
:func:`lisa_tf.evaluation.parse_eval.parse_scores`'s.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Optional, Sequence

import numpy as np
import tensorflow as tf

from data_pipeline.dataset import inference_batches
from data_pipeline.sentence import Sentence

from lisa_tf.decoding.mst import decode_tree, self_loop_scores
from lisa_tf.labelling.compiled import compiled


#: What the parser reads of a batch (the rest stays out of the traced function's signature), and the
#: features its preprocessor makes of it.
_BATCH = ("tokens", "length", "sentence_index")
_FEATURES = ("tokens", "word_ids", "token_mask", "length")


def _parser_scores(models: Sequence, batch: dict) -> dict:
    """The parser's scores of a batch as read (featurised by its preprocessor first), compiled once
    per model (:mod:`lisa_tf.labelling.compiled`: eager Keras runs the LSTM step by step in Python)."""
    features = models[0].preprocessor(batch)
    return models[0].predict_scores({name: features[name] for name in _FEATURES})


def parse_sentences(model, sentences: Sequence[Sentence], token_budget: int = 4096, tree: bool = True) -> list[Sentence]:
    """``sentences`` with the parser's ``heads`` (1-based, 0 = root), ``dep_labels``, ``pos`` and ``upos``
    (``None`` for a layer the parser does not predict: the input's gold layers never pass through).

    Args:
        model: a :class:`~lisa_tf.models.parser.DependencyParser`.
        sentences: the words to parse (any gold layers are replaced; predicates are kept).
        token_budget: most padded tokens per batch.
        tree: decode the maximum spanning tree (True) or take each token's best head (False:
            may give cycles and several roots; for comparison only).
    """
    if not sentences:
        return []
    vocabs = model.vocabularies()
    parsed: list[Optional[Sentence]] = [None] * len(sentences)
    scorer = compiled(_parser_scores, [model])
    for batch in inference_batches(sentences, vocabs, "sentence", token_budget):
        scores = scorer({name: batch[name] for name in _BATCH})
        arcs = scores["arc_log_probs"].numpy()
        label_ids = scores["label_ids"].numpy() if "label_ids" in scores else None
        tags = {name: np.argmax(scores[f"{name}_probs"].numpy(), axis=-1)
                for name in ("pos", "upos") if f"{name}_probs" in scores}
        for b, (s, n) in enumerate(zip(batch["sentence_index"].numpy(), batch["length"].numpy())):
            n = int(n)
            if tree:
                heads = decode_tree(self_loop_scores(arcs[b], n))[1:]
            else:
                best = arcs[b, :n, :n].argmax(axis=-1)
                heads = np.where(best == np.arange(n), 0, best + 1)
            changes: dict = {"heads": [int(h) for h in heads], "dep_labels": None, "pos": None, "upos": None}
            if label_ids is not None:
                columns = np.where(heads == 0, np.arange(n), heads - 1)  # back to self-loop columns
                changes["dep_labels"] = [vocabs.dep_labels.entry(int(label_ids[b, d, h])) for d, h in enumerate(columns)]
            for name, ids in tags.items():
                changes[name] = [getattr(vocabs, name).entry(int(i)) for i in ids[b, :n]]
            parsed[int(s)] = dataclasses.replace(sentences[int(s)], **changes)
    return parsed


def parse_with_export(signature, sentences: Sequence[Sentence], token_budget: int = 4096) -> list[Sentence]:
    """``sentences`` with the ``heads``, ``dep_labels``, ``pos`` and ``upos`` of a parser export.

    Args:
        signature: the export's ``serving_default`` (``tokens`` string [B, T] → ``heads``, and
            ``dep_labels``/``pos``/``upos`` when the parser has them), called with keyword arguments.
        sentences: the words to parse, none empty.
        token_budget: most padded tokens per call (consecutive sentences; at least one per call).
    """
    parsed: list[Sentence] = []
    start = 0
    while start < len(sentences):
        end, width = start + 1, len(sentences[start])
        while end < len(sentences) and (end - start + 1) * max(width, len(sentences[end])) <= token_budget:
            width = max(width, len(sentences[end]))
            end += 1
        batch = sentences[start:end]
        tokens = tf.constant([list(s.words) + [""] * (width - len(s)) for s in batch], tf.string)
        out = {key: value.numpy() for key, value in signature(tokens=tokens).items()}
        for b, sentence in enumerate(batch):
            n = len(sentence)
            changes: dict = {"heads": [int(h) for h in out["heads"][b, :n]], "dep_labels": None, "pos": None,
                             "upos": None}
            for key in ("dep_labels", "pos", "upos"):
                if key in out:
                    changes[key] = [value.decode("utf-8") for value in out[key][b, :n]]
            parsed.append(dataclasses.replace(sentence, **changes))
        start = end
    return parsed


def conllu_lines(sentences: Iterable[Sentence]) -> Iterable[str]:
    """CoNLL-U lines (with a blank line after each sentence): ID, FORM, UPOS, XPOS (the predicted POS,
    the language-specific tags the project's reader reads), HEAD, DEPREL; the other columns ``_``."""
    for sentence in sentences:
        upos = sentence.upos or ["_"] * len(sentence)
        pos = sentence.pos or ["_"] * len(sentence)
        heads = sentence.heads or ["_"] * len(sentence)
        labels = sentence.dep_labels or ["_"] * len(sentence)
        for i, word in enumerate(sentence.words):
            yield f"{i + 1}\t{word}\t_\t{upos[i]}\t{pos[i]}\t_\t{heads[i]}\t{labels[i]}\t_\t_"
        yield ""
