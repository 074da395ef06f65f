"""lisa_tf: self-attention semantic role labelling in TensorFlow/Keras.

Three published models in one toolkit: DeepAtt (Tan et al. 2018), LISA and its syntax-free twin SA
(Strubell et al. 2018), and Selective Connection (Park 2019). ``import lisa_tf`` registers every
model and layer with ``keras.saving``, so ``keras.saving.load_model("model.keras")`` works.

Its subpackages (labelling, models, training, evaluation, packages, ...) sit on floors that import only
downwards: ``pyproject.toml``'s import contracts, drawn in docs/architecture.md. The command line is
:mod:`lisa_tf_cli`, above the library.
"""

__version__ = "0.1.0"

import os as _os
import sys as _sys

# TensorFlow's C++ info and warning lines are not the user's to act on (before TensorFlow is imported,
# by this package or a command; a value the user set is kept). See lisa_tf.util.native_logs for the lines
# this level does not reach.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def load(path=None, token_budget: int = 4096, max_sentence_tokens=None, frames=None, constraints: bool = True,
         prefer_export: bool = True):
    """A predictor for a run directory, a ``.keras`` file, a SavedModel export or a packaged model;
    without ``path`` the model shipped in ``models/srl``: ``lisa_tf.load().predict("The cat sat on the
    mat.")`` (see :mod:`lisa_tf.labelling.predictor`; a SavedModel runs its graph when loaded: load only
    directories you trust). ``frames``: the PropBank frame index the senses' meanings are read from
    (default: the shipped one). ``constraints=False``: the plain BIO Viterbi instead of the frame
    constraints (a model file or run; a package is then labelled through its ``.keras`` file).
    ``prefer_export``: a package whose export ``predict`` or ``serve`` has built into the cache labels
    through it (the same frames, seconds sooner); ``False``: always through its ``.keras`` model."""
    from lisa_tf.labelling.predictor import load as _load

    return _load(path, token_budget, max_sentence_tokens, frames=frames, constraints=constraints,
                 prefer_export=prefer_export)


# ``import lisa_tf`` registers the models and layers with keras.saving (it imports TensorFlow). The
# command line (``python -m lisa_tf``, where the package is imported while ``sys.argv[0]`` is still
# "-m") skips it: each command imports what it needs, so pure-Python commands (srl-eval, stats)
# start fast and print no TensorFlow start-up lines.
if _sys.argv[:1] != ["-m"]:
    from lisa_tf.util.native_logs import import_tensorflow as _import_tensorflow

    _import_tensorflow()
    import lisa_tf.models  # noqa: E402,F401
