"""``package-model --update-card PACKAGE --rebuild-lexicon`` (:func:`lisa_tf.packages.writing.update_card`): a
package's sense lexicon built again by this code, from its training data, with the same weights."""

from __future__ import annotations

import json
import shutil

import numpy as np


def test_a_packages_stale_lexicon_is_rebuilt_with_the_same_weights(lisa_run, tmp_path):
    from lisa_tf.decoding.sense_choice import lexicon_for_run
    from lisa_tf.models.runs import load_model_file, load_run, load_run_config, save_model, with_lexicon
    from lisa_tf.packages import writing
    from data_pipeline.splits import read_split

    model = load_run(lisa_run)
    assert model.sense_choice is not None, "the tiny LISA run is trained on EWT sentences with senses"
    labels = list(model.sense_labels)
    stale = {"forms": [], "candidates": [], "fallbacks": [], "rolesets": labels, "core_roles": ["*"] * len(labels)}
    package = tmp_path / "srl-tiny"
    (package / "assets").mkdir(parents=True)
    save_model(with_lexicon(model, stale), package / "model.keras")
    shutil.copy(lisa_run / "config.json", package / "assets" / "config.json")
    (package / "card.json").write_text(json.dumps({"files": {"weights": "float32"}}))

    writing._rebuild_lexicon(package, float16=False)

    rebuilt = load_model_file(package / "model.keras")
    config = load_run_config(lisa_run)
    train = read_split(config.data.train, config.data.format, config.data.parse_train, config.data.max_train_sentences)
    assert rebuilt.sense_lexicon == lexicon_for_run(config, labels, train)
    assert len(rebuilt.sense_lexicon["forms"]) > 1000  # the frame index's forms, not the stale empty list
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), rebuilt.get_weights()))
    assert (package / "english-word-forms" / "LICENSE").is_file()
    assert (package / "propbank-frames").is_dir()
