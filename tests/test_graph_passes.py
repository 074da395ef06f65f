"""The export's functions, the training step and the compiled labelling functions are called without the
layout, memory and shape optimisers and the TFG pipeline (lisa_tf.util.graph_passes): in the calling
thread only, its own options back after, every other setting kept; by the predictor, by the server's held
signatures (warm-up and requests alike), by ``train``'s ``fit`` and by ``compiled``."""

from __future__ import annotations

import threading

import pytest

from lisa_tf.util.graph_passes import without_idle_passes


def _rewrite_options():
    """The rewrite options a function called now in this thread is optimised with."""
    from tensorflow.core.protobuf import config_pb2
    from tensorflow.python.eager import context

    config = config_pb2.ConfigProto()
    config.ParseFromString(context.context().function_call_options.config_proto_serialized)
    return config


def _idle_passes_off(config) -> bool:
    from tensorflow.core.protobuf import rewriter_config_pb2

    rewrite = config.graph_options.rewrite_options
    return (rewrite.layout_optimizer == rewriter_config_pb2.RewriterConfig.OFF
            and rewrite.memory_optimization == rewriter_config_pb2.RewriterConfig.NO_MEM_OPT
            and rewrite.shape_optimization == rewriter_config_pb2.RewriterConfig.OFF
            and rewrite.disable_tfg_optimizer)


def test_only_the_calls_inside_run_without_the_four_passes_and_keep_every_other_setting():
    from tensorflow.python.eager import context

    own = context.context().function_call_options
    before = _rewrite_options()
    assert not _idle_passes_off(before)
    with without_idle_passes():
        inside = _rewrite_options()
        seen_by_another_thread = []
        worker = threading.Thread(target=lambda: seen_by_another_thread.append(_idle_passes_off(_rewrite_options())))
        worker.start()
        worker.join()
    assert _idle_passes_off(inside)
    assert seen_by_another_thread == [False]  # a thread of the user's runs with its own settings
    assert context.context().function_call_options is own
    # nothing else changes: the thread's own config with just those four fields set
    expected = type(before)()
    expected.CopyFrom(before)
    rewrite = expected.graph_options.rewrite_options
    for field in ("layout_optimizer", "memory_optimization", "shape_optimization", "disable_tfg_optimizer"):
        setattr(rewrite, field, getattr(inside.graph_options.rewrite_options, field))
    assert inside == expected
    with pytest.raises(ZeroDivisionError):
        with without_idle_passes():
            1 / 0
    assert context.context().function_call_options is own


def test_a_function_answers_the_same_with_and_without_them():
    import numpy as np
    import tensorflow as tf

    @tf.function(autograph=False)
    def attend(x, w):
        scores = tf.nn.softmax(tf.einsum("btd,bsd->bts", x @ w, x), axis=-1)
        return tf.reduce_sum(scores @ x, axis=1)

    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(3, 5, 8)), tf.float32)
    w = tf.constant(rng.normal(size=(8, 8)), tf.float32)
    plain = attend(x, w).numpy()
    with without_idle_passes():
        lean = attend(x, w).numpy()
    assert lean.tobytes() == plain.tobytes()


def test_served_signatures_are_called_without_them():
    from export.model_versions import _HeldFunction

    seen = []
    held = _HeldFunction(lambda **inputs: seen.append((_idle_passes_off(_rewrite_options()), inputs)), resources=None)
    held(tokens="x")
    assert seen == [(True, {"tokens": "x"})]
    assert not _idle_passes_off(_rewrite_options())


def test_training_steps_and_compiled_labelling_are_traced_and_first_called_without_them(monkeypatch, tmp_path):
    """``train``'s ``fit`` (its training step and the dev evaluation in its callbacks) and every compiled
    labelling function run inside ``without_idle_passes``: their graphs are traced, and so first called and
    optimised, with the four passes off."""
    import tensorflow as tf

    from lisa_tf.config import load_config
    from lisa_tf.labelling.compiled import compiled
    from lisa_tf.models.base import SrlModel
    from lisa_tf.training.loop import train
    from tests.models.conftest import tiny_overrides

    seen = []

    def probe(models, batch):
        seen.append(("labelling", _idle_passes_off(_rewrite_options())))
        return {"doubled": batch["x"] * 2}

    owner = tf.Module()
    assert compiled(probe, [owner])({"x": tf.constant([[1, 2]])})["doubled"].numpy().tolist() == [[2, 4]]
    assert seen == [("labelling", True)] and not _idle_passes_off(_rewrite_options())

    original = SrlModel.train_step

    def train_step(self, data):
        seen.append(("training step", _idle_passes_off(_rewrite_options())))
        return original(self, data)

    monkeypatch.setattr(SrlModel, "train_step", train_step)
    config = load_config(None, tiny_overrides(**{
        "model.kind": "deepatt", "model.num_layers": 1, "data.max_train_sentences": 2, "data.max_eval_sentences": 2,
        "train.max_steps": 1, "train.eval_every": 1}))
    train(config, tmp_path / "run", verbose=0)
    assert ("training step", True) in seen and ("training step", False) not in seen
    assert not _idle_passes_off(_rewrite_options())


def test_a_training_keeps_the_passes_on_a_machine_with_a_gpu(monkeypatch):
    """On a GPU the memory optimiser may swap a training step's tensors to the host and the layout
    optimiser moves convolutions: a training there keeps them; labelling does not."""
    import tensorflow as tf

    monkeypatch.setattr(tf.config, "list_logical_devices",
                        lambda kind=None: ["/device:GPU:0"] if kind == "GPU" else ["/device:CPU:0"])
    with without_idle_passes(training=True):
        assert not _idle_passes_off(_rewrite_options())
    with without_idle_passes():
        assert _idle_passes_off(_rewrite_options())
    monkeypatch.undo()
    with without_idle_passes(training=True):
        assert _idle_passes_off(_rewrite_options())


def test_a_thread_that_never_set_its_options_gets_none_back():
    """Unset call options mean "the context's config at each call" (a strategy created later changes it):
    the block puts them back unset, not as a copy of the config it found."""
    from tensorflow.python.eager import context

    after = []

    def in_a_new_thread():
        local = context.context()._thread_local_data
        before = local.function_call_options
        with without_idle_passes():
            inside = _idle_passes_off(_rewrite_options())
        after.append((before, inside, local.function_call_options))

    worker = threading.Thread(target=in_a_new_thread)
    worker.start()
    worker.join()
    assert after == [(None, True, None)]
