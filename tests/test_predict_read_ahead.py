"""``predict --input`` prepares the next chunk in a thread while the model labels this one
(``lisa_tf.labelling.predictor.ahead``): items keep their order, the thread runs ahead of a busy
consumer, and an error in it is raised where its item was due."""

import threading

import pytest

from data_pipeline.errors import UserError
from lisa_tf.labelling.predictor import ahead


def test_items_come_in_order_and_the_thread_runs_ahead_of_a_busy_consumer():
    made = [threading.Event() for _ in range(4)]

    def items():
        for k in range(4):
            made[k].set()
            yield k

    got = []
    for item in ahead(items(), depth=2):
        if item == 0:
            # the consumer is still on item 0: the thread has prepared the next ones meanwhile
            assert made[1].wait(5) and made[2].wait(5)
        got.append(item)
    assert got == [0, 1, 2, 3]


def test_an_error_in_the_thread_is_raised_after_the_items_before_it():
    def items():
        yield "a"
        yield "b"
        raise UserError("--input x: line 3 cannot be read")

    got = []
    with pytest.raises(UserError, match="line 3"):
        for item in ahead(items()):
            got.append(item)
    assert got == ["a", "b"]


def test_a_consumer_that_stops_early_stops_the_thread():
    produced = []

    def items():
        for k in range(1000):
            produced.append(k)
            yield k

    for item in ahead(items(), depth=2):
        if item == 1:
            break
    threads = [t for t in threading.enumerate() if t.name == "predict-read-ahead"]
    for thread in threads:
        thread.join(5)
    assert not any(t.is_alive() for t in threads) and len(produced) <= 5
