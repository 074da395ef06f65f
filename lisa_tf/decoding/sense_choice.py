"""Each predicate's roleset, chosen among the rolesets its word can have: the word-form lexicon and the
in-graph choice.

The sense head (:mod:`lisa_tf.models.sense_head`) scores every roleset of the training data, ``bark.01``
and ``kill.01`` alike. A predicate's word narrows that down: "barked" can be ``bark.01`` or ``bark.02``,
never ``kill.01``. :func:`build_lexicon` writes, for every word form it knows, the rolesets that form can
have (its *candidates*), and :class:`SenseChoice` takes the head's best candidate in-graph, so an export
chooses as the Keras model does.

Where the candidates of a form come from:

1. the training data: every roleset a predicate with that (lower-cased) form has there (``service`` →
   ``serve.02``, ``'s`` → ``be.01``: unified PropBank files nouns and adjectives under verb rolesets, so
   the roleset's lemma differs from the word's own lemma for about one predicate in eight);
2. the frame index (:mod:`data_pipeline.frame_index`): every roleset whose predicate lemma or alias is the
   form's lemma. The lemma of a form comes from generating every inflection of every index word
   (:mod:`data_pipeline.word_forms`): regular English inflection (``bark`` → barks, barked, barking;
   ``carry`` → carries, carried; ``stop`` → stopped, stopping; ``make`` → making), with the irregular
   forms of the shipped word-form table (``lend`` → lent, ``go`` → went, ``rise`` → risen) and without
   the regular-looking forms that are other words (``former`` is no form of ``form``). How often this
   finds the word's lemma is measured against UD English-EWT's gold lemmas by
   ``benchmarks/sense_lexicon.py`` (99.03 % of content tokens; 82.59 % by regular inflection alone). A
   phrasal lemma (``pick_up``) is also a candidate of its first word, where PropBank puts the predicate.
   A regular inflection keeps only the rolesets its ending fits (the part of speech of the roleset's alias,
   :data:`INFLECTION_POS`): ``fined`` is ``fine.01`` (a verb's) and never ``fine.04`` ("alright, ok", an
   adjective's), ``fared`` no form of ``far``. On the CoNLL-2005 test verbs (WSJ and Brown, 6,071), the most
   frequent training roleset among a verb's candidates is one without a verb alias for 16 of them, 47
   without this rule.

The choice for one predicate, and its *source*:

- ``model``: the form has candidates among the rolesets the model knows: the most probable of them;
- ``frame_index``: the form has rolesets in the index but the model knows none (the training data never
  had them): the index's first (lowest-numbered) roleset of the form's lemma, a real roleset marked as a
  fallback, not the model's choice;
- ``none``: the form is unknown to both: no roleset (``""``), never a made-up one.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections import defaultdict
from typing import Iterable, Optional, Sequence

import keras
import numpy as np
import tensorflow as tf

from data_pipeline.word_forms import WordForms, index_heads, regular_inflections, shipped_word_forms
from lisa_tf.decoding.frame_meanings import SOURCES  # the sources of a choice, by id


def _index_words(frame_index, word_forms: Optional[WordForms] = None) -> dict[str, set[str]]:
    """form → the index words (lemmas, aliases) it can be an inflection of (``word_forms``: the shipped
    table of :mod:`data_pipeline.word_forms` unless given)."""
    word_forms = shipped_word_forms() if word_forms is None else word_forms
    lemmas_of: dict[str, set[str]] = defaultdict(set)
    for word in frame_index.lemmas():
        for head in index_heads([word]):
            for form in word_forms.inflections(head):
                lemmas_of[form].add(word)
    return lemmas_of


#: The parts of speech (PropBank's alias tags) a regular inflection of a word can have, by its ending: an
#: -ed form is a verb's ("fined" is fine.01 "extract money because of misdeed", never the adjective's
#: fine.04 "alright, ok"), -ing a verb's or a noun's, -er and -est an adjective's, -s a verb's or a noun's.
#: On PropBank-EWT (train, dev and test) the gold roleset of a regular inflection keeps one of these in
#: 12,778 of 12,789 predicates.
INFLECTION_POS = (("ing", frozenset("vn")), ("ed", frozenset("v")), ("est", frozenset("j")),
                  ("er", frozenset("j")), ("s", frozenset("vn")))


def _rolesets_of_form(frame_index, word: str, head: str, form: str, word_forms: WordForms) -> list[str]:
    """The rolesets of index word ``word`` that ``form``, an inflection of its head ``head``, can have: those
    whose aliases of ``word`` have a part of speech the inflection's ending allows (:data:`INFLECTION_POS`),
    or give ``word`` no part of speech at all; every roleset of ``word`` for the head itself and its irregular
    forms. So ``fared`` is no form of the adjective ``far``."""
    rolesets = frame_index.rolesets_of(word)
    if form == head or form in word_forms.irregular.get(head, ()):
        return rolesets
    allowed = next((tags for ending, tags in INFLECTION_POS if form.endswith(ending)), None)
    if allowed is None:
        return rolesets

    def fits(roleset_id: str) -> bool:
        tags = {tag for alias, tag in frame_index.roleset(roleset_id).aliases if alias == word and tag}
        return not tags or bool(tags & allowed)

    return [r for r in rolesets if fits(r)]


def _index_forms(frame_index, word_forms: Optional[WordForms] = None) -> dict[str, tuple[frozenset[str], str]]:
    """form → (every roleset of every index word it can be an inflection of (:func:`_index_words`) that its
    ending allows (:func:`_rolesets_of_form`), the first of them in :func:`_roleset_order`)."""
    word_forms = shipped_word_forms() if word_forms is None else word_forms
    found: dict[str, set[str]] = defaultdict(set)
    for word in frame_index.lemmas():
        for head in index_heads([word]):
            for form in word_forms.inflections(head):
                found[form].update(_rolesets_of_form(frame_index, word, head, form, word_forms))
    return {form: (frozenset(rolesets), min(rolesets, key=_roleset_order)) for form, rolesets in found.items() if rolesets}



def fallback_index(roleset: str, rolesets: list, extra: dict) -> int:
    """The index a lexicon gives ``roleset``, a fallback the sense head cannot predict (a form whose
    rolesets the model never saw): its place in ``rolesets``, appended after the head's labels the
    first time (``extra`` remembers where each went)."""
    index = extra.setdefault(roleset, len(rolesets))
    if index == len(rolesets):
        rolesets.append(roleset)
    return index

def build_lexicon(frame_index, sense_labels: Sequence[str], training: Iterable[tuple[str, Optional[str]]],
                  index_forms: Optional[dict] = None) -> dict:
    """The config of a :class:`SenseChoice` (plain JSON data).

    Args:
        frame_index: a :class:`~data_pipeline.frame_index.FrameIndex`.
        sense_labels: the rolesets the model's sense head scores, in id order.
        training: ``(word form, roleset id)`` of every training predicate (roleset ``None`` skipped).
        index_forms: the index's form table (:func:`_index_forms`) when already computed.

    Returns:
        ``{"forms", "candidates", "fallbacks", "rolesets", "core_roles"}``: the known forms (lower-cased,
        sorted); per form its candidates (ids into ``sense_labels``, sorted) and its fallback (an index
        into ``rolesets``, −1 none); ``rolesets``: ``sense_labels`` followed by the fallback rolesets;
        ``core_roles``: per roleset the numbers of its core roles in the index (``"012"``), or ``"*"`` when
        the index lacks it (no role is ruled out).
    """
    sense_labels = list(sense_labels)
    known = {label: i for i, label in enumerate(sense_labels)}
    seen: dict[str, set[str]] = defaultdict(set)
    for form, roleset in training:
        if roleset:
            seen[form.lower()].add(roleset)
    index_forms = _index_forms(frame_index) if index_forms is None else index_forms
    rolesets = list(sense_labels)
    extra: dict[str, int] = {}
    forms, candidates, fallbacks = [], [], []
    for form in sorted(set(seen) | set(index_forms)):
        found, first = index_forms.get(form, (frozenset(), ""))
        if form in seen:
            found = found | seen[form]
            first = min(found, key=_roleset_order)
        ids = sorted(known[r] for r in found if r in known)
        fallback = fallback_index(first, rolesets, extra) if not ids and found else -1
        forms.append(form)
        candidates.append(ids)
        fallbacks.append(fallback)
    core_roles = [core_role_numbers(frame_index.roleset(roleset_id)) for roleset_id in rolesets]
    return {"forms": forms, "candidates": candidates, "fallbacks": fallbacks, "rolesets": rolesets,
            "core_roles": core_roles}


def core_role_numbers(roleset) -> str:
    """A lexicon's ``core_roles`` entry of a :class:`~data_pipeline.frame_index.Roleset`: the numbers of
    its core roles, sorted (``"012"``); ``"*"`` for None (a roleset the index lacks: no role is ruled out)."""
    return "*" if roleset is None else "".join(sorted({r.number for r in roleset.roles if r.number != "M"}))


def _roleset_order(roleset_id: str) -> tuple:
    """``bark.01`` before ``bark.02`` before ``bark_up.01``; numbers compared as numbers."""
    lemma, _, number = roleset_id.rpartition(".")
    return (len(lemma), lemma, int(number) if number.isdigit() else 1 << 30, number)


def training_predicates(sentences) -> Iterable[tuple[str, Optional[str]]]:
    """``(word form, roleset)`` of every predicate of ``sentences`` (for :func:`build_lexicon`)."""
    for sentence in sentences:
        for predicate in sentence.predicates:
            yield sentence.words[predicate.position], predicate.roleset


def lexicon_for_run(config, sense_labels: Sequence[str], train_sentences) -> Optional[dict]:
    """The lexicon of a run's model (an :class:`~lisa_tf.config.ExperimentConfig`): ``data.frames`` or
    the shipped frame index, and the run's training predicates; None for a model without senses.

    Raises:
        ConfigError: ``data.frames`` is not a readable frame index.
    """
    from data_pipeline.errors import DataFormatError
    from data_pipeline.frame_index import DEFAULT_FRAME_INDEX
    from lisa_tf.config import ConfigError

    if not sense_labels or config.model.sense_loss_weight <= 0 or config.model.kind == "parser":
        return None
    path = config.data.frames or DEFAULT_FRAME_INDEX
    try:
        index, index_forms = _load_index(os.path.abspath(path), os.stat(path).st_mtime_ns)
    except FileNotFoundError:
        raise ConfigError(f"data.frames: {path}: no such file; expected a frame index "
                          "(python -m data_pipeline.frame_index build), or empty for the shipped one") from None
    except DataFormatError as error:
        raise ConfigError(f"data.frames: {error}") from None
    return build_lexicon(index, sense_labels, training_predicates(train_sentences), index_forms)


@dataclasses.dataclass(frozen=True)
class _Lexicon:
    """:func:`build_lexicon`'s lists, as :class:`SenseChoice` holds them."""

    forms: list
    candidates: list
    fallbacks: list
    rolesets: list
    core_roles: list


@tf.autograph.experimental.do_not_convert
def _core_role_table(lexicon: _Lexicon, roles: tuple) -> np.ndarray:
    """``[rolesets + 1, len(roles)]`` bool: which of ``roles`` each roleset has (``"*"``: any), the last
    row all true (``none``, a roleset the index lacks). Plain Python, never converted by AutoGraph: converted,
    its 80,000 rows cost a traced decoder seconds; as it is, about 0.1 s."""
    rows = [[c == "*" or r in c for r in roles] for c in lexicon.core_roles] + [[True] * len(roles)]
    return np.array(rows, bool).reshape(len(lexicon.core_roles) + 1, len(roles))


@functools.lru_cache(maxsize=4)
def _load_index(path: str, modified: int):
    """The frame index at ``path`` as of its modification time ``modified`` and its form table
    (:func:`_index_forms`), read and computed once per process: a process's runs share them."""
    from data_pipeline.frame_index import FrameIndex

    index = FrameIndex.load(path)
    return index, _index_forms(index)


class SenseChoice(keras.layers.Layer):
    """Chooses each predicate's roleset among its word's candidates (module docstring), in-graph.

    Args:
        forms, candidates, fallbacks, rolesets, core_roles: the lexicon, as :func:`build_lexicon` returns.

    Call arguments:
        words: ``[N]`` string, the predicates' word forms (any case).
        sense_probs: ``[N, S]`` the sense head's probabilities over the model's rolesets (the first ``S``
            of ``rolesets``).

    Returns:
        dict: ``sense`` ``[N]`` int32, an index into ``rolesets`` (−1: none); ``source`` ``[N]`` int32, an
        index into :data:`SOURCES`.

    Example:
    ```python
    choice = SenseChoice(**build_lexicon(FrameIndex.load(), ["bark.01", "kill.01"], []))
    choice(tf.constant(["barked"]), tf.constant([[0.1, 0.9]]))["sense"]  # [0]: bark.01, not kill.01
    ```
    """

    def __init__(self, forms, candidates, fallbacks, rolesets, core_roles, **kwargs):
        super().__init__(**kwargs)
        # Kept in a plain object: Keras would wrap a list attribute, and each of its 80,000 rows, for tracking.
        self.lexicon = _Lexicon(forms=list(forms), candidates=[list(map(int, row)) for row in candidates],
                                fallbacks=list(map(int, fallbacks)), rolesets=list(rolesets), core_roles=list(core_roles))
        # Row 0 is the unknown form (no candidates, no fallback).
        # an array, which the lookup keeps as it is (a list it would wrap and walk row by row, as Keras tracks lists)
        self.lookup = keras.layers.StringLookup(vocabulary=np.array(self.lexicon.forms, dtype=object), num_oov_indices=1,
                                                name="form_lookup") if self.lexicon.forms else None
        self._splits = np.cumsum([0, 0] + [len(row) for row in self.lexicon.candidates]).astype(np.int64)
        self._values = np.array([i for row in self.lexicon.candidates for i in row], np.int32)
        self._fallbacks = np.array([-1] + self.lexicon.fallbacks, np.int32)
        # No weights, and called only when decoding: built here, so that a model holding it counts as built
        # before its first training step (Keras warns on, and tf.distribute tries to build, unbuilt state).
        if self.lookup is not None:
            self.lookup.build(None)
        self.built = True

    def call(self, words, sense_probs):
        probs = tf.cast(sense_probs, tf.float32)
        count = tf.shape(probs)[0]
        if self.lookup is None:
            rows = tf.zeros([count], tf.int64)
        else:
            rows = tf.cast(self.lookup(tf.strings.lower(words, encoding="utf-8")), tf.int64)
        table = tf.RaggedTensor.from_row_splits(tf.constant(self._values), tf.constant(self._splits))
        chosen = tf.gather(table, rows)  # [N, None] candidate ids
        allowed = tf.scatter_nd(
            tf.stack([tf.cast(chosen.value_rowids(), tf.int32), chosen.flat_values], axis=1),
            tf.ones_like(chosen.flat_values), tf.shape(probs)) > 0
        has = tf.reduce_any(allowed, axis=-1)
        best = tf.argmax(tf.where(allowed, probs, -1.0), axis=-1, output_type=tf.int32)
        fallback = tf.gather(tf.constant(self._fallbacks), rows)
        sense = tf.where(has, best, fallback)
        source = tf.where(has, 1, tf.where(fallback >= 0, 2, 0))
        return {"sense": sense, "source": source}

    def roleset_names(self, sense):
        """``[N]`` string roleset ids of :meth:`call`'s ``sense`` (``""`` for −1)."""
        rolesets = self.lexicon.rolesets
        names = tf.constant(rolesets + [""])
        return tf.gather(names, tf.where(sense >= 0, sense, len(rolesets)))

    def allowed_core(self, sense, roles: Sequence[str]):
        """``[N, len(roles)]`` bool: which of the core ``roles`` (``("0", "1", …)``) each chosen roleset
        has; every one for ``none`` and for rolesets the index lacks."""
        table = _core_role_table(self.lexicon, tuple(roles))
        return tf.gather(tf.constant(table), tf.where(sense >= 0, sense, len(self.lexicon.rolesets)))

    def get_config(self):
        config = super().get_config()
        config.update({field.name: getattr(self.lexicon, field.name) for field in dataclasses.fields(self.lexicon)})
        return config


__all__ = ["SOURCES", "SenseChoice", "build_lexicon", "lexicon_for_run", "regular_inflections", "training_predicates"]
