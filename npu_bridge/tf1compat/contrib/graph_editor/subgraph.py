"""graph_editor.subgraph: SubGraphView, TF 1.15's view of some ops of one graph with the tensors at its boundary.

inputs are the tensors the ops consume that none of them produce (in order of first use), then the passthrough
tensors; outputs are the tensors the ops produce except those consumed only inside, then the passthroughs.
"""
from npu_bridge.tf1compat.contrib.graph_editor import select, util


def compute_boundary_ts(ops):
    """(inputs, outputs, inside tensors) of the ops, as the module describes."""
    ops = util.make_list_of_op(ops)
    input_ts, output_ts = select.inputs_of(ops), select.outputs_of(ops)
    produced, members = set(output_ts), set(ops)
    inside = [t for t in input_ts if t in produced]
    only_inside = {t for t in inside if not set(t.consumers()) - members}
    inside_set = set(inside)
    return ([t for t in input_ts if t not in inside_set], [t for t in output_ts if t not in only_inside], inside)


class SubGraphView:
    """Some ops of one graph (`ops`), their `inputs` and `outputs`, and `passthroughs` (tensors both input and
    output of the view without an op of it in between)."""

    def __init__(self, inside_ops=(), passthrough_ts=()):
        ops = util.make_list_of_op(inside_ops)
        passthrough_ts = util.make_list_of_t(passthrough_ts)
        self._graph = util.get_unique_graph(ops + passthrough_ts) if ops or passthrough_ts else None
        self._ops = ops
        inputs, outputs, inside = compute_boundary_ts(ops)
        boundary = set(inputs) | set(outputs) | set(inside)
        self._passthrough_ts = [t for t in passthrough_ts if t not in boundary]
        self._input_ts = inputs + self._passthrough_ts
        self._output_ts = outputs + self._passthrough_ts

    @property
    def graph(self):
        return self._graph

    @property
    def ops(self):
        return tuple(self._ops)

    @property
    def inputs(self):
        return tuple(self._input_ts)

    @property
    def outputs(self):
        return tuple(self._output_ts)

    @property
    def passthroughs(self):
        return tuple(self._passthrough_ts)

    def input_index(self, t):
        return self._input_ts.index(t)

    def output_index(self, t):
        return self._output_ts.index(t)

    def __bool__(self):
        return self._graph is not None

    def __len__(self):
        return len(self._ops)

    def __contains__(self, op):
        return op in self._ops

    def __str__(self):
        if not self:
            return "SubGraphView: empty"
        return (f"SubGraphView (graphid={id(self._graph)}):\n** ops[{len(self._ops)}]:\n"
                + "".join(f"  {op.name}\n" for op in self._ops)
                + f"** inputs[{len(self._input_ts)}]:\n" + "".join(f"  {t.name}\n" for t in self._input_ts)
                + f"** outputs[{len(self._output_ts)}]:\n" + "".join(f"  {t.name}\n" for t in self._output_ts))


def make_view(*args, **kwargs):
    """A SubGraphView of the ops and passthrough tensors `args` select (ops, tensors, lists of them, regexes
    searched in kwargs['graph'] for ops, or for tensors when they start with "(?#ts)"); a SubGraphView given alone
    is returned as it is."""
    graph = kwargs.get("graph")
    if len(args) == 1 and isinstance(args[0], SubGraphView):
        view = args[0]
    else:
        options = {key: value for key, value in kwargs.items() if key not in ("restrict_ops_regex",
                                                                              "restrict_ts_regex")}
        ops = select.select_ops(*args, restrict_ops_regex=False, **options)
        ts = select.select_ts(*args, restrict_ts_regex=True, **options)      # tensors: "(?#ts)" regexes only
        view = SubGraphView(ops, ts)
    if graph is not None and view.graph is not None and view.graph is not graph:
        raise ValueError("make_view: the selected ops belong to another graph than the 'graph' argument")
    return view


sgv = make_view
