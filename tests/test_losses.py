import numpy as np
import tensorflow as tf

from lisa_tf.models.losses import masked_cross_entropy


def test_padding_never_reaches_the_loss():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 5, 4)).astype("float32")
    labels = rng.integers(0, 4, size=(2, 5))
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    base = float(masked_cross_entropy(labels, logits, mask))
    logits2, labels2 = logits.copy(), labels.copy()
    logits2[0, 3:] = 100.0
    labels2[0, 3:] = -1
    assert np.isclose(float(masked_cross_entropy(labels2, logits2, mask)), base)
    # equals the plain mean of per-token cross-entropy over the 8 real tokens
    logp = tf.nn.log_softmax(logits).numpy()
    picked = [-logp[b, t, labels[b, t]] for b in range(2) for t in range(5) if mask[b, t]]
    assert np.isclose(base, np.mean(picked), rtol=1e-5)


def test_label_smoothing_and_bf16_logits():
    logits = tf.constant([[[5.0, 0.0, 0.0]]], tf.bfloat16)
    value = float(masked_cross_entropy([[0]], logits, [[True]], label_smoothing=0.3))
    logp = tf.nn.log_softmax(tf.cast(logits, tf.float32))[0, 0].numpy()
    expected = -((0.7 + 0.1) * logp[0] + 0.1 * logp[1] + 0.1 * logp[2])
    assert np.isclose(value, expected, rtol=1e-3)
    assert float(masked_cross_entropy([[0]], logits, [[False]])) == 0.0
