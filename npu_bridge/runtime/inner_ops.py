"""Name-level reads of a Program's inner graph, straight from its C operations.

An execution plan asks a few questions of the inner graph, by name: does this tensor exist and what is its dtype,
what does this op read, which ops read this tensor, did the precision pass add this op. TensorFlow's Python graph
answers them only after it has made a Python Operation object for every node, which on a rewritten training
graph costs about as much as importing the graph itself (ResNet-50: 6,051 nodes, 80 ms measured). These reads go
to the C operations the import returned and to the rewritten GraphDef's inputs instead, so a session's first
step makes no Python objects for the graph it runs. Program.graph still makes them when a caller needs the
tf.Graph itself (debug tools, partial runs, a graph that grows).
"""
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2
from tensorflow.python.framework import errors

from npu_bridge import tf_private
from npu_bridge.tf_private import c_api, c_api_util


def tensor_name(spec: str) -> str:
    """"x" or "x:1" (a NodeDef input, a user's name) as "x:0" / "x:1"."""
    return spec if ":" in spec else spec + ":0"


def producer(name: str) -> str:
    """The op of tensor name or NodeDef input `name`: "op:index", "op" or "^op" (TensorFlow forbids ':' in op names)."""
    return name.lstrip("^").split(":", 1)[0]


def _split(name: str) -> tuple[str, int]:
    op, _, index = name.rpartition(":")
    return op, int(index)


class InnerOps:
    """The inner graph's operations by name, with the readers of each tensor built on first use.

    c_ops: the TF_Operations of the graph; graph_def: the GraphDef they were imported from, whose NodeDef inputs
    give the readers (only when a plan feeds a tensor does it need them). Plans are built on the threads calling
    `run` while another may grow the graph: the readers are built and extended under a lock.
    """

    def __init__(self, c_ops: Iterable[Any], graph_def: Any) -> None:
        name = c_api.TF_OperationName
        self._ops: dict[str, Any] = {name(op): op for op in c_ops}       # op name -> TF_Operation
        self._graph_def: Any = graph_def       # until the readers are built from it
        self._readers: dict[str, list[str]] | None = None
        self._lock = threading.Lock()

    def __contains__(self, op_name: object) -> bool:
        return op_name in self._ops

    def add(self, c_ops: Iterable[Any], graph_def: Any = None, node_defs: Iterable[Any] = ()) -> None:
        """Operations created in the inner graph since. When they come from the rewrite (a graph that grew),
        graph_def is the new rewritten GraphDef and node_defs its added nodes, whose inputs readers() sees."""
        name = c_api.TF_OperationName
        self._ops.update((name(op), op) for op in c_ops)
        if graph_def is None:
            return
        with self._lock:
            if self._readers is None:
                self._graph_def = graph_def
            else:
                _index_readers(self._readers, node_defs)

    def output(self, name: str) -> Any:
        """The TF_Output of tensor `name` ("op:index"); KeyError when the graph has no such tensor."""
        op_name, index = _split(name)
        c_op = self._ops.get(op_name)
        if c_op is None or not 0 <= index < c_api.TF_OperationNumOutputs(c_op):
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist in the emulated NPU graph.")
        return c_api_util.tf_output(c_op, index)

    def dtype(self, name: str) -> Any:
        """The tf.DType of tensor `name` (a ref dtype for a ref output); KeyError when it does not exist."""
        return tf.as_dtype(c_api.TF_OperationOutputType(self.output(name)))

    def is_ref(self, name: str) -> bool:
        """Is tensor `name` a ref (a VariableV2's output, or what forwards it)?"""
        return tf_private.is_ref_dtype(self.dtype(name))

    def op_type(self, op_name: str) -> str:
        return c_api.TF_OperationOpType(self._ops[op_name])

    def inputs(self, op_name: str) -> list[str]:
        """Names of the tensors op `op_name` reads through data edges, in input order."""
        name = c_api.TF_OperationName
        return [f"{name(source.oper)}:{source.index}" for source in c_api.GetOperationInputs(self._ops[op_name])]

    def attr(self, op_name: str, attr_name: str) -> attr_value_pb2.AttrValue | None:
        """The AttrValue `attr_name` of op `op_name`, or None when the op has no such attribute."""
        with c_api_util.tf_buffer() as buffer:
            try:
                c_api.TF_OperationGetAttrValueProto(self._ops[op_name], attr_name, buffer)
            except errors.InvalidArgumentError:
                return None
            return attr_value_pb2.AttrValue.FromString(c_api.TF_GetBuffer(buffer))

    def readers(self, name: str) -> Sequence[str]:
        """Names of the ops of the rewritten graph reading tensor `name` through a data edge (not the Casts the
        runtime adds for fetches)."""
        readers = self._readers
        if readers is None:
            with self._lock:
                if self._readers is None:
                    readers = {}
                    _index_readers(readers, self._graph_def.node)
                    self._readers, self._graph_def = readers, None
                readers = self._readers
        return readers.get(name, ())


def _index_readers(readers: dict[str, list[str]], node_defs: Iterable[Any]) -> None:
    """Add the data inputs of `node_defs` to `readers` ({tensor name: [reading op names]})."""
    for node in node_defs:
        for spec in node.input:
            if spec[:1] == "^":
                break           # control inputs follow every data input
            readers.setdefault(tensor_name(spec), []).append(node.name)
