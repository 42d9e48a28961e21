"""The inner graph and plain session that execute the rewritten GraphDef of one user graph.

When the user's graph grows between runs the pass runs again over the whole graph (its decisions can depend on
neighbours). If every node the inner graph already holds comes back unchanged, only the new nodes are imported
into the running inner session, so variables, queues, iterators and tables keep their state. If the pass changed
an existing node, a new inner session is built and the values of every initialized variable are copied across;
other state (queue contents, iterator positions, table contents) starts over: each iterator the user had
initialized is initialized again, with the values fed then, so it restarts from its first element instead of failing
as uninitialized (tf.keras fit initializes its dataset's iterator, then adds the ops of its train function).
Both paths are logged.
"""
import re
import threading
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2, graph_pb2, node_def_pb2
from tensorflow.python.framework import errors

from npu_bridge.core.contract import fetch_cast_name
from npu_bridge import tf_private
from npu_bridge.core.gcpause import collector_paused
from npu_bridge.core.precision.report import RewriteResult
from npu_bridge.runtime import state_transfer
from npu_bridge.runtime.inner_ops import InnerOps, producer, tensor_name
from npu_bridge.tf_private import c_api, c_api_util

# Ops holding state that a rebuild cannot carry over: input iterators, queues, hash tables.
_LOST_STATE_TYPE = re.compile(r"(?!Make)\w*(Iterator|Queue|HashTable\w*?)(V\d)?")
# iterator initializer op name -> (inner feed names, values) of its last run
IteratorInitializers = dict[str, tuple[tuple[str, ...], list[Any]]]


class Program:
    """One rewritten graph loaded in an inner session, with the execution plans built against it."""

    def __init__(self, result: RewriteResult, version: int, target: str, config: Any) -> None:
        self.result = result
        self.version = version
        self._graph, c_ops = _imported(result.graph_def)
        self.ops = InnerOps(c_ops, result.graph_def)
        self._materialized = False
        self.session = tf.compat.v1.Session(target, graph=self._graph, config=config)
        self._nodes: dict[str, bytes] | None = None
        self._functions: dict[str, bytes] | None = None
        self.plans: dict[Hashable, Any] = {}      # plan key -> runtime.plans.Plan
        self.lock = threading.RLock()
        # the iterator initializers run here, for a successor to run again
        self._iterator_initializers: IteratorInitializers = {}

    @property
    def graph(self) -> Any:
        """The inner tf.Graph, with its Python Operation objects made on first use (see runtime.inner_ops)."""
        if not self._materialized:
            with self.lock, tf_private.mutation_lock(self._graph), collector_paused():
                if not self._materialized:
                    _make_python_operations(self._graph)
                    self._materialized = True
        return self._graph

    @property
    def nodes(self) -> dict[str, bytes]:
        """fingerprints() of the graph this program runs; first needed when the graph grows, so built then."""
        if self._nodes is None:
            self._nodes = fingerprints(self.result.graph_def)
        return self._nodes

    @property
    def functions(self) -> dict[str, bytes]:
        """{function name: deterministic serialization} of the library this program runs (built when needed)."""
        if self._functions is None:
            self._functions = {f.signature.name: f.SerializeToString(deterministic=True)
                               for f in self.result.graph_def.library.function}
        return self._functions

    def can_extend_to(self, result: RewriteResult, node_blobs: dict[str, bytes]) -> bool:
        """True when `result` (node_blobs: its fingerprints()) only adds nodes and functions to this program."""
        for name, blob in self.nodes.items():
            new = node_blobs.get(name)
            if new != blob and (new is None or _without_markers(new) != _without_markers(blob)):
                return False
        for function in result.graph_def.library.function:
            known = self.functions.get(function.signature.name)
            if known is not None and known != function.SerializeToString(deterministic=True):
                return False
        return True

    def extend_to(self, result: RewriteResult, version: int, node_blobs: dict[str, bytes] | None = None,
                  added_nodes: Sequence[node_def_pb2.NodeDef] | None = None) -> None:
        """Import the nodes of `result` this program lacks into the running inner graph.

        node_blobs: fingerprints() of `result`, when the caller made them. added_nodes: the NodeDefs `result` adds,
        when the caller knows that it holds this program's nodes and tensor-map entries unchanged plus these
        (the incremental rewrite): then neither the whole graph is compared nor the cached plans dropped.
        """
        added = graph_pb2.GraphDef()
        added.versions.CopyFrom(result.graph_def.versions)
        for function in result.graph_def.library.function:
            if function.signature.name not in self.functions:
                added.library.function.add().CopyFrom(function)
        added.library.gradient.extend(result.graph_def.library.gradient)
        if added_nodes is None:
            added_nodes = [n for n in result.graph_def.node if n.name not in self.nodes]
        new_names = {n.name for n in added_nodes}
        outside: set[str] = set()               # tensors of earlier nodes the added ones read
        control_edges: list[tuple[str, str]] = []  # (added op, earlier op) control edges
        for node in added_nodes:
            added_node = added.node.add()
            added_node.CopyFrom(node)
            del added_node.input[:]
            for source in node.input:
                source_op = producer(source)
                if source_op in new_names:
                    added_node.input.append(source)
                elif source.startswith("^"):
                    control_edges.append((node.name, source_op))
                else:
                    outside.add(tensor_name(source))
                    added_node.input.append(source)
        with self.lock:
            # The import maps inputs to Python tensors and adds control edges to Python ops: the graph's Python
            # objects are made here if no one needed them before.
            graph = self.graph
            input_map = {name: graph.get_tensor_by_name(name) for name in outside}
            with graph.as_default():
                # Colocation with nodes imported earlier (`_class: loc:@v`) is only checked within one GraphDef;
                # the public import_graph_def would reject it, the internal one can skip the check.
                imported = tf_private.import_graph_def_unchecked(added, input_map)
            for consumer, source_op in control_edges:
                # import_graph_def maps control inputs only with a name prefix; add them to the imported op instead.
                consumer_op = graph.get_operation_by_name(consumer)
                tf_private.add_control_input(consumer_op, graph.get_operation_by_name(source_op))
            self.ops.add([tf_private.c_op(op) for op in imported], result.graph_def, added_nodes)
        if node_blobs is not None and dict(result.tensor_map) != dict(self.result.tensor_map):
            self.plans = {}
        self.functions.update((f.signature.name, f.SerializeToString(deterministic=True))
                              for f in added.library.function)
        self.result = result
        self.version = version
        if node_blobs is not None:
            self._nodes = node_blobs
        elif self._nodes is not None:
            # The NodeDefs as `result` holds them: `added` lacks their control inputs on earlier nodes (added to
            # the imported ops above), and remembering that copy made the next comparison see them "changed".
            self._nodes.update(_fingerprints_of(added_nodes))

    def state_lost_on_rebuild(self) -> list[str]:
        """Names of the ops (iterators, queues, tables) whose contents a rebuild starts over."""
        return sorted(op.name for op in self.graph.get_operations() if _LOST_STATE_TYPE.fullmatch(op.type))

    def replace_with(self, result: RewriteResult, version: int, target: str, config: Any) -> "Program":
        """A new Program for `result` holding this program's variable values; this one is closed."""
        values = state_transfer.read_variables(self.session, self.graph)
        successor = Program(result, version, target, config)
        state_transfer.write_variables(successor.session, successor.graph, values)
        successor.initialize_iterators_again(self._iterator_initializers)
        self.close()
        return successor

    def record_iterator_initializers(self, op_names: Iterable[str], feed_names: Sequence[str],
                                     values: Sequence[Any]) -> None:
        """Remember that the initializers `op_names` ran with `values` fed to `feed_names`."""
        with self.lock:
            for name in op_names:
                self._iterator_initializers[name] = (tuple(feed_names), list(values))

    def initialize_iterators_again(self, initializers: IteratorInitializers) -> None:
        """Run the iterator initializers a predecessor ran ({op name: (feed names, values)}) that this graph has."""
        for name, (feed_names, values) in initializers.items():
            if name in self.ops:
                self.session.run(name, feed_dict=dict(zip(feed_names, values)))
                self._iterator_initializers[name] = (feed_names, values)

    def fetch_name(self, name: str, dtype: Any) -> str:
        """The inner tensor holding user tensor value `name` in `dtype`: itself, or a Cast of it (made once)."""
        dtype = dtype.base_dtype
        source = self.ops.dtype(name).base_dtype
        if source == dtype:
            return name
        cast_name = fetch_cast_name(name, dtype.name)
        with self.lock:
            if cast_name not in self.ops:
                self._add_cast(cast_name, name, source, dtype)
        return cast_name + ":0"

    def _add_cast(self, name: str, source_name: str, source: Any, dtype: Any) -> None:
        """Cast op `name` of tensor `source_name`, made in the C graph (a Python op only once the graph has them)."""
        with tf_private.mutation_lock(self._graph), tf_private.c_graph(self._graph) as c_graph:
            description = c_api.TF_NewOperation(c_graph, "Cast", name)
            c_api.TF_AddInput(description, self.ops.output(source_name))
            for attr, value in (("SrcT", source), ("DstT", dtype)):
                c_api.TF_SetAttrValueProto(description, attr,
                                           attr_value_pb2.AttrValue(type=value.as_datatype_enum).SerializeToString())
            c_op = c_api.TF_FinishOperation(description)
            self.ops.add([c_op])
            if self._materialized:
                _make_python_operations(self._graph)

    def close(self) -> None:
        self.plans = {}
        self.session.close()


def _make_python_operations(graph: Any) -> list[Any]:
    """Python Operation objects for the C operations of the inner `graph` that have none yet.

    Graph._add_new_tf_operations would also hand each op the graph's control dependencies (none: nothing builds
    ops in the inner graph under tf.control_dependencies), and TensorFlow >= 2.16 records that call as a mutation
    even when it adds nothing: an op the session already ran (the train op) then draws "was changed by adding
    control input after it was run by a session. This mutation will have no effect" when the graph is extended.
    Nothing had changed; the ops are made without that call.
    """
    return [tf_private.python_operation(graph, c_op) for c_op in tf_private.new_c_operations(graph)]


def _imported(graph_def: graph_pb2.GraphDef) -> tuple[Any, list[Any]]:
    """A new tf.Graph holding `graph_def` in its C graph only, and the C operations made: (graph, TF_Operations).

    import_graph_def would also make a Python Operation for every op (Program.graph makes them when needed) and
    clear and re-apply every op's device through the graph's device functions, copying devices along colocation
    groups, one Python call after another (half its time on a 10k-node graph). A fresh graph has no device
    functions, and the placer applies colocation itself, so the devices the NodeDefs name are what the session
    places by. Nor does it add default attribute values to `graph_def` in place, a pass over every node (44 ms on
    28,864 nodes): the user's GraphDef comes from a live graph, whose ops hold every attribute, the precision pass
    writes every attribute of the nodes it adds, and the C++ importer adds any missing default to the C graph.
    """
    graph = tf.Graph()
    scoped = c_api_util.ScopedTFImportGraphDefOptions()
    tf_private.populate_import_options(scoped.options)
    buffer = c_api.TF_NewBufferFromString(graph_def.SerializeToString())
    try:
        with tf_private.mutation_lock(graph):
            try:
                results = c_api.TF_GraphImportGraphDefWithResults(tf_private.raw_c_graph(graph), buffer,
                                                                 scoped.options)
            except errors.InvalidArgumentError as error:
                raise ValueError(str(error)) from None
            c_api.TF_DeleteImportGraphDefResults(results)
            return graph, tf_private.new_c_operations(graph)
    finally:
        c_api.TF_DeleteBuffer(buffer)


def _without_markers(blob: bytes) -> bytes:
    """A serialized NodeDef without the attributes TensorFlow sets on existing ops that change nothing they do.

    `_has_manual_control_dependencies` is set on an op when it becomes a control input of a new one (tf.group of a
    train op, as set_iteration_per_loop does after the initializers ran); it only guides tf.function's automatic
    control dependencies.
    """
    node = node_def_pb2.NodeDef.FromString(blob)
    for name in _MARKER_ATTRS:
        if name in node.attr:
            del node.attr[name]
    return node.SerializeToString(deterministic=True)


_MARKER_ATTRS = ("_has_manual_control_dependencies",)


def fingerprints(graph_def: graph_pb2.GraphDef) -> dict[str, bytes]:
    """{node name: deterministic serialization}: what decides whether the inner graph can simply grow."""
    return _fingerprints_of(graph_def.node)


def _fingerprints_of(nodes: Iterable[node_def_pb2.NodeDef]) -> dict[str, bytes]:
    return {n.name: n.SerializeToString(deterministic=True) for n in nodes}
