"""The value of a node the graph engine folds from constants before the run, computed with numpy.

The pass warns about a constant the reduced dtype turns into 0 or +-inf where an op reads it (casts.py). For a
folded value (an attention mask `Fill * Const`, `(1 - ones) * -1e9`, `eps * eps`), the value that reaches the
reader is what matters, not the constants it is computed from: a -1e9 Const times a zero mask is 0, and two
float16-safe factors of 1e-4 make a 1e-8 that is 0 in float16. folded_value evaluates the common elementwise and
shape ops of such masks; for anything else it returns None and the caller falls back to checking the constants.
"""
import numpy as np
from tensorflow.python.framework import tensor_util

from npu_bridge.core.graph import Tensor

MAX_ELEMENTS = 1 << 20        # a folded value larger than this is not evaluated (its constants are checked)
_MAX_NODES = 64

_BINARY = {"Mul": np.multiply, "Add": np.add, "AddV2": np.add, "Sub": np.subtract, "RealDiv": np.divide,
           "Div": np.divide, "Maximum": np.maximum, "Minimum": np.minimum, "Pow": np.power}
_UNARY = {"Identity": lambda a: a, "Neg": np.negative, "Square": np.square, "Exp": np.exp, "Abs": np.abs}


def folded_value(graph, node, folded):
    """The numpy value of output 0 of `node` (a folded node of the pass's Graph), or None when it is not
    computed here (an op outside the small set, too many nodes, or a value beyond MAX_ELEMENTS)."""
    values, budget = {}, [_MAX_NODES]
    try:
        with np.errstate(all="ignore"):
            return _value(graph, Tensor(node.name, 0), folded, values, budget)
    except _NotEvaluated:
        return None


class _NotEvaluated(Exception):
    pass


def _value(graph, tensor, folded, values, budget):
    if tensor in values:
        return values[tensor]
    node = graph.nodes.get(tensor.node)
    budget[0] -= 1
    if node is None or tensor.port != 0 or budget[0] < 0 or (node.op not in ("Const", "HostConst")
                                                             and node.name not in folded):
        raise _NotEvaluated
    inputs = [_value(graph, source, folded, values, budget) for source in node.inputs]
    result = _compute(node, inputs)
    if result is None or np.size(result) > MAX_ELEMENTS:
        raise _NotEvaluated
    values[tensor] = result
    return result


def _compute(node, inputs):
    op = node.op
    if op in ("Const", "HostConst"):
        proto = node.node_def.attr["value"].tensor
        count = 1
        for dim in proto.tensor_shape.dim:
            count *= dim.size
        return tensor_util.MakeNdarray(proto) if count <= MAX_ELEMENTS else None
    if op in _BINARY and len(inputs) == 2:
        return _BINARY[op](inputs[0], inputs[1])
    if op in _UNARY and len(inputs) == 1:
        return _UNARY[op](inputs[0])
    if op == "Fill" and len(inputs) == 2:
        shape = [int(d) for d in np.ravel(inputs[0])]
        return np.full(shape, inputs[1]) if int(np.prod(shape)) <= MAX_ELEMENTS else None
    if op == "Cast" and len(inputs) == 1:
        return inputs[0].astype(np.float32) if np.asarray(inputs[0]).dtype.kind in "fiub" else None
    if op in ("Reshape", "ExpandDims", "Squeeze") and inputs:
        return inputs[0]        # the values are what is checked, not their layout
    if op in ("OnesLike", "ZerosLike") and len(inputs) == 1:
        return (np.ones_like if op == "OnesLike" else np.zeros_like)(inputs[0])
    return None
