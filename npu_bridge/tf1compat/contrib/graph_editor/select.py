"""graph_editor.select: TF 1.15's selections of ops and tensors (by filter, by regular expression, by walking the
graph forward from seeds or backward from them).

Regular expressions are matched with re.search against op names (a tensor matches by its op's name), as TF 1.15
did. The walks visit the graph wave by wave and return the seeds first, then each wave's new ops in the order
they were reached; stop_at_ts tensors are not crossed, within_ops / within_ops_fn bound the walk (the seeds are
kept to within_ops too).
"""
import re

import tensorflow as tf

from npu_bridge.tf1compat.contrib.graph_editor import util


def can_be_regex(obj):
    """Whether `obj` is a string or a compiled regular expression."""
    return isinstance(obj, (str, re.Pattern))


def make_regex(obj):
    """`obj` as a compiled regular expression."""
    if not can_be_regex(obj):
        raise ValueError(f"graph_editor: expected a string or a regex, got {type(obj).__name__}: {obj!r}")
    return obj if isinstance(obj, re.Pattern) else re.compile(obj)


def inputs_of(ops):
    """The tensors `ops` consume, each once, in order of first use."""
    ts = []
    for op in ops:
        util.concatenate_unique(ts, op.inputs)
    return ts


def outputs_of(ops):
    """The tensors `ops` produce, in order."""
    return [t for op in ops for t in op.outputs]


def filter_ts(ops, positive_filter):
    """The tensors that are inputs or outputs of `ops` (inputs first), kept where positive_filter(t) (all when it
    is True)."""
    ops = util.make_list_of_op(ops)
    ts = util.concatenate_unique(inputs_of(ops), outputs_of(ops))
    return ts if positive_filter is True else [t for t in ts if positive_filter(t)]


def filter_ts_from_regex(ops, regex):
    """The inputs and outputs of `ops` whose op name the regex finds."""
    regex = make_regex(regex)
    return filter_ts(util.make_list_of_op(ops), lambda t: regex.search(t.op.name))


def filter_ops(ops, positive_filter):
    """`ops` kept where positive_filter(op) (all when it is True)."""
    ops = util.make_list_of_op(ops)
    return ops if positive_filter is True else [op for op in ops if positive_filter(op)]


def filter_ops_from_regex(ops, regex):
    """The ops of `ops` (or of a graph) whose name the regex finds."""
    regex = make_regex(regex)
    return filter_ops(ops, lambda op: regex.search(op.name))


def select_ops(*args, **kwargs):
    """The ops named by `args`: regular expressions (searched in kwargs['graph'], which regexes require) and
    ops or lists of ops (tensors are ignored). kwargs: graph, positive_filter, restrict_ops_regex (only the regexes
    starting with "(?#ops)" count)."""
    graph = kwargs.pop("graph", None)
    positive_filter = kwargs.pop("positive_filter", None)
    restrict_ops_regex = kwargs.pop("restrict_ops_regex", False)
    kwargs.pop("restrict_ts_regex", None)
    if kwargs:
        raise ValueError(f"select_ops: unknown keyword arguments {sorted(kwargs)}")
    if graph is not None and not isinstance(graph, tf.Graph):
        raise TypeError(f"select_ops: graph must be a tf.Graph, got {type(graph).__name__}")
    ops = []
    for arg in args:
        if can_be_regex(arg):
            if graph is None:
                raise ValueError("select_ops: use the keyword argument 'graph' to select with a regex")
            regex = make_regex(arg)
            if regex.pattern.startswith("(?#ts)") or (restrict_ops_regex and not regex.pattern.startswith("(?#ops)")):
                continue
            found = filter_ops_from_regex(graph, regex)
        else:
            found = util.make_list_of_op(arg, ignore_ts=True)
        util.concatenate_unique(ops, [op for op in found if positive_filter is None or positive_filter(op)])
    return ops


def select_ts(*args, **kwargs):
    """The tensors named by `args`: regular expressions (searched in kwargs['graph']) and tensors or lists of
    them (ops are ignored). kwargs: graph, positive_filter, restrict_ts_regex."""
    graph = kwargs.pop("graph", None)
    positive_filter = kwargs.pop("positive_filter", None)
    restrict_ts_regex = kwargs.pop("restrict_ts_regex", False)
    kwargs.pop("restrict_ops_regex", None)
    if kwargs:
        raise ValueError(f"select_ts: unknown keyword arguments {sorted(kwargs)}")
    ts = []
    for arg in args:
        if can_be_regex(arg):
            if graph is None:
                raise ValueError("select_ts: use the keyword argument 'graph' to select with a regex")
            regex = make_regex(arg)
            if regex.pattern.startswith("(?#ops)") or (restrict_ts_regex and not regex.pattern.startswith("(?#ts)")):
                continue
            found = [t for t in util.make_list_of_t(graph) if regex.search(t.name)]
        else:
            found = util.make_list_of_t(arg, ignore_ops=True)
        util.concatenate_unique(ts, [t for t in found if positive_filter is None or positive_filter(t)])
    return ts


def _seeds(seed_ops, ops_of_tensors):
    if not util.is_iterable(seed_ops):
        seed_ops = [seed_ops]
    seed_ops = list(seed_ops)
    if seed_ops and isinstance(seed_ops[0], tf.Tensor):
        return ops_of_tensors(seed_ops)
    return util.make_list_of_op(seed_ops, allow_graph=False)


def _walk(seeds, inclusive, within_ops, within_ops_fn, neighbours):
    """Waves of neighbours(op) from the seeds, bounded by within_ops / within_ops_fn."""
    within = None if within_ops is None else set(util.make_list_of_op(within_ops, allow_graph=False))
    if within:
        seeds = [op for op in seeds if op in within]

    def is_within(op):
        return (within is None or op in within) and (within_ops_fn is None or within_ops_fn(op))

    result, reached = list(seeds), set(seeds)
    wave = list(seeds)
    while wave:
        new_wave = []
        for op in wave:
            for neighbour in neighbours(op):
                if neighbour not in reached and is_within(neighbour):
                    reached.add(neighbour)
                    new_wave.append(neighbour)
        result += new_wave
        wave = new_wave
    if not inclusive:
        seeds = set(seeds)
        result = [op for op in result if op not in seeds]
    return result


def get_backward_walk_ops(seed_ops, inclusive=True, within_ops=None, within_ops_fn=None, stop_at_ts=(),
                          control_inputs=False):
    """The ops reached walking backward (to the ops producing the inputs) from the seeds (ops, or tensors: their
    producers); control_inputs also walks control edges."""
    seeds = _seeds(seed_ops, util.get_generating_ops)
    stop = set(util.make_list_of_t(stop_at_ts))

    def producers(op):
        found = [t.op for t in op.inputs if t not in stop]
        return found + list(op.control_inputs) if control_inputs else found

    return _walk(seeds, inclusive, within_ops, within_ops_fn, producers)


def get_forward_walk_ops(seed_ops, inclusive=True, within_ops=None, within_ops_fn=None, stop_at_ts=(),
                         control_outputs=None):
    """The ops reached walking forward (to the consumers of the outputs) from the seeds (ops, or tensors: their
    consumers); control_outputs (a util.ControlOutputs) also walks control edges."""
    seeds = _seeds(seed_ops, util.get_consuming_ops)
    stop = set(util.make_list_of_t(stop_at_ts))

    def consumers(op):
        found = [consumer for t in op.outputs if t not in stop for consumer in t.consumers()]
        return found + list(control_outputs.get(op)) if control_outputs is not None else found

    return _walk(seeds, inclusive, within_ops, within_ops_fn, consumers)


def get_walks_intersection_ops(forward_seed_ops, backward_seed_ops, forward_inclusive=True,
                               backward_inclusive=True, within_ops=None, within_ops_fn=None, control_inputs=False,
                               control_outputs=None, control_ios=None):
    """The ops both on the forward walk from forward_seed_ops and on the backward walk from backward_seed_ops
    (control_ios, a util.ControlOutputs, walks control edges both ways)."""
    if control_ios is not None:
        control_inputs, control_outputs = True, control_ios
    forward = get_forward_walk_ops(forward_seed_ops, inclusive=forward_inclusive, within_ops=within_ops,
                                   within_ops_fn=within_ops_fn, control_outputs=control_outputs)
    backward = set(get_backward_walk_ops(backward_seed_ops, inclusive=backward_inclusive, within_ops=within_ops,
                                         within_ops_fn=within_ops_fn, control_inputs=control_inputs))
    return [op for op in forward if op in backward]


def get_walks_union_ops(forward_seed_ops, backward_seed_ops, forward_inclusive=True, backward_inclusive=True,
                        within_ops=None, within_ops_fn=None, control_inputs=False, control_outputs=None,
                        control_ios=None):
    """The ops on the forward walk from forward_seed_ops or on the backward walk from backward_seed_ops."""
    if control_ios is not None:
        control_inputs, control_outputs = True, control_ios
    forward = get_forward_walk_ops(forward_seed_ops, inclusive=forward_inclusive, within_ops=within_ops,
                                   within_ops_fn=within_ops_fn, control_outputs=control_outputs)
    backward = get_backward_walk_ops(backward_seed_ops, inclusive=backward_inclusive, within_ops=within_ops,
                                     within_ops_fn=within_ops_fn, control_inputs=control_inputs)
    return util.concatenate_unique(forward, backward)
