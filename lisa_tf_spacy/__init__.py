"""lisa_tf in spaCy: the ``lisa_srl`` pipeline component (:mod:`lisa_tf_spacy.component`).

A package of its own beside :mod:`lisa_tf`, because spaCy imports every ``spacy_factories`` entry
point whenever it makes a pipeline (``spacy.blank``, ``spacy.load``): importing this package imports
spaCy and the pure-Python :mod:`data_pipeline` modules only, and TensorFlow is imported when a
``lisa_srl`` component is made, so pipelines without one start as fast as they would without
lisa_tf installed. Importing it registers ``doc._.frames`` and ``doc._.srl_skipped``.
"""

from lisa_tf_spacy.component import (SpacyComponentError, SrlComponent, displacy_frame, frames_of, make_lisa_srl,
                                     skipped_of)

__all__ = ["SpacyComponentError", "SrlComponent", "displacy_frame", "frames_of", "make_lisa_srl", "skipped_of"]
