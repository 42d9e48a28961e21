"""An NPUEstimator MNIST-style sample under precision_mode force_fp16, in the style of the adapter's sample.

Its model_dir is a fixed folder (`./estimator_model_dir`, as samples hard-code one) and its weights are
unseeded, so a rerun that restored the recording's checkpoint or drew other weights would not reproduce the
recording. The planted problem: a normalisation x / sqrt(x * x + 1e-8) after a Relu, where 1e-8 is 0 in
float16 and the rows the Relu zeroes give 0/0 = NaN. Under force_fp16 modify_mixlist is refused by the
adapter, so the answer must be a customize_dtypes file.
"""
import numpy as np
from npu_bridge.npu_init import *


def input_fn():
    rng = np.random.RandomState(3)
    centers = rng.randn(4, 16).astype(np.float32)
    labels = rng.randint(0, 4, 256)
    images = centers[labels] + rng.randn(256, 16).astype(np.float32) * 0.3
    images[::4] = -np.abs(images[::4]) * 0   # rows of zeros: after the Relu, 0 / sqrt(0 + 1e-8)
    dataset = tf.data.Dataset.from_tensor_slices(({"image": images}, labels.astype(np.int32)))
    return dataset.repeat().batch(32, drop_remainder=True)


def model_fn(features, labels, mode):
    hidden = tf.layers.dense(features["image"], 8, activation=tf.nn.relu)
    hidden = tf.math.truediv(hidden, tf.sqrt(hidden * hidden + 1e-8), name="normalized")
    logits = tf.layers.dense(hidden, 4)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
    return NPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)


run_config = NPURunConfig(model_dir="estimator_model_dir", save_checkpoints_steps=100, iterations_per_loop=1,
                          precision_mode="force_fp16", log_step_count_steps=None)
estimator = NPUEstimator(model_fn=model_fn, config=run_config)
estimator.train(input_fn=input_fn, max_steps=8)
