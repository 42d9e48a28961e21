"""A small regression model with one planted mixed-precision problem, chosen by --problem: what
`npu-debug compare` and `npu-debug suggest` are for (README "Finding the op that breaks accuracy").

    npu-debug compare examples/precision_problems.py --problem overflow
    npu-debug suggest examples/precision_problems.py --problem loss_scale
    npu-run examples/precision_problems.py --problem epsilon     # a TF1 script: run it through npu-run

- overflow:   a white MatMul whose float16 output passes 65504, read by a gray op (Mul)
- epsilon:    x / sqrt(x*x + 1e-8) after a Relu: 1e-8 is 0 in float16, so zeros give 0/0
- loss_scale: a fixed loss scale of 2**24 that overflows the float16 gradients: every step is skipped
"""
import argparse

import numpy as np
from npu_bridge.npu_init import *

parser = argparse.ArgumentParser()
parser.add_argument("--problem", choices=["overflow", "epsilon", "loss_scale", "none"], required=True)
parser.add_argument("--steps", type=int, default=8)
args = parser.parse_args()

rng = np.random.RandomState(0)
features = rng.randn(64, 8).astype(np.float32)
targets = (features @ rng.randn(8, 1)).astype(np.float32)

x = tf.placeholder(tf.float32, [None, 8], name="x")
y = tf.placeholder(tf.float32, [None, 1], name="y")
scale = 30000.0 if args.problem == "overflow" else 1.0
w1 = tf.get_variable("w1", initializer=rng.randn(8, 16).astype(np.float32) * scale)
hidden = tf.matmul(x, w1, name="big_matmul")
hidden = tf.multiply(hidden, 1.0 / scale, name="rescale")
hidden = tf.nn.relu(hidden, name="relu")
if args.problem == "epsilon":
    hidden = tf.math.truediv(hidden, tf.sqrt(tf.square(hidden) + 1e-8, name="norm_sqrt"), name="normalized")
w2 = tf.get_variable("w2", initializer=rng.randn(16, 1).astype(np.float32) * 0.3)
prediction = tf.matmul(hidden, w2, name="head")
loss = tf.reduce_mean(tf.square(prediction - y), name="loss")

opt = tf.train.GradientDescentOptimizer(0.01)
if args.problem == "loss_scale":
    opt = NPULossScaleOptimizer(opt, FixedLossScaleManager(loss_scale=2 ** 24))
train_op = opt.minimize(loss)

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["use_off_line"].b = True
custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF

with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(args.steps):
        batch = slice(8 * step % 64, 8 * step % 64 + 8)
        _, value = sess.run([train_op, loss], {x: features[batch], y: targets[batch]})
        print(f"step {step} loss {value:.5f}")
