"""data_pipeline.graph_masks: the library's boolean masks, element for element, in fewer ops."""

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.graph_masks import masked, masked_rows


@pytest.mark.parametrize("shape", [(5, 7), (1, 3), (0, 4), (4, 0), (6, 1)])
def test_masks_select_what_the_library_selects(shape):
    rng = np.random.default_rng(sum(shape))
    mask = tf.constant(rng.random(shape) < 0.5)
    for values in (tf.constant(rng.integers(-5, 100, shape), tf.int32),
                   tf.constant(rng.integers(0, 100, shape).astype(str)),
                   tf.constant(rng.random(shape + (3,)), tf.float32)):  # trailing dimensions kept
        expected, got = tf.boolean_mask(values, mask), masked(values, mask)
        assert got.dtype == expected.dtype and got.shape.as_list() == expected.shape.as_list()
        np.testing.assert_array_equal(got, expected)
        if values.shape.rank == 2:  # and with a last dimension of none: an element-less tensor, rows still kept
            empty = tf.zeros(shape + (0,), values.dtype)
            assert masked(empty, mask).shape.as_list() == tf.boolean_mask(empty, mask).shape.as_list()
            expected, got = tf.ragged.boolean_mask(values, mask), masked_rows(values, mask)
            assert got.row_splits.dtype == expected.row_splits.dtype == tf.int64
            assert got.to_list() == expected.to_list()
    flat = tf.reshape(mask, [-1])
    np.testing.assert_array_equal(masked(tf.range(tf.size(flat)), flat), tf.boolean_mask(tf.range(tf.size(flat)), flat))


def test_ragged_rows_keep_their_split_type_and_empty_rows():
    values = tf.ragged.constant([[1, 2, 3], [], [4, 5], [6]], row_splits_dtype=tf.int32)
    mask = tf.ragged.constant([[True, False, True], [], [False, False], [True]], row_splits_dtype=tf.int32)
    expected, got = tf.ragged.boolean_mask(values, mask), masked_rows(values, mask)
    assert got.row_splits.dtype == expected.row_splits.dtype == tf.int32
    assert got.to_list() == expected.to_list() == [[1, 3], [], [], [6]]


def test_a_traced_mask_holds_fewer_ops_than_the_library_s_and_no_assert():
    def ops(function, rank=2):
        specs = (tf.TensorSpec([None] * rank, tf.int64), tf.TensorSpec([None] * rank, tf.bool))
        graph = tf.function(function, autograph=False).get_concrete_function(*specs).graph
        return [op.type for op in graph.get_operations()]

    ours = ops(lambda v, m: masked_rows(v, m).to_tensor())
    library = ops(lambda v, m: tf.ragged.boolean_mask(v, m).to_tensor())
    assert len(ours) < len(library) and "Assert" not in ours
    for rank in (1, 2):
        assert len(ops(masked, rank)) < len(ops(tf.boolean_mask, rank))
