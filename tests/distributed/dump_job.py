"""A rank script that dumps while it trains: `dump_job.py DUMP_PATH MODE` (MODE: input / output / all).

It fetches the iterator's output together with the train op, as ported ModelZoo scripts do (`sess.run([train,
images])`), so the dump's tensors include one the script already fetches. Prints `RESULT <json>` per rank.
"""
import json
import sys

import numpy as np

from hccl.manage.api import get_rank_id
from npu_bridge.npu_init import *  # noqa: F401,F403

dump_path, mode = sys.argv[1], sys.argv[2]
data = np.random.RandomState(0).uniform(-1, 1, (8, 4)).astype(np.float32)
images = tf.data.Dataset.from_tensor_slices(data).batch(2).repeat().make_one_shot_iterator().get_next()
weights = tf.Variable(tf.ones([4, 1]), name="weights")
loss = tf.reduce_mean(tf.square(tf.matmul(images, weights)), name="loss")
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"
custom_op.parameter_map["enable_dump"].b = True
custom_op.parameter_map["dump_path"].s = dump_path.encode()
custom_op.parameter_map["dump_step"].s = b"1"
custom_op.parameter_map["dump_mode"].s = mode.encode()
with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    losses = [float(sess.run([train, images, loss])[2]) for _ in range(3)]
print("RESULT " + json.dumps({"rank": get_rank_id(), "losses": losses}), flush=True)
