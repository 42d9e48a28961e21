"""compare's local error on real training graphs: what float16 does that is not an op's fault is not flagged.

- MaxPoolGrad: float16 makes ties in a pooling window, and the gradient goes to another maximum;
- a gradient with respect to a constant (a division by a constant divisor): computed, read by nothing;
- an op reading a variable under Adam: its ground truth is the variable before the step, not after;
while a constant divisor beyond float16's range (a Gram matrix divided by its size, as neural_style does) is.
"""
import numpy as np
import pytest
import tensorflow as tf

import npu_bridge
from npu_bridge.debug import compare_step, metrics
from npu_test_support import npu_config

npu_bridge.activate()
v1 = tf.compat.v1
MIXED = dict(precision_mode="allow_mix_precision")
THRESHOLD = metrics.LOCAL_THRESHOLDS["float16"]


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _row(comparison, name):
    return next(row for row in comparison.rows if row["NPUDump"] == name)


def test_max_pool_gradient_routed_to_a_float16_tie_is_not_a_local_error(graph):
    # Each 2x2 window holds 1.0 and 1.0002: distinct in float32, one value (1.0) in float16, so float16 routes
    # the window's gradient to the first element and float32 to the second.
    window = np.array([[1.0, 1.0002], [0.5, 0.25]], np.float32)
    data = np.tile(window, (4, 4)).reshape(1, 8, 8, 1)
    x = v1.placeholder(tf.float32, [1, 8, 8, 1], name="x")
    kernel = v1.get_variable("kernel", initializer=np.ones([1, 1, 1, 1], np.float32))   # a white Conv2D: float16
    pooled = tf.nn.max_pool2d(tf.nn.conv2d(x, kernel, 1, "VALID"), 2, 2, "VALID", name="pool")
    weights = tf.constant(np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1) / 16.0)
    loss = tf.reduce_sum(pooled * weights, name="loss")
    train = v1.train.GradientDescentOptimizer(0.01).minimize(loss)
    with v1.Session(config=npu_config(**MIXED)) as sess:
        sess.run(v1.global_variables_initializer())
        _, comparison = compare_step(sess, [train, loss], {x: data})
    row = _row(comparison, "gradients/pool_grad/MaxPoolGrad")
    assert row["DataType_npu"] == "DT_FLOAT16"
    # the routing moved (the accumulated error is the whole gradient), the op's own error is rounding's
    assert row["RelativeEuclideanDistance"] > 0.5
    assert row["LocalRelativeError"] < THRESHOLD
    assert comparison.culprit is None


def test_gradient_with_respect_to_a_constant_divisor_is_not_judged(graph):
    # loss = mean(h / 0.1): the forward quotient fits float16, the divisor's gradient -g * h / 0.1^2 does not;
    # tf.gradients computes it (the division's two input gradients are gated together) and nothing reads it.
    rng = np.random.RandomState(0)
    x = v1.placeholder(tf.float32, [8, 8], name="x")
    w = v1.get_variable("w", initializer=np.full([8, 8], 125.0, np.float32))
    h = tf.matmul(x, w, name="h")
    loss = tf.reduce_mean(h / 0.1, name="loss")
    train = v1.train.GradientDescentOptimizer(1e-6).minimize(loss)
    with v1.Session(config=npu_config(**MIXED)) as sess:
        sess.run(v1.global_variables_initializer())
        _, comparison = compare_step(sess, [train, loss], {x: rng.rand(8, 8).astype(np.float32)})
    dead = [row for row in comparison.rows if row["NPUDump"].startswith("gradients/truediv_grad/")
            and row["NPUDump"] != "gradients/truediv_grad/RealDiv" and "RealDiv" in row["OpType"]]
    assert dead and any(row["OverFlow"] == "YES" for row in dead), "the divisor's gradient overflows float16"
    assert all(row["unused"] for row in dead) and not _row(comparison, "gradients/truediv_grad/RealDiv")["unused"]
    assert comparison.culprit is None and comparison.first_overflow() is None
    assert "that the step does not use (gradients with respect to constants) not judged" in comparison.summary()


def test_a_constant_divisor_beyond_float16_is_the_division_s_own_error(graph):
    # neural_style's `gram = tf.matmul(tf.transpose(feats), feats) / size` with size 64 * 64 * 64 = 262144: the
    # divisor becomes 65504 in float16 (saturation mode), the Gram matrix 4x too large.
    rng = np.random.RandomState(0)
    image = v1.get_variable("image", initializer=rng.rand(64 * 64, 64).astype(np.float32))
    gram = tf.matmul(tf.transpose(image), image) / 262144.0
    loss = tf.reduce_mean(tf.square(gram - 0.5), name="loss")
    train = v1.train.AdamOptimizer(0.1).minimize(loss)
    with v1.Session(config=npu_config(**MIXED)) as sess:
        sess.run(v1.global_variables_initializer())
        _, comparison = compare_step(sess, [train, loss], {})
    culprit = comparison.culprit
    assert culprit["NPUDump"] == "truediv" and culprit["LocalRelativeError"] == pytest.approx(3.0, rel=0.01)
    assert "/ 262144.0" in culprit["SourceLine"]


def test_an_op_reading_a_variable_under_adam_is_judged_on_the_value_before_the_update(graph):
    # Adam's power updates run under control dependencies of the variable updates: a reference run fetching
    # them applies the update, and a read fetched in that run shows the updated image.
    rng = np.random.RandomState(0)
    image = v1.Variable(rng.rand(1, 8, 8, 3).astype(np.float32), name="image")
    kernel = tf.constant(rng.randn(3, 3, 3, 4).astype(np.float32))
    features = tf.nn.conv2d(image, kernel, strides=1, padding="SAME", name="conv")
    loss = tf.reduce_mean(tf.square(features), name="loss")
    train = v1.train.AdamOptimizer(1.0).minimize(loss)
    with v1.Session(config=npu_config(**MIXED)) as sess:
        sess.run(v1.global_variables_initializer())
        for _ in range(2):
            _, comparison = compare_step(sess, [train, loss], {})
            row = _row(comparison, "conv")
            assert row["LocalRelativeError"] != "" and row["LocalRelativeError"] < THRESHOLD
            assert comparison.culprit is None


def test_batch_norm_gradient_placeholder_outputs_are_not_judged(graph):
    # A ResNet block's training step: FusedBatchNormGradV3 runs in float16, and its last two outputs
    # (reserve_space_4/5, unused placeholders) have a shape that depends on the kernel's dtype.
    rng = np.random.RandomState(0)
    x = v1.placeholder(tf.float32, [2, 8, 8, 3], name="x")
    kernel = v1.get_variable("kernel", initializer=rng.randn(3, 3, 3, 4).astype(np.float32))
    scale, offset = v1.get_variable("scale", initializer=np.ones(4, np.float32)), v1.get_variable(
        "offset", initializer=np.zeros(4, np.float32))
    h, _, _ = v1.nn.fused_batch_norm(tf.nn.conv2d(x, kernel, 1, "SAME"), scale, offset, is_training=True, name="bn")
    loss = tf.reduce_mean(tf.nn.relu(h), name="loss")
    train = v1.train.GradientDescentOptimizer(0.01).minimize(loss)
    with v1.Session(config=npu_config(**MIXED)) as sess:
        sess.run(v1.global_variables_initializer())
        _, comparison = compare_step(sess, [train, loss], {x: rng.randn(2, 8, 8, 3).astype(np.float32)})
    rows = [row for row in comparison.rows if row["OpType"] == "FusedBatchNormGradV3"]
    placeholders = [row for row in rows if "local error not judged" in row["CompareFailReason"]]
    assert {row["TensorIndex"].rsplit(":", 1)[1] for row in placeholders} == {"3", "4"}
    assert all(row["LocalRelativeError"] == "" for row in placeholders)
    (backprop,) = [row for row in rows if row["TensorIndex"].endswith(":0")]
    assert backprop["DataType_npu"] == "DT_FLOAT16" and backprop["LocalRelativeError"] < THRESHOLD
