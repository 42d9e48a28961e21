"""An Estimator classifier written the way ported ModelZoo scripts are: flags, an input_fn taking params, a model_fn
with tf.layers and a dict of metrics, train_and_evaluate, then predict. --npu uses NPUEstimator with an
NPURunConfig (iterations_per_loop, precision_mode), as the ported scripts do; otherwise tf.estimator.Estimator."""
import argparse

import numpy as np
import tensorflow as tf
from tensorflow.python.estimator import estimator as estimator_lib

from npu_bridge.npu_init import *

parser = argparse.ArgumentParser()
parser.add_argument("--model_dir", required=True)
parser.add_argument("--npu", action="store_true")
parser.add_argument("--max_steps", type=int, default=40)
FLAGS = parser.parse_args()

rng = np.random.RandomState(7)
CENTERS = rng.randn(4, 8).astype(np.float32) * 2
LABELS = rng.randint(0, 4, 512).astype(np.int32)
IMAGES = CENTERS[LABELS] + rng.randn(512, 8).astype(np.float32) * 0.5


def input_fn(params, mode):
    dataset = tf.data.Dataset.from_tensor_slices(({"image": IMAGES}, LABELS))
    if mode == tf.estimator.ModeKeys.TRAIN:
        dataset = dataset.shuffle(512).repeat()
    return dataset.batch(params["batch_size"])


def model_fn(features, labels, mode, params):
    hidden = tf.layers.dense(features["image"], 16, activation=tf.nn.relu)
    logits = tf.layers.dense(hidden, 4)
    classes = tf.argmax(logits, axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"classes": classes, "probabilities": tf.nn.softmax(logits)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss,
                                          eval_metric_ops={"accuracy": tf.metrics.accuracy(labels, classes)})
    optimizer = tf.train.AdamOptimizer(params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    logging_hook = tf.estimator.LoggingTensorHook({"loss": loss}, every_n_iter=10)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[logging_hook])


params = {"batch_size": 32, "learning_rate": 0.05}
if FLAGS.npu:
    run_config = NPURunConfig(model_dir=FLAGS.model_dir, save_checkpoints_steps=20, iterations_per_loop=10,
                              precision_mode="allow_mix_precision", log_step_count_steps=10)
    estimator = NPUEstimator(model_fn=model_fn, config=run_config, params=params)
else:
    run_config = tf.estimator.RunConfig(model_dir=FLAGS.model_dir, save_checkpoints_steps=20,
                                        log_step_count_steps=10)
    estimator = tf.estimator.Estimator(model_fn=model_fn, config=run_config, params=params)
assert isinstance(estimator, estimator_lib.Estimator)

train_spec = tf.estimator.TrainSpec(input_fn=input_fn, max_steps=FLAGS.max_steps)
eval_spec = tf.estimator.EvalSpec(input_fn=input_fn, steps=None, throttle_secs=0)
metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
predictions = list(estimator.predict(input_fn=input_fn))
agreement = np.mean([p["classes"] == label for p, label in zip(predictions, LABELS)])
print("global_step", metrics["global_step"], "accuracy", metrics["accuracy"], "agreement", agreement,
      "predictions", len(predictions))
