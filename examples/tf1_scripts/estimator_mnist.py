"""Estimator training in the style of the adapter's mnist_with_estimator.py sample.

NPURunConfig with precision_mode and iterations_per_loop, NPUEstimator, NPUEstimatorSpec from the model_fn,
NPUDistributedOptimizer, npu_hooks_append. Runs on every supported TensorFlow: on 2.16 and later, which removed
tf.estimator, npu-run provides npu_bridge's own.
"""
import tempfile

import numpy as np
import tensorflow as tf
from npu_bridge.npu_init import *


def input_fn():
    rng = np.random.RandomState(3)
    centers = rng.randn(10, 64).astype(np.float32)
    labels = rng.randint(0, 10, 1024)
    images = centers[labels] + rng.randn(1024, 64).astype(np.float32) * 0.3
    dataset = tf.data.Dataset.from_tensor_slices(({"image": images}, labels.astype(np.int32)))
    return dataset.repeat().batch(64, drop_remainder=True)


def model_fn(features, labels, mode, params):
    hidden = tf.layers.dense(features["image"], params["hidden"], activation=tf.nn.relu)
    logits = tf.layers.dense(npu_ops.dropout(hidden, 0.9 if mode == tf.estimator.ModeKeys.TRAIN else 1.0), 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        opt = NPUDistributedOptimizer(tf.train.AdamOptimizer(0.01))
        train_op = opt.minimize(loss, global_step=tf.train.get_global_step())
        return NPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)
    accuracy = tf.metrics.accuracy(labels, tf.argmax(logits, 1))
    return NPUEstimatorSpec(mode=mode, loss=loss, eval_metric_ops={"accuracy": accuracy})


model_dir = tempfile.mkdtemp()
run_config = NPURunConfig(model_dir=model_dir, save_checkpoints_steps=40, iterations_per_loop=10,
                          precision_mode="allow_mix_precision", enable_data_pre_proc=True,
                          dump_config=DumpConfig(enable_dump=False), log_step_count_steps=None)
estimator = NPUEstimator(model_fn=model_fn, config=run_config, params={"hidden": 32})
estimator.train(input_fn=input_fn, max_steps=40, hooks=npu_hooks_append())
metrics = estimator.evaluate(input_fn=input_fn, steps=4)
print(f"global_step {metrics['global_step']} loss {metrics['loss']:.4f} accuracy {metrics['accuracy']:.2f}")
if metrics["accuracy"] < 0.5:
    raise SystemExit("training did not progress")
