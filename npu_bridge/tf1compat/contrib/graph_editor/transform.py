"""graph_editor.transform: copies of a subgraph in its own graph, as TF 1.15's copy / copy_with_input_replacements /
graph_replace made them.

Each op of the view is copied in creation order (so an op's inputs are copied before it) with its type, attributes
and device: named dst_scope + its name after src_scope, made unique in the graph's current name scope as TF 1.15
did ("dense/MatMul" is copied as "dense/MatMul_1"), with no control dependencies or device scopes of the caller's
context added. An input produced inside the view is the copy's output; an input from outside is replacement_ts[t]
when given, otherwise the original tensor. Control inputs are re-created the same way (the copy of an op inside,
the op itself outside). The copies join the collections of their originals (a collection outside
tf.compat.v1.GraphKeys' names is renamed into dst_scope). Copies go into the view's own graph: copying into another
graph, and copying a while loop's cycle, raise a ValueError naming what was asked.
"""
import tensorflow as tf

from npu_bridge import tf_private
from npu_bridge.tf1compat.contrib.graph_editor import select, subgraph, util


class TransformerInfo:
    """What a copy made: `_transformed_ops` / `_transformed_ts` map each original op / tensor to its copy (TF
    1.15's attribute names, which ported helpers read); transformed() and original() look up either way."""

    def __init__(self, graph, scope, graph_, scope_, transformed_ops, transformed_ts):
        self._graph, self._scope = graph, scope
        self._graph_, self._scope_ = graph_, scope_
        self._transformed_ops = transformed_ops
        self._transformed_ts = transformed_ts

    def _lookup(self, mapping_of, element, missing_fn):
        if isinstance(element, (list, tuple)):
            return type(element)(self._lookup(mapping_of, item, missing_fn) for item in element)
        if isinstance(element, dict):
            return {key: self._lookup(mapping_of, value, missing_fn) for key, value in element.items()}
        if isinstance(element, tf.Operation):
            mapping = mapping_of(self._transformed_ops)
        elif isinstance(element, tf.Tensor):
            mapping = mapping_of(self._transformed_ts)
        else:
            raise TypeError(f"TransformerInfo: expected a tf.Tensor or a tf.Operation, got {type(element).__name__}")
        if element in mapping:
            return mapping[element]
        return None if missing_fn is None else missing_fn(element)

    def transformed(self, original, missing_fn=None):
        """The copy of `original` (an op, a tensor, or a list / tuple / dict of them); missing ones are None or
        missing_fn(element)."""
        return self._lookup(lambda mapping: mapping, original, missing_fn)

    def original(self, transformed, missing_fn=None):
        """The original of the copy `transformed` (same shapes of argument as transformed())."""
        return self._lookup(lambda mapping: {copy: source for source, copy in mapping.items()}, transformed,
                            missing_fn)


def _collections_by_element(graph):
    """For each op / tensor in one of `graph`'s collections, the collections' names."""
    found = {}
    for name in graph.get_all_collection_keys():
        for element in graph.get_collection(name):
            if isinstance(element, (tf.Operation, tf.Tensor)):
                found.setdefault(element, []).append(name)
    return found


class _Copier:
    """One copy's state: the view, the scopes, and what has been copied so far."""

    def __init__(self, view, replacement_ts, dst_scope, src_scope):
        self.view, self.graph = view, view.graph
        self.replacements = dict(replacement_ts)
        self.src_scope, self.dst_scope = src_scope, dst_scope
        self.members = set(view.ops)
        self.ops, self.ts = {}, {}
        self.collections = _collections_by_element(self.graph)
        self.predefined = util.predefined_collection_names()

    def new_name(self, name):
        if not name.startswith(self.src_scope):
            raise ValueError(f"graph_editor: {name} does not belong to the source scope {self.src_scope!r}")
        return self.dst_scope + name[len(self.src_scope):]

    def input_of_copy(self, t):
        if t in self.ts:
            return self.ts[t]
        if t.op in self.members:
            raise ValueError(f"graph_editor: {t.name} feeds an earlier op of the subgraph (a while loop's cycle); "
                             f"copying cycles is not provided")
        return self.replacements.get(t, t)

    def copy_op(self, op):
        with self.graph.control_dependencies(None), self.graph.device(None), \
                self.graph.colocate_with(None, ignore_existing=True), self.graph.device(op.device):
            copy = self.graph.create_op(op.type, [self.input_of_copy(t) for t in op.inputs],
                                        [t.dtype for t in op.outputs], name=self.new_name(op.name),
                                        attrs=dict(op.node_def.attr), op_def=op.op_def)
        self.ops[op] = copy
        self.join_collections(op, copy)
        for t, t_copy in zip(op.outputs, copy.outputs):
            self.ts[t] = t_copy
            self.join_collections(t, t_copy)

    def join_collections(self, element, copy):
        for name in self.collections.get(element, ()):
            self.graph.add_to_collection(name if name in self.predefined else self.new_name(name), copy)

    def connect_control_inputs(self):
        for op, copy in self.ops.items():
            controls = [self.ops.get(control, control) for control in op.control_inputs]
            if controls:
                util.add_control_inputs(copy, controls)


def copy_with_input_replacements(sgv, replacement_ts, dst_graph=None, dst_scope="", src_scope="",
                                 reuse_dst_scope=False):
    """Copy the subgraph view `sgv` (or what subgraph.make_view makes of it), its inputs in replacement_ts
    replaced (see the module); returns (the view of the copies, a TransformerInfo)."""
    view = subgraph.make_view(sgv)
    graph = view.graph if dst_graph is None else dst_graph
    if not isinstance(graph, tf.Graph):
        raise TypeError(f"copy_with_input_replacements: expected a tf.Graph, got {type(graph).__name__} (an empty "
                        f"subgraph has no graph)")
    if graph is not view.graph:
        raise ValueError("copy_with_input_replacements: copying into another graph is not provided; copy within "
                         "the subgraph's graph, or export it with tf.compat.v1.train.export_meta_graph")
    src_scope, dst_scope = util.scope_finalize(src_scope), util.scope_finalize(dst_scope)
    if dst_scope and not reuse_dst_scope:
        dst_scope = util.scope_finalize(graph.unique_name(dst_scope[:-1]))
    copier = _Copier(view, replacement_ts, dst_scope, src_scope)
    for op in sorted(view.ops, key=tf_private.op_id):
        copier.copy_op(op)
    copier.connect_control_inputs()
    info = TransformerInfo(view.graph, src_scope, graph, dst_scope, copier.ops, copier.ts)
    return subgraph.SubGraphView(list(copier.ops.values())), info


def copy(sgv, dst_graph=None, dst_scope="", src_scope="", reuse_dst_scope=False):
    """Copy the subgraph view `sgv` with its inputs kept (see the module)."""
    return copy_with_input_replacements(sgv, {}, dst_graph, dst_scope, src_scope, reuse_dst_scope)


def graph_replace(target_ts, replacement_ts, dst_scope="", src_scope="", reuse_dst_scope=False):
    """target_ts (a tensor or a structure of them) recomputed from replacement_ts ({original: new}): the ops
    between them copied with the replacements, the copies of the targets returned (a target the replacements do
    not reach is returned as it is)."""
    flat_targets = tf.nest.flatten(target_ts)
    graph = util.get_unique_graph(flat_targets, check_types=tf.Tensor)
    ops = select.get_walks_intersection_ops(list(replacement_ts), flat_targets,
                                            control_ios=util.ControlOutputs(graph))
    if not ops:
        raise ValueError("graph_replace: the targets and the replacements are not connected")
    _, info = copy_with_input_replacements(ops, replacement_ts, None, dst_scope, src_scope, reuse_dst_scope)
    return info.transformed(target_ts, missing_fn=lambda original: original)
