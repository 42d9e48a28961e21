"""TF 1.15's `tensorflow.python.framework.graph_util` (also importable as `tensorflow.python.graph_util`).

Freeze-and-export code in ported scripts calls `graph_util.convert_variables_to_constants(sess, graph_def,
output_names)` from this module; TensorFlow 2.x's module of the same name keeps the other four functions but
not that one. These are TF 1.15's five, as tf.compat.v1.graph_util still has them.
"""
from tensorflow.compat.v1 import graph_util as _v1_graph_util

convert_variables_to_constants = _v1_graph_util.convert_variables_to_constants
extract_sub_graph = _v1_graph_util.extract_sub_graph
must_run_on_cpu = _v1_graph_util.must_run_on_cpu
remove_training_nodes = _v1_graph_util.remove_training_nodes
tensor_shape_from_node_def_name = _v1_graph_util.tensor_shape_from_node_def_name
