"""Calling an export's functions without the two graph-optimiser passes that rewrite nothing in them.

TensorFlow optimises a function's graph (Grappler) the first time a process calls it, and that is most of
a signature's first call: for ``srl``'s ``serving_default``, 1.7 s of Grappler in a first call of about
2 s. Two of its default passes have nothing to rewrite in an export of this project's models, but walk
the whole graph to find that out:

* the layout optimiser, which moves convolutions and their neighbours between NHWC and NCHW: the models
  hold no convolution;
* the memory optimiser, which recomputes or swaps tensors of a training step's gradients: an export holds
  no gradient.

Measured with ``TF_CPP_VMODULE=meta_optimizer=1`` on ``srl``'s ``serving_default``: 0.11 s and 0.16 s,
with the graph at 3,826 and 3,394 nodes before and after each (``srl-fast``'s answers were checked as
``srl``'s, below). Every other pass runs as before (their
second round included), so the optimised graph is the same graph and every answer is the same to the
bit: ``serving_default`` of ``srl`` on the first 400 PropBank-EWT test sentences, all 300 outputs
byte-identical with and without them, and the frames of ``srl`` and ``srl-fast`` on the same sentences.

TensorFlow reads the optimiser's settings from the calling thread's function-call options (the
``config_proto`` of the call), once, when the function is first called with them.
:func:`without_idle_passes` sets them for the calls inside it, in this thread only, and puts the
thread's own back after, so a user's own functions in the same process run with their settings. Every
call of an export's function goes through it (the predictor's and the server's, warm-up included), so
the graph a warm-up optimised is the graph later requests run.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Iterator, Optional


@functools.lru_cache(maxsize=8)
def _options_without_idle_passes(config: Optional[bytes], executor_type: Optional[str]):
    """Function-call options: ``config`` (a serialised ``ConfigProto``) with the layout and memory
    optimisers off, and the same executor."""
    from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2
    from tensorflow.python.eager import context

    proto = config_pb2.ConfigProto()
    proto.ParseFromString(config or b"")
    rewrite = proto.graph_options.rewrite_options
    rewrite.layout_optimizer = rewriter_config_pb2.RewriterConfig.OFF
    rewrite.memory_optimization = rewriter_config_pb2.RewriterConfig.NO_MEM_OPT
    return context.FunctionCallOptions(executor_type=executor_type, config_proto=proto)


@contextlib.contextmanager
def without_idle_passes() -> Iterator[None]:
    """Run the function calls inside it, in this thread, without the layout and memory optimisers;
    the thread's own options are back once it ends, however it ends.

    Example:

    ```python
    with without_idle_passes():
        outputs = loaded.signatures["serving_default"](tokens=tokens)
    ```
    """
    from tensorflow.python.eager import context

    ctx = context.context()
    own = ctx.function_call_options
    ctx.function_call_options = _options_without_idle_passes(own.config_proto_serialized, own.executor_type)
    try:
        yield
    finally:
        ctx.function_call_options = own
