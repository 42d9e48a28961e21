"""A style transfer written the way ModelZoo's ported ones are: several graphs run in one session.

1. feature extraction: the style image's Gram matrix, run once (`sess.run(style_gram)`);
2. training: the image is a variable; a Gram-matrix style loss plus a content loss, Adam; the step runs the
   update alone (`sess.run(train_op)`), as ModelZoo's neural_style does;
3. `.eval()` calls: the loss after each update, and a statistic of the fixed content image (the same value
   every iteration).
The Gram matrices grow with the image: their float16 MatMul overflows after a few iterations (INF/NaN mode,
Ascend910B1), so step 0 is healthy and the loss goes NaN later, as in the issue's style transfer.
"""
import argparse

import numpy as np
from npu_bridge.npu_init import *

parser = argparse.ArgumentParser()
parser.add_argument("--iterations", type=int, default=12)
parser.add_argument("--precision_mode", default="allow_mix_precision")
args = parser.parse_args()

rng = np.random.RandomState(0)
style_image = rng.rand(1, 16, 16, 3).astype(np.float32)
content_image = rng.rand(1, 16, 16, 3).astype(np.float32)


def features(image):
    """The 'network': a Relu over the image and its inverse (what matters here is the Gram matrix)."""
    return tf.nn.relu(tf.concat([image, image], axis=3))


def gram(feature):
    flat = tf.reshape(feature, [-1, 6])
    return tf.matmul(flat, flat, transpose_a=True) / 4.0


style_in = tf.placeholder(tf.float32, [1, 16, 16, 3], name="style_in")
style_gram = gram(features(style_in))

image = tf.Variable(content_image, name="image")
image_features = features(image)
style_target = tf.placeholder(tf.float32, [6, 6], name="style_target")
# The style term rewards Gram energy beyond the target's: the image brightens every iteration. As with
# neural_style's l2_loss(gram - style_gram), the gradient reads the Gram matrix itself.
style_loss = -tf.reduce_mean(tf.sqrt(gram(image_features) + style_target))
content_loss = tf.reduce_mean(tf.square(features(tf.constant(content_image)) - image_features))
loss = style_loss + content_loss * 1e-3
content_level = tf.reduce_mean(gram(features(tf.constant(content_image)))) + 1.0
train_op = tf.train.AdamOptimizer(4.0).minimize(loss)

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["use_off_line"].b = True
custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(args.precision_mode)
custom_op.parameter_map["soc_config"].s = b"Ascend910B1"
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF

with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    target = sess.run(style_gram, {style_in: style_image})
    for iteration in range(args.iterations):
        sess.run(train_op, {style_target: target})      # the update alone, the losses read by .eval() calls
        print(f"iteration {iteration} loss {loss.eval({style_target: target}):.6g} "
              f"content level {content_level.eval():.6g}")
