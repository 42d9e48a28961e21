"""Iris-style MLP trained with sess.run, written the way ModelZoo's ported mlp.py is.

NpuOptimizer session config with precision_mode from a flag, remapping off, iterations_per_loop both in the
parameter_map and through util.set_iteration_per_loop, dynamic loss scaling, npu_ops.dropout with a keep_prob
placeholder. Synthetic data replaces iris.train/iris.test.
"""
import argparse

import numpy as np
from npu_bridge.npu_init import *

parser = argparse.ArgumentParser()
parser.add_argument("--precision_mode", default="allow_mix_precision")
parser.add_argument("--iterations_per_loop", type=int, default=10)
parser.add_argument("--loops", type=int, default=6)
parser.add_argument("--init_loss_scale", type=float, default=2 ** 12)
args = parser.parse_args()

rng = np.random.RandomState(7)
centers = rng.randn(3, 4) * 2
labels = rng.randint(0, 3, 600)
features = (centers[labels] + rng.randn(600, 4) * 0.5).astype(np.float32)

dataset = tf.data.Dataset.from_tensor_slices((features, labels.astype(np.int32))).repeat().batch(32, drop_remainder=True)
x, y = tf.data.make_one_shot_iterator(dataset).get_next()
keep_prob = tf.placeholder_with_default(1.0, [], name="keep_prob")

hidden = tf.layers.dense(x, 32, activation=tf.nn.relu)
hidden = npu_ops.dropout(hidden, keep_prob)
logits = tf.layers.dense(hidden, 3)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32), y), tf.float32))

global_step = tf.train.get_or_create_global_step()
opt = tf.train.AdamOptimizer(0.01)
if args.precision_mode == "allow_mix_precision":
    loss_scale_manager = ExponentialUpdateLossScaleManager(init_loss_scale=args.init_loss_scale, incr_every_n_steps=1000,
                                                           decr_every_n_nan_or_inf=2, decr_ratio=0.8)
    opt = NPULossScaleOptimizer(opt, loss_scale_manager, is_distributed=int(os.getenv("RANK_SIZE", "1")) > 1)
opt = npu_tf_optimizer(opt)
train_op = opt.minimize(loss, global_step=global_step)

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["use_off_line"].b = True
custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(args.precision_mode)
custom_op.parameter_map["mix_compile_mode"].b = False
custom_op.parameter_map["enable_data_pre_proc"].b = True
custom_op.parameter_map["iterations_per_loop"].i = args.iterations_per_loop
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF

with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    train_op = util.set_iteration_per_loop(sess, train_op, args.iterations_per_loop)
    first_loss = sess.run(loss)
    for _ in range(args.loops):
        sess.run(train_op, feed_dict={keep_prob: 0.9})
    final_loss, final_accuracy, step = sess.run([loss, accuracy, global_step])
    scale = sess.run("loss_scale:0") if args.precision_mode == "allow_mix_precision" else 1.0

print(f"global_step {step} loss {first_loss:.4f} -> {final_loss:.4f} accuracy {final_accuracy:.2f} loss_scale {scale:g}")
if step == 0 or not final_loss < first_loss:
    raise SystemExit("training did not progress")
