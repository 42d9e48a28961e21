"""Sequence classifier on the NPU's fused LSTM, in the style of ModelZoo's LSTM_ID0111 train.py.

npu_dynamic_rnn.DynamicRNN on time-major input, npu_ops.dropout on its output, hccl_ops.broadcast of the
initial variables (one rank), get_rank_size, dynamic loss scaling, and an NpuOptimizer config with
precision_mode allow_mix_precision, remapping and memory_optimization off.
"""
import numpy as np
import tensorflow as tf
from npu_bridge.estimator.npu.npu_dynamic_rnn import DynamicRNN
from npu_bridge.npu_init import *

TIME, BATCH, FEATURES, HIDDEN = 12, 16, 8, 32

rng = np.random.RandomState(11)
sequences = rng.randn(256, TIME, FEATURES).astype(np.float32)
labels = (sequences[:, :, 0].sum(axis=1) > 0).astype(np.int32)

x = tf.placeholder(tf.float32, [BATCH, TIME, FEATURES], name="x")
y = tf.placeholder(tf.int32, [BATCH], name="y")
outputs = DynamicRNN(HIDDEN, tf.float32, forget_bias=1.0)(tf.transpose(x, [1, 0, 2]))
last = npu_ops.dropout(outputs[0][-1], 0.9)
logits = tf.layers.dense(last, 2)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))

opt = tf.train.AdamOptimizer(0.01)
opt = NPULossScaleOptimizer(opt, ExponentialUpdateLossScaleManager(2 ** 10, 100, 2, 2, 0.5),
                            is_distributed=get_rank_size() > 1)
train_op = opt.minimize(loss, global_step=tf.train.get_or_create_global_step())
broadcast = tf.group(*[tf.assign(v, b) for v, b in
                       zip(tf.global_variables(), hccl_ops.broadcast(tf.global_variables(), root_rank=0))])

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["use_off_line"].b = True
custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF

with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(broadcast)
    losses = []
    for step in range(40):
        start = step * BATCH % 256
        _, value = sess.run([train_op, loss], {x: sequences[start:start + BATCH], y: labels[start:start + BATCH]})
        losses.append(value)
    scale = sess.run("loss_scale:0")
print(f"lstm loss {np.mean(losses[:5]):.4f} -> {np.mean(losses[-5:]):.4f} loss_scale {scale:g}")
if not np.mean(losses[-5:]) < np.mean(losses[:5]):
    raise SystemExit("training did not progress")
