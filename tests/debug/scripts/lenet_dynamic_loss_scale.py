"""A LeNet-style classifier with dynamic loss scaling from 2^32, as ModelZoo's loss-scaled ports set it.

The scale starts far above what float16 gradients hold, so the first steps overflow and are skipped while the
scale halves (2^32 -> 2^31 -> ...), as on hardware; once it fits, every step is applied. A healthy model:
the right answer is "nothing needs to stay in float32", and compare must not call the expected overflows of
the skipped steps a precision problem.
"""
import argparse

import numpy as np
from npu_bridge.npu_init import *

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=40)
args = parser.parse_args()

rng = np.random.RandomState(0)
images = rng.rand(256, 8, 8, 1).astype(np.float32)
labels = rng.randint(0, 4, 256)

tf.set_random_seed(0)
x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
y = tf.placeholder(tf.int64, [None], name="labels")
net = tf.layers.conv2d(x, 4, 3, strides=2, padding="same", activation=tf.nn.relu, name="conv1")
logits = tf.layers.dense(tf.layers.flatten(net), 4, name="logits")
loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
manager = ExponentialUpdateLossScaleManager(init_loss_scale=2 ** 32, incr_every_n_steps=1000,
                                            decr_every_n_nan_or_inf=1, decr_ratio=0.5)
opt = NPULossScaleOptimizer(tf.train.GradientDescentOptimizer(0.1), manager)
train_op = opt.minimize(loss)
scale = manager.get_loss_scale()

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["use_off_line"].b = True
custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF

with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(args.steps):
        batch = slice(32 * step % 256, 32 * step % 256 + 32)
        _, value, now = sess.run([train_op, loss, scale], {x: images[batch], y: labels[batch]})
        print(f"step {step} loss {value:.5f} scale {now:g}")
