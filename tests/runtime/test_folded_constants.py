"""A constant the graph engine folds before the run (`Fill * Const` building an attention mask) is checked like a
Const: a -2**32+1 padding value is -inf in float16 on the 910B, and the warning names the line that built it."""
import inspect
import logging

import numpy as np
import tensorflow as tf

from npu_bridge.runtime import last_report

from .conftest import npu_config

v1 = tf.compat.v1


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def test_a_folded_mask_is_warned_with_the_line_that_built_it(graph):
    x = v1.placeholder(tf.float32, [2, 4], name="x")
    scores = tf.matmul(x, tf.ones([4, 4]), name="scores")
    padding = tf.fill([2, 4], 1.0) * (-2.0 ** 32 + 1); line = inspect.currentframe().f_lineno  # noqa: E702
    probabilities = tf.nn.softmax(scores + padding)
    logger, handler = logging.getLogger("tensorflow"), _Lines()
    logger.addHandler(handler)
    try:
        with v1.Session(config=npu_config(soc_config="ascend910b")) as sess:
            sess.run(probabilities, {x: np.ones((2, 4), np.float32)})
            warnings = last_report(sess).warnings
    finally:
        logger.removeHandler(handler)
    expected = (f"constant '{padding.op.name}' (folded from constants before the run: -4.29497e+09 is -inf in "
                "float16) where op 'add' reads it in float16")
    assert expected in warnings
    assert any(expected in message and f"built at {__file__}:{line}" in message for message in handler.lines)


def _folded_warnings(build):
    x = v1.placeholder(tf.float32, [2, 4], name="x")
    scores = tf.matmul(x, tf.ones([4, 4]), name="scores")
    folded = build()
    probabilities = tf.nn.softmax(scores + folded)
    with v1.Session(config=npu_config(soc_config="ascend910b")) as sess:
        sess.run(probabilities, {x: np.ones((2, 4), np.float32)})
        return [w for w in last_report(sess).warnings if "folded from constants" in w]


def test_the_folded_value_is_checked_not_the_constants_it_is_built_from(graph):
    # A -1e9 padding value times a mask of zeros is 0 everywhere: nothing overflows where 'add' reads it.
    assert _folded_warnings(lambda: (1.0 - tf.ones([2, 4])) * -1e9) == []


def test_a_folded_value_that_underflows_is_warned_though_each_constant_is_safe(graph):
    tiny = tf.fill([2, 4], 1e-4) * 1e-4
    [warning] = _folded_warnings(lambda: tiny)
    assert warning == (f"constant '{tiny.op.name}' (folded from constants before the run: 1e-08 is 0 in float16) "
                       "where op 'add' reads it in float16")
