"""A BERT-style fine-tuning script as ported BERT-family folders are: tf.estimator.tpu.RunConfig / TPUConfig, a
model_fn_builder whose model_fn reads params["batch_size"], restores an init checkpoint in scaffold_fn and returns
tf.estimator.tpu.TPUEstimatorSpec (eval_metrics as (metric_fn, tensors)), a TPUEstimator with use_tpu=False, and
the session config from npu_config_proto so it runs on the emulated NPU."""
import argparse

import numpy as np
import tensorflow as tf

from npu_bridge.npu_init import *

parser = argparse.ArgumentParser()
parser.add_argument("--output_dir", required=True)
parser.add_argument("--init_checkpoint", default=None)
FLAGS = parser.parse_args()

rng = np.random.RandomState(1)
FEATURES = rng.randn(96, 12).astype(np.float32)
LABELS = (FEATURES[:, :6].sum(axis=1) > 0).astype(np.int32)


def input_fn_builder(is_training):
    def input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices({"input": FEATURES, "label_ids": LABELS})
        if is_training:
            dataset = dataset.repeat().shuffle(96)
        return dataset.batch(params["batch_size"], drop_remainder=True)
    return input_fn


def model_fn_builder(init_checkpoint, learning_rate):
    def model_fn(features, labels, mode, params):
        assert labels is None and params["batch_size"] in (16, 8, 4)
        with tf.variable_scope("bert"):
            hidden = tf.layers.dense(features["input"], 32, activation=gelu, name="pooler")
        logits = tf.layers.dense(hidden, 2, name="output")
        loss = tf.losses.sparse_softmax_cross_entropy(features["label_ids"], logits)
        scaffold_fn = None
        if init_checkpoint:
            assignment = {"bert/": "bert/"}
            def scaffold_fn():
                tf.train.init_from_checkpoint(init_checkpoint, assignment)
                return tf.train.Scaffold()
        if mode == tf.estimator.ModeKeys.TRAIN:
            train_op = tf.train.AdamOptimizer(learning_rate).minimize(loss, global_step=tf.train.get_global_step())
            return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, scaffold_fn=scaffold_fn)
        if mode == tf.estimator.ModeKeys.EVAL:
            def metric_fn(label_ids, logits):
                return {"eval_accuracy": tf.metrics.accuracy(label_ids, tf.argmax(logits, axis=-1))}
            return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, scaffold_fn=scaffold_fn,
                                                     eval_metrics=(metric_fn, [features["label_ids"], logits]))
        return tf.estimator.tpu.TPUEstimatorSpec(mode, predictions={"probabilities": tf.nn.softmax(logits)},
                                                 scaffold_fn=scaffold_fn)
    return model_fn


def gelu(x):
    return 0.5 * x * (1.0 + tf.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


run_config = tf.estimator.tpu.RunConfig(
    model_dir=FLAGS.output_dir, save_checkpoints_steps=20, session_config=npu_config_proto(), tf_random_seed=5,
    tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=10, num_shards=8,
                                          per_host_input_for_training=tf.estimator.tpu.InputPipelineConfig.PER_HOST_V2))
estimator = tf.estimator.tpu.TPUEstimator(
    use_tpu=False, model_fn=model_fn_builder(FLAGS.init_checkpoint, 0.01), config=run_config,
    train_batch_size=16, eval_batch_size=8, predict_batch_size=4)
estimator.train(input_fn=input_fn_builder(True), max_steps=40)
result = estimator.evaluate(input_fn=input_fn_builder(False), steps=None)
probabilities = [p["probabilities"] for p in estimator.predict(input_fn=input_fn_builder(False))]
print("global_step", result["global_step"], "eval_accuracy", result["eval_accuracy"], "predictions",
      len(probabilities))
