"""A user's own frame files in a trained model: the rolesets of the lemmas they add become sense
candidates of those lemmas' word forms, without retraining.

A model's word-form lexicon (:func:`lisa_tf.decoding.sense_choice.build_lexicon`) is built when it is
trained, from the frame index of its run (``data.frames``, by default the shipped PropBank index) and
its training predicates, and saved with it. A user's own index (``lisa_tf.load(..., frames=PATH)``,
``predict``/``export``/``label-corpus --frames``, the spaCy component's ``frames``) is merged over the
shipped one for the meanings (:func:`lisa_tf.decoding.frame_meanings.frame_index`); here it is merged
over the lexicon, so the model's sense choice and its frame-constrained decoding see it too:

- a form the model chooses among rolesets it knows (candidates) keeps them: the sense head's choice is
  the model's, whatever the user's files add;
- another form of a lemma or alias of the user's index (its inflections, as the model's lexicon forms
  them: :func:`lisa_tf.decoding.sense_choice._index_forms`; ``blorf`` → blorfs, blorfed, blorfing) gets
  as candidates the rolesets of the user's index the model knows, and when it knows none, as fallback
  (source ``frame_index``) the first (:func:`~lisa_tf.decoding.sense_choice._roleset_order`) of the
  user's rolesets and the fallback it had (the shipped index's);
- a roleset id the user's index gives has its core roles (what the frame-constrained decoding allows:
  :mod:`lisa_tf.decoding.frame_viterbi`) from the user's roleset, a redefined one included.

The model is then rebuilt with the new lexicon (:func:`lisa_tf.models.runs.with_frames`), its weights unchanged; an export
of it (``export --frames``) carries the new lexicon in-graph, so ``serve`` answers the same.

What needs training: the model's sense head scores only the rolesets of its training data, so a
roleset the user adds is never the model's own choice (it is the marked fallback), and the argument
tagger labels a new verb's arguments from context alone, with the roles it learned.
"""

from __future__ import annotations

from data_pipeline.frame_index import FrameIndex
from lisa_tf.decoding.sense_choice import _index_forms, _roleset_order, core_role_numbers, fallback_index


def lexicon_with_frames(lexicon: dict, sense_count: int, index: FrameIndex) -> dict:
    """``lexicon`` with the user's ``index`` merged over it (module docstring).

    Args:
        lexicon: a model's lexicon (:func:`~lisa_tf.decoding.sense_choice.build_lexicon`'s fields).
        sense_count: how many rolesets the sense head scores (the first of ``lexicon["rolesets"]``).
        index: the user's own frame index, alone (not merged over the shipped one).

    Returns:
        a new lexicon of the same fields; ``lexicon`` itself is left as it is.

    Example:
    ```python
    lexicon = build_lexicon(FrameIndex.load(), ["bark.01"], [])
    merged = lexicon_with_frames(lexicon, 1, FrameIndex.load("blorf.json.gz"))
    merged["rolesets"][merged["fallbacks"][merged["forms"].index("blorfed")]]  # "blorf.01"
    ```
    """
    rolesets = list(lexicon["rolesets"])
    known = {name: i for i, name in enumerate(rolesets[:sense_count])}
    extra = {name: i for i, name in enumerate(rolesets) if i >= sense_count}
    rows = {form: (list(ids), fallback)
            for form, ids, fallback in zip(lexicon["forms"], lexicon["candidates"], lexicon["fallbacks"])}
    for form, (found, first) in _index_forms(index).items():
        ids, fallback = rows.get(form, ([], -1))
        if ids or not found:
            continue  # the model's own candidates, unchanged
        ids = sorted(known[name] for name in found if name in known)
        if fallback >= 0:
            first = min(first, rolesets[fallback], key=_roleset_order)
        rows[form] = (ids, -1 if ids else fallback_index(first, rolesets, extra))
    core = dict(zip(lexicon["rolesets"], lexicon["core_roles"]))
    core_roles = [core_role_numbers(index.roleset(name)) if index.roleset(name) is not None else core.get(name, "*")
                  for name in rolesets]
    forms = sorted(rows)
    return {"forms": forms, "candidates": [rows[form][0] for form in forms],
            "fallbacks": [rows[form][1] for form in forms], "rolesets": rolesets, "core_roles": core_roles}

