"""The seed document's two snippets, as written, around a small cost so they have something to run.

First snippet: precision_mode_v2 = mixed_float16 with a plain `import tensorflow as tf`. Second snippet:
the same through `from npu_bridge.npu_init import *` with a modify_mixlist file (written as valid JSON: the
seed's own example has // comments, which the real parser rejects).
"""
import json
import tempfile

import numpy as np
import tensorflow as tf
from npu_bridge.estimator import npu_ops
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

x = tf.placeholder(tf.float32, [8, 16], name="x")
w = tf.Variable(np.random.RandomState(0).randn(16, 4).astype(np.float32) * 0.1, name="w")
logits = tf.matmul(npu_ops.dropout(x, 1.0), w)
cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.one_hot([1] * 8, 4), logits=logits))
feed = {x: np.random.RandomState(1).randn(8, 16).astype(np.float32)}

config = tf.ConfigProto()

custom_op =  config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name =  "NpuOptimizer" 
custom_op.parameter_map["use_off_line"].b = True
custom_op.parameter_map["precision_mode_v2"].s = tf.compat.as_bytes("mixed_float16")
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF  #关闭remap开关

with tf.Session(config=config) as sess:
  sess.run(tf.global_variables_initializer())
  print(sess.run(cost, feed))

from npu_bridge.npu_init import *

ops_info = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
json.dump({"black-list": {"to-remove": ["Xlog1py"], "to-add": ["MatMulV2", "Cast"]},
           "white-list": {"to-remove": ["Conv2D"], "to-add": ["BiasAdd"]}}, ops_info)
ops_info.close()

config = tf.ConfigProto()
custom_op =  config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name =  "NpuOptimizer" 
custom_op.parameter_map["use_off_line"].b = True
custom_op.parameter_map["precision_mode_v2"].s = tf.compat.as_bytes("mixed_float16")
custom_op.parameter_map["modify_mixlist"].s = tf.compat.as_bytes(ops_info.name)
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
with tf.Session(config=config) as sess:
  sess.run(tf.global_variables_initializer())
  print(sess.run(cost, feed))
os.remove(ops_info.name)
