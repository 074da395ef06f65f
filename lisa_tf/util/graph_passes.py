"""Calling this project's functions without the graph-optimiser passes that rewrite nothing in them.

TensorFlow optimises a function's graph (Grappler) the first time a process calls it, and that is most of
a signature's first call: for ``srl``'s ``serving_default``, 1.7 s of Grappler in a first call of about
2 s. Four of its default passes leave an export of this project's models as they found it, but walk the
whole graph (some twice, once per optimisation round) to find that out:

* the layout optimiser, which moves convolutions and their neighbours between NHWC and NCHW: the models
  hold no convolution;
* the memory optimiser, which recomputes or swaps tensors of a training step's gradients: an export holds
  no gradient;
* the shape optimiser, which simplifies arithmetic on tensor shapes the graph knows statically: a
  request's batch and sentence sizes are known only when it comes;
* the TFG pipeline (TensorFlow's MLIR graph passes: attribute consolidation, topological sort, shape
  inference, sinking ops into conditional branches): it left every graph at the same nodes and edges.

Measured with ``TF_CPP_VMODULE=meta_optimizer=1`` on ``srl``'s ``serving_default``: the layout and
memory optimisers 0.11 s and 0.16 s, with the graph at 3,826 and 3,394 nodes before and after each; the
shape optimiser 0.05 s and the TFG pipeline 0.06–0.09 s in each of the two rounds, neither changing a
node or an edge. Grappler's time for that call: 1,707 ms with every pass, 1,124 ms without the first
two, 703–726 ms without all four (``srl-fast``: 504 and 352 ms without two and four). Every other pass
runs as before (their second round included), so the optimised graph computes what it computed and
every answer is the same to the bit: ``serving_default`` of ``srl`` and of ``srl-fast`` on the first 400
PropBank-EWT test sentences, all 300 outputs byte-identical with and without them, and the frames of
``srl`` and ``srl-fast`` on the same sentences.

TensorFlow reads the optimiser's settings from the calling thread's function-call options (the
``config_proto`` of the call), once, when the function is first called with them.
:func:`without_idle_passes` sets them for the calls inside it, in this thread only, and puts the
thread's own back after, so a user's own functions in the same process run with their settings. Every
call of an export's function goes through it (the predictor's and the server's, warm-up included), so
the graph a warm-up optimised is the graph later requests run.

Labelling with a Keras model goes through it too (every :func:`lisa_tf.labelling.compiled.compiled`
function), and so does ``train``'s ``fit`` (the training step, the dev evaluation in its callbacks) on a
machine without a GPU: on a GPU the memory optimiser may swap a training step's tensors to the host and
the layout optimiser moves convolutions (DeepAtt-CNN's) to NCHW, so a training there keeps them
(``training=True``). In the optimiser's log of a tiny LISA's 20 training steps and its dev evaluation on
CPU, the four passes left every graph at the same nodes and edges; Grappler's time went from 3,039 to
2,055 ms without them, and the weights after training are equal to the bit.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Iterator, Optional


@functools.lru_cache(maxsize=8)
def _options_without_idle_passes(config: Optional[bytes], executor_type: Optional[str]):
    """Function-call options: ``config`` (a serialised ``ConfigProto``) with the layout, memory and
    shape optimisers and the TFG pipeline off, and the same executor."""
    from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2
    from tensorflow.python.eager import context

    proto = config_pb2.ConfigProto()
    proto.ParseFromString(config or b"")
    rewrite = proto.graph_options.rewrite_options
    rewrite.layout_optimizer = rewriter_config_pb2.RewriterConfig.OFF
    rewrite.memory_optimization = rewriter_config_pb2.RewriterConfig.NO_MEM_OPT
    rewrite.shape_optimization = rewriter_config_pb2.RewriterConfig.OFF
    rewrite.disable_tfg_optimizer = True
    return context.FunctionCallOptions(executor_type=executor_type, config_proto=proto)


@contextlib.contextmanager
def without_idle_passes(training: bool = False) -> Iterator[None]:
    """Run the function calls inside it, in this thread, without the four passes of the module
    docstring; the thread's own options are back once it ends, however it ends.

    Args:
        training: the calls train a model: on a machine with a GPU they keep the four passes (see the
            module docstring).

    Example:

    ```python
    with without_idle_passes():
        outputs = loaded.signatures["serving_default"](tokens=tokens)
    ```
    """
    import tensorflow as tf
    from tensorflow.python.eager import context

    if training and tf.config.list_logical_devices("GPU"):
        yield
        return
    ctx = context.context()
    # The thread's own setting as it is: none yet means "the context's config at each call" (TensorFlow
    # fills it in on first use), which a strategy created later still changes, so none is put back.
    unset = ctx._thread_local_data.function_call_options is None
    own = ctx.function_call_options
    ctx.function_call_options = _options_without_idle_passes(own.config_proto_serialized, own.executor_type)
    try:
        yield
    finally:
        ctx.function_call_options = None if unset else own
