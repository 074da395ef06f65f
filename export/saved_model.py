"""SavedModel export with serving signatures that need nothing but core TensorFlow.

``export_run(run_dir, out_dir)`` rebuilds a trained model in float32 (whatever policy it was
trained with), loads its best weights and saves a ``tf.Module`` holding the model's variables, the
vocabulary tables (lower-casing and OOV in-graph; the word and label tables are read from ``assets/``:
``words.tsv``, ``srl_labels.tsv``, ``pos_tags.tsv``, ``dep_labels.tsv``, one ``entry<TAB>id`` per line) and the
Viterbi decoder. The Keras model itself is kept out of the module's tracked attributes — it is only
captured by the traced functions — so Keras adds no signature of its own with inputs cast to the
compute dtype.

Signatures (``B`` sentences, ``T`` tokens, ``P`` predicates):

* sentence models (LISA, SA):

  - ``serving_default(tokens: string [B, T])``, padded with ``""``;
  - ``with_parse(tokens, parse_heads: int32 [B, T])``: 1-based heads, 0 = root, −1 on padding;
    the parse replaces the syntax head's attention (LISA §3, parse injection). REST ignores signature
    defaults, hence a separate signature;
  - ``sentences(sentences: string [B])``: whitespace-tokenised sentences, split in-graph;

  outputs ``predicate_flags`` int32 [B, T], ``pos`` string [B, T], ``heads`` int32 [B, T] (1-based,
  0 = root), ``dep_labels`` string [B, T], ``predicate_positions`` int32 [B, P] (−1 pad),
  ``srl_tags`` string [B, P, T] (``""`` on padding), ``srl_scores`` float32 [B, P, T] (probability of
  the chosen tag), ``lengths`` int32 [B].

* predicate models (DeepAtt, Selective Connection): ``serving_default(tokens, predicate_index: int32
  [B])`` and ``sentences(sentences, predicate_index)``; outputs ``srl_tags`` string [B, T],
  ``srl_scores`` float32 [B, T], ``lengths`` int32 [B].
"""

from __future__ import annotations

import os
import pathlib
import shutil
import tempfile

import keras
import tensorflow as tf

from data_pipeline.vocab import OOV_ID, PAD_ID

from lisa_tf.training.loop import restore_model


def _table(path: str, default: int) -> tf.lookup.StaticHashTable:
    """``entry -> line number`` from an asset file with one ``entry<TAB>id`` per line."""
    initializer = tf.lookup.TextFileInitializer(
        path, tf.string, 0, tf.int64, 1, delimiter="\t", value_index_offset=0
    )
    return tf.lookup.StaticHashTable(initializer, default_value=default)


def _name_table(path: str) -> tf.lookup.StaticHashTable:
    """``id -> entry`` from the same kind of asset file (the label names of the model's output ids)."""
    initializer = tf.lookup.TextFileInitializer(path, tf.int64, 1, tf.string, 0, delimiter="\t")
    return tf.lookup.StaticHashTable(initializer, default_value="")


def _write_table_asset(directory: pathlib.Path, name: str, entries) -> str:
    path = directory / f"{name}.tsv"
    path.write_text("".join(f"{entry}\t{i}\n" for i, entry in enumerate(entries)))
    return str(path)


class SrlServingModule(tf.Module):
    """The exported module: variables, vocabulary tables and the traced serving functions."""

    def __init__(self, model, vocabs, asset_dir: pathlib.Path):
        super().__init__(name="lisa_tf_serving")
        self.model_variables = list(model.variables)  # tracked, so they are saved
        self.words_asset = tf.saved_model.Asset(_write_table_asset(asset_dir, "words", vocabs.words.entries))
        self.word_table = _table(self.words_asset.asset_path, OOV_ID)
        # Output ids are mapped to names through the label assets (srl_labels.tsv, pos_tags.tsv,
        # dep_labels.tsv), so the assets are the single source of the names a served model returns.
        self.label_assets = {
            kind: tf.saved_model.Asset(_write_table_asset(asset_dir, file, vocabulary.entries))
            for kind, file, vocabulary in (("srl", "srl_labels", vocabs.srl), ("pos", "pos_tags", vocabs.pos),
                                           ("dep", "dep_labels", vocabs.dep_labels))
        }
        self.label_tables = {kind: _name_table(asset.asset_path) for kind, asset in self.label_assets.items()}
        layout = model.layout
        uses_syntax = getattr(model, "uses_syntax", False)

        def features(tokens, predicate_index=None, parse_heads=None):
            mask = tf.not_equal(tokens, "")
            lower = tf.strings.lower(tokens, encoding="utf-8")
            word_ids = tf.where(mask, tf.cast(self.word_table.lookup(lower), tf.int32), PAD_ID)
            batch, time = tf.shape(tokens)[0], tf.shape(tokens)[1]
            zeros = tf.zeros([batch, time], tf.int32)
            out = {
                "tokens": tokens,
                "word_ids": word_ids,
                "token_mask": mask,
                "length": tf.reduce_sum(tf.cast(mask, tf.int32), axis=1),
                "sentence_index": tf.range(batch),
                "pos_ids": zeros,
                "joint_pos_predicate_ids": zeros,
                "dep_label_ids": zeros,
                "heads": zeros,
            }
            if parse_heads is not None:
                positions = tf.broadcast_to(tf.range(time)[None, :], [batch, time])
                heads = tf.where(parse_heads > 0, parse_heads - 1, positions)  # root = self-loop
                out["heads"] = tf.where(mask, heads, 0)
            if layout == "predicate":
                out["predicate_indicator"] = tf.one_hot(predicate_index, time, dtype=tf.int32)
                out["predicate_index"] = tf.zeros([batch], tf.int32)
                out["predicate_position"] = predicate_index
                out["srl_tag_ids"] = zeros
            else:
                out["predicate_indicator"] = zeros
                out["predicate_positions"] = tf.zeros([batch, 0], tf.int32)
                out["predicate_mask"] = tf.zeros([batch, 0], tf.bool)
                out["num_predicates"] = tf.zeros([batch], tf.int32)
                out["srl_tag_ids"] = tf.zeros([batch, 0, time], tf.int32)
            return out

        def names(ids, vocabulary, mask):
            return tf.where(mask, self.label_tables[vocabulary].lookup(tf.cast(ids, tf.int64)), "")

        def chosen_probability(probs, tags):
            return tf.gather(probs, tags, batch_dims=len(tags.shape))

        def run(tokens, predicate_index=None, parse_heads=None):
            batch = features(tokens, predicate_index, parse_heads)
            options = {}
            if uses_syntax:
                options["inject_parse"] = parse_heads is not None
            if getattr(model, "predicts_predicates", False):
                options["gold_predicates"] = False
            scores = model.predict_scores(batch, **options)
            decoded = model.decode_scores(scores, batch)
            mask = batch["token_mask"]
            out = {"lengths": batch["length"]}
            if layout == "predicate":
                out["srl_tags"] = names(decoded["srl_tags"], "srl", mask)
                out["srl_scores"] = tf.where(mask, chosen_probability(scores["srl_probs"], decoded["srl_tags"]), 0.0)
                return out
            flags = tf.logical_and(tf.cast(decoded["predicate_flags"], tf.bool), mask)
            # Predicates of each sentence, left-aligned into [B, P] (−1 padding).
            ragged = tf.ragged.boolean_mask(tf.broadcast_to(tf.range(tf.shape(tokens)[1])[None], tf.shape(flags)), flags)
            positions = ragged.to_tensor(default_value=-1)
            valid = positions >= 0
            safe = tf.maximum(positions, 0)
            tags = tf.gather(decoded["srl_tags"], safe, batch_dims=1)  # [B, P, T]
            probs = tf.gather(scores["srl_probs"], safe, batch_dims=1)  # [B, P, T, L]
            row_mask = tf.logical_and(valid[:, :, None], mask[:, None, :])
            out.update(
                predicate_flags=tf.cast(flags, tf.int32),
                predicate_positions=positions,
                srl_tags=names(tags, "srl", row_mask),
                srl_scores=tf.where(row_mask, chosen_probability(probs, tags), 0.0),
            )
            if "pos" in decoded:
                out["pos"] = names(decoded["pos"], "pos", mask)
            if "heads" in decoded:
                positions_t = tf.range(tf.shape(tokens)[1])[None, :]
                heads = tf.where(tf.equal(decoded["heads"], positions_t), 0, decoded["heads"] + 1)
                out["heads"] = tf.where(mask, heads, -1)
            if "dep_labels" in decoded:
                out["dep_labels"] = names(decoded["dep_labels"], "dep", mask)
            return out

        def split(sentences):
            words = tf.strings.split(tf.strings.strip(sentences))  # whitespace tokenisation, core ops
            return words.to_tensor(default_value="")

        tokens_spec = tf.TensorSpec([None, None], tf.string, name="tokens")
        sentences_spec = tf.TensorSpec([None], tf.string, name="sentences")
        if layout == "predicate":
            index_spec = tf.TensorSpec([None], tf.int32, name="predicate_index")
            self.serve_tokens = tf.function(lambda tokens, predicate_index: run(tokens, predicate_index),
                                            input_signature=[tokens_spec, index_spec])
            self.serve_sentences = tf.function(
                lambda sentences, predicate_index: run(split(sentences), predicate_index),
                input_signature=[sentences_spec, index_spec],
            )
        else:
            self.serve_tokens = tf.function(lambda tokens: run(tokens), input_signature=[tokens_spec])
            self.serve_sentences = tf.function(lambda sentences: run(split(sentences)), input_signature=[sentences_spec])
            if uses_syntax:
                heads_spec = tf.TensorSpec([None, None], tf.int32, name="parse_heads")
                self.serve_with_parse = tf.function(
                    lambda tokens, parse_heads: run(tokens, parse_heads=parse_heads),
                    input_signature=[tokens_spec, heads_spec],
                )

    def signatures(self) -> dict:
        result = {"serving_default": self.serve_tokens, "sentences": self.serve_sentences}
        if hasattr(self, "serve_with_parse"):
            result["with_parse"] = self.serve_with_parse
        return result


def export_run(run_dir: str | os.PathLike, out_dir: str | os.PathLike, weights: str = "best") -> pathlib.Path:
    """Export the run's model to ``out_dir`` (e.g. ``exports/srl/1``, TF-Serving layout); float32."""
    out_dir = pathlib.Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise FileExistsError(f"{out_dir} exists and is not empty; choose a new version directory")
    previous = keras.mixed_precision.global_policy().name
    keras.mixed_precision.set_global_policy("float32")  # exports are float32 whatever the training policy
    try:
        model, vocabs, _ = restore_model(run_dir, weights)
    finally:
        keras.mixed_precision.set_global_policy(previous)
    with tempfile.TemporaryDirectory() as scratch:
        module = SrlServingModule(model, vocabs, pathlib.Path(scratch))
        tf.saved_model.save(module, str(out_dir), signatures=module.signatures())
    shutil.copy(pathlib.Path(run_dir) / "config.json", out_dir / "assets" / "config.json")
    return out_dir
