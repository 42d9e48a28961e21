"""The inner graph and plain session that execute the rewritten GraphDef of one user graph.

When the user's graph grows between runs the pass runs again over the whole graph (its decisions can depend on
neighbours). If every node the inner graph already holds comes back unchanged, only the new nodes are imported
into the running inner session, so variables, queues, iterators and tables keep their state. If the pass changed
an existing node, a new inner session is built and the values of every initialized variable are copied across;
other state (queue contents, iterator positions, table contents) starts over. Both paths are logged.
"""
import re
import threading

import tensorflow as tf
from tensorflow.core.framework import graph_pb2, node_def_pb2
from tensorflow.python.client import pywrap_tf_session as c_api
from tensorflow.python.framework import c_api_util, errors, importer

from npu_bridge.core.gcpause import collector_paused
from npu_bridge.runtime import state_transfer

FETCH_CAST_SUFFIX = "-NpuBridgeFetch"
# Ops holding state that a rebuild cannot carry over: input iterators, queues, hash tables.
_LOST_STATE_TYPE = re.compile(r"(?!Make)\w*(Iterator|Queue|HashTable\w*?)(V\d)?")


class Program:
    """One rewritten graph loaded in an inner session, with the execution plans built against it."""

    def __init__(self, result, version, target, config):
        self.result = result
        self.version = version
        self.graph = _imported(result.graph_def)
        self.session = tf.compat.v1.Session(target, graph=self.graph, config=config)
        self._nodes = None
        self._functions = None
        self.plans = {}
        self.lock = threading.RLock()

    @property
    def nodes(self):
        """fingerprints() of the graph this program runs; first needed when the graph grows, so built then."""
        if self._nodes is None:
            self._nodes = fingerprints(self.result.graph_def)
        return self._nodes

    @property
    def functions(self):
        """{function name: deterministic serialization} of the library this program runs (built when needed)."""
        if self._functions is None:
            self._functions = {f.signature.name: f.SerializeToString(deterministic=True)
                               for f in self.result.graph_def.library.function}
        return self._functions

    def can_extend_to(self, result, node_blobs):
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

    def extend_to(self, result, version, node_blobs=None, added_nodes=None):
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
        input_map, control_edges = {}, []
        for node in added_nodes:
            added_node = added.node.add()
            added_node.CopyFrom(node)
            del added_node.input[:]
            for source in node.input:
                producer = source.lstrip("^").split(":")[0]
                if producer in new_names:
                    added_node.input.append(source)
                elif source.startswith("^"):
                    control_edges.append((node.name, producer))
                else:
                    name = source if ":" in source else source + ":0"
                    input_map[name] = self.graph.get_tensor_by_name(name)
                    added_node.input.append(source)
        with self.lock, self.graph.as_default():
            # Colocation with nodes imported earlier (`_class: loc:@v`) is only checked within one GraphDef;
            # the public import_graph_def would reject it, the internal one can skip the check.
            importer._import_graph_def_internal(added, input_map=input_map, name="",
                                                validate_colocation_constraints=False)
            for consumer, producer in control_edges:
                # import_graph_def maps control inputs only with a name prefix; add them to the imported op instead.
                consumer_op = self.graph.get_operation_by_name(consumer)
                consumer_op._add_control_input(self.graph.get_operation_by_name(producer))
        if node_blobs is not None and dict(result.tensor_map) != dict(self.result.tensor_map):
            self.plans = {}
        self.functions.update((f.signature.name, f.SerializeToString(deterministic=True))
                              for f in added.library.function)
        self.result = result
        self.version = version
        if node_blobs is not None:
            self._nodes = node_blobs
        elif self._nodes is not None:
            self._nodes.update(fingerprints(added))

    def state_lost_on_rebuild(self):
        """Names of the ops (iterators, queues, tables) whose contents a rebuild starts over."""
        return sorted(op.name for op in self.graph.get_operations() if _LOST_STATE_TYPE.fullmatch(op.type))

    def replace_with(self, result, version, target, config):
        """A new Program for `result` holding this program's variable values; this one is closed."""
        values = state_transfer.read_variables(self.session, self.graph)
        successor = Program(result, version, target, config)
        state_transfer.write_variables(successor.session, successor.graph, values)
        self.close()
        return successor

    def fetch_tensor(self, name, dtype):
        """The inner tensor holding user tensor value `name` in `dtype`: itself, or a cached Cast of it."""
        tensor = self.graph.get_tensor_by_name(name)
        if tensor.dtype.base_dtype == dtype.base_dtype:
            return tensor
        cast_name = f"{name.replace(':', '-')}-CastTo{dtype.base_dtype.name}{FETCH_CAST_SUFFIX}"
        with self.lock:
            try:
                return self.graph.get_tensor_by_name(cast_name + ":0")
            except KeyError:
                pass
            with self.graph.as_default(), self.graph.name_scope(None):
                return tf.raw_ops.Cast(x=tensor, DstT=dtype.base_dtype, name=cast_name)

    def close(self):
        self.plans = {}
        self.session.close()


def _imported(graph_def):
    """A new tf.Graph holding `graph_def`, imported as import_graph_def does, less its Python device pass.

    import_graph_def then clears and re-applies every op's device through the graph's device functions and copies
    devices along colocation groups, one Python call after another (half its time on a 10k-node graph). A fresh
    graph has no device functions, and the placer applies colocation itself, so the devices the NodeDefs name are
    what the session places by. Default attribute values are still added to `graph_def` in place, as
    import_graph_def does: the fingerprints that decide whether the graph may grow are taken from it. The Python
    Operation objects are made with the garbage collector paused (core.gcpause).
    """
    graph = tf.Graph()
    graph_def = importer._ProcessGraphDefParam(graph_def)
    scoped = c_api_util.ScopedTFImportGraphDefOptions()
    importer._PopulateTFImportGraphDefOptions(scoped.options, "", {}, None, True)
    buffer = c_api.TF_NewBufferFromString(graph_def.SerializeToString())
    try:
        with graph._mutation_lock(), collector_paused():
            try:
                results = c_api.TF_GraphImportGraphDefWithResults(graph._c_graph, buffer, scoped.options)
            except errors.InvalidArgumentError as error:
                raise ValueError(str(error)) from None
            c_api.TF_DeleteImportGraphDefResults(results)
            graph._add_new_tf_operations(compute_devices=False)
    finally:
        c_api.TF_DeleteBuffer(buffer)
    return graph


def _without_markers(blob):
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


def fingerprints(graph_def):
    """{node name: deterministic serialization}: what decides whether the inner graph can simply grow."""
    return {n.name: n.SerializeToString(deterministic=True) for n in graph_def.node}
