"""A DIEN-style port: data and checkpoints through moxing, DynamicGRUV2 then DynamicAUGRU over time-major history,
a Keras Dropout layer converted to npu_ops.dropout by importing npu_convert_dropout; trained with sess.run."""
import argparse
import os

import moxing as mox
import numpy as np
import tensorflow as tf
from npu_bridge.npu_init import *
from npu_bridge.estimator.npu import npu_convert_dropout
from npu_bridge.estimator.npu.npu_dynamic_rnn import DynamicAUGRU, DynamicGRUV2

parser = argparse.ArgumentParser()
parser.add_argument("--data_url", required=True)
parser.add_argument("--train_url", required=True)
args = parser.parse_args()

cache = os.path.join(os.path.dirname(args.train_url), "cache")
mox.file.make_dirs(cache)
mox.file.copy_parallel(args.data_url, cache)
print("cached", mox.file.list_directory(cache))
data = np.load(os.path.join(cache, "history.npz"))
history, lengths, labels = data["history"], data["lengths"], data["labels"]

HIDDEN = 8
history_ph = tf.placeholder(tf.float32, [None, 6, 4], name="history")
lengths_ph = tf.placeholder(tf.int32, [None], name="lengths")
labels_ph = tf.placeholder(tf.float32, [None, 1], name="labels")
training = tf.placeholder_with_default(False, [], name="training")

time_major = tf.transpose(history_ph, [1, 0, 2])
rnn_outputs, _, _, _, _, _ = DynamicGRUV2(HIDDEN, dtype=tf.float32)(time_major)
query = tf.get_variable("query", [HIDDEN], initializer=tf.ones_initializer())
scores = tf.nn.softmax(tf.reduce_sum(rnn_outputs * query, axis=2), axis=0)
augru_outputs, _, _, _, _, _, _ = DynamicAUGRU(HIDDEN, dtype=tf.float32)(rnn_outputs, scores,
                                                                        seq_length=lengths_ph)
final_state = augru_outputs[-1]
dropped = tf.keras.layers.Dropout(0.2)(final_state, training=training)
dropped = tf.layers.dropout(dropped, 0.1, training=training)
logits = tf.layers.dense(dropped, 1)
loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels_ph, logits=logits))
train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
print("converted", len({op.name.split("npu_dropout")[0] for op in tf.get_default_graph().get_operations()
                         if "npu_dropout" in op.name and not op.name.startswith("gradients")}))

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["use_off_line"].b = True
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
feed = {history_ph: history, lengths_ph: lengths, labels_ph: labels}
with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    first = sess.run(loss, feed)
    for _ in range(40):
        sess.run(train_op, {**feed, training: True})
    print("loss first", first, "last", sess.run(loss, feed))
    local_ckpt = os.path.join(cache, "ckpt")
    tf.train.Saver().save(sess, os.path.join(local_ckpt, "model.ckpt"))
mox.file.copy_parallel(local_ckpt, args.train_url)
print("saved", sorted(name for name in mox.file.list_directory(args.train_url) if name.startswith("model.ckpt.index")))
try:
    mox.file.copy_parallel(args.train_url, "obs://my-bucket/output")
except OSError as error:
    print("obs error", error)
