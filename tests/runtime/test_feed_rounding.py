"""A value fed into a tensor the NPU holds in float16 reaches every reader rounded, as the NPU would hold it."""
import numpy as np
import tensorflow as tf

from npu_test_support import fp16

from .conftest import npu_config


def test_fed_pool_output_reaches_float32_readers_rounded(graph):
    x = tf.compat.v1.placeholder(tf.float32, [1, 4, 4, 1], name="x")
    conv = tf.nn.conv2d(x, tf.ones([1, 1, 1, 1]), 1, "SAME", name="conv")
    pool = tf.nn.max_pool2d(tf.nn.relu(conv), 2, 2, "VALID", name="pool")
    # Sum is black on the Ascend 910: it reads MaxPool's value in float32 (the pass lets it read the raw output).
    total = tf.reduce_sum(pool, name="total")
    fed = np.full([1, 2, 2, 1], 0.1, np.float32)
    with tf.compat.v1.Session(config=npu_config("mixed_float16")) as sess:
        got = sess.run(total, {pool: fed})
        partial = sess.partial_run_setup([total], [pool])
        got_partial = sess.partial_run(partial, total, {pool: fed})
    want = np.float32(fp16(fed).sum())
    assert fp16(0.1) != np.float32(0.1)
    assert got == want and got_partial == want
