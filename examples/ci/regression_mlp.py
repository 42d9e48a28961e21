"""The repository's own CI regression run: a small mixed_float16 MLP whose decisions and loss curve are gated.

.ci/run runs it with `npu-run --report-dir` and compares the artifacts with the committed baseline beside it
(`npu-report diff examples/ci/baseline <out>`). Everything is deterministic: data and initial weights come from
a seeded numpy generator (not TensorFlow's random ops, whose kernels may change between versions), the
optimizer is plain gradient descent, and the graph uses only ops whose TensorFlow form is the same from 2.15 to
the newest. Refresh the baseline after an intended change:

    npu-run --report-dir examples/ci/baseline examples/ci/regression_mlp.py
"""
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

import npu_bridge  # noqa: F401  (activates the emulated NPU, as `from npu_bridge.npu_init import *` does)

rng = np.random.RandomState(0)
centers = rng.randn(3, 8).astype(np.float32) * 2
labels = rng.randint(0, 3, 256)
features = centers[labels] + rng.randn(256, 8).astype(np.float32) * 0.5
onehot = np.eye(3, dtype=np.float32)[labels]

x = tf.placeholder(tf.float32, [None, 8], name="x")
y = tf.placeholder(tf.float32, [None, 3], name="y")
w1 = tf.Variable(rng.randn(8, 16).astype(np.float32) * 0.3, name="w1")
b1 = tf.Variable(np.zeros(16, np.float32), name="b1")
w2 = tf.Variable(rng.randn(16, 3).astype(np.float32) * 0.3, name="w2")
hidden = tf.nn.relu(tf.matmul(x, w1) + b1, name="hidden")
logits = tf.matmul(hidden, w2, name="logits")
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits), name="loss")
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["use_off_line"].b = True
custom_op.parameter_map["precision_mode_v2"].s = tf.compat.as_bytes("mixed_float16")
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF

with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(30):
        batch = slice(step * 32 % 256, step * 32 % 256 + 32)
        value, _ = sess.run([loss, train_op], {x: features[batch], y: onehot[batch]})
    print(f"loss after 30 steps: {value:.4f}")
