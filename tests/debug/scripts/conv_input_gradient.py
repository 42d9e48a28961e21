"""An image trained through a convolution, as a style transfer's is: the gradient reaching the image is the
convolution's input gradient (Conv2DBackpropInputD), which the Ascend 910 computes in float16 only."""
import numpy as np
from npu_bridge.npu_init import *

rng = np.random.RandomState(0)
image = tf.Variable(rng.rand(1, 8, 8, 3).astype(np.float32), name="image")
kernel = tf.constant(rng.randn(3, 3, 3, 4).astype(np.float32) * 0.3)
features = tf.nn.conv2d(image, kernel, strides=[1, 1, 1, 1], padding="SAME")
loss = tf.reduce_mean(tf.square(features - 0.5))
train_op = tf.train.AdamOptimizer(0.1).minimize(loss)

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["use_off_line"].b = True
custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF

with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    for iteration in range(4):
        print(f"iteration {iteration} loss {sess.run([loss, train_op])[0]:.6g}")
