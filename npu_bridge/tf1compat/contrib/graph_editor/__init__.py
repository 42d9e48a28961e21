"""tf.contrib.graph_editor: the part of TF 1.15's graph editor ported scripts call, with its semantics.

The three ModelZoo ports that import it carry the memory-saving-gradients helper (gradient checkpointing by
recomputation): it selects ops by walking the graph (get_backward_walk_ops / get_forward_walk_ops, filter_ts,
filter_ts_from_regex, select_ops), copies the forward ops to recompute (sgv, copy_with_input_replacements), rewires
the copies to the checkpointed tensors (reroute_ts) and orders them with add_control_inputs; a quantisation helper
calls reroute_ts. Those, with their neighbours (filter_ops, select_ts, the walks' intersection / union, copy,
graph_replace, swap_ts, ControlOutputs, SubGraphView), are built here on TensorFlow's public graph API, and the
two in-place edits TF has no public call for (an op's input, an op's control inputs) go through
npu_bridge.tf_private. Any other graph_editor name raises ContribRemovedError. Importing it also gives
tf.Operation back TF 1.15's `_outputs`, which the helper reads from the copies.
"""
from npu_bridge import tf_private
from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.graph_editor import reroute, select, subgraph, transform, util  # noqa: F401
from npu_bridge.tf1compat.contrib.graph_editor.reroute import add_control_inputs, reroute_ts, swap_ts  # noqa: F401
from npu_bridge.tf1compat.contrib.graph_editor.select import (  # noqa: F401
    filter_ops,
    filter_ops_from_regex,
    filter_ts,
    filter_ts_from_regex,
    get_backward_walk_ops,
    get_forward_walk_ops,
    get_walks_intersection_ops,
    get_walks_union_ops,
    select_ops,
    select_ts,
)
from npu_bridge.tf1compat.contrib.graph_editor.subgraph import SubGraphView, make_view, sgv  # noqa: F401
from npu_bridge.tf1compat.contrib.graph_editor.transform import (  # noqa: F401
    TransformerInfo,
    copy,
    copy_with_input_replacements,
    graph_replace,
)
from npu_bridge.tf1compat.contrib.graph_editor.util import ControlOutputs  # noqa: F401

tf_private.restore_operation_outputs()

__getattr__ = removed.module_getattr(__name__)
