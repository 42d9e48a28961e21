"""Which user ops a step runs, in execution order, and the inner tensors holding their inputs and outputs.

A step of a plan runs the ops its fetches and targets need, stopping at fed tensors. Their order is the inner
graph's: TensorFlow imports a GraphDef in topological order and the runtime only appends to it, so the order of
`get_operations()` is a topological order, the proxy used here for the NPU's execution order.

Values are read where the NPU holds them: a user tensor the pass reduced lives where the report's tensor_map
says (its CastToFp16 when the op was computed in float32 between casts), and an input is what the op reads,
except that an op computed in float32 between casts reads the reduced tensor before the pass's widening Cast,
as the NPU does. Not dumped: graph sources with no inputs (Const, Placeholder, variables: the NPU runs no task
for them) and a ref variable's `read` Identity; Casts the pass added (the dump names the user's ops; overflow
detection adds the narrowing ones, see plan_ops); ops inside control-flow contexts (their tensors cannot be
fetched from outside the loop or branch); tensors of non-numeric dtypes; a ref variable as the input of the op
that updates it (reading it there races with the update, and fails before the variable is initialized).
"""
from dataclasses import dataclass

from npu_bridge import tf_private
from npu_bridge.core.contract import CLAMP_OPS, SATURATION_SUFFIX, is_clamp, is_pass_node
from npu_bridge.debug import dumpdata


@dataclass(frozen=True)
class DumpTensor:
    index: int          # input or output index of the op
    inner: str          # inner tensor name to fetch
    data_format: str    # "NHWC" / "NCHW" for 4-D tensors of ops with data_format, else "ND"


@dataclass(frozen=True)
class DumpOp:
    name: str
    tf_type: str
    ir_type: str
    task_id: int                 # position in execution order
    inputs: tuple = ()
    outputs: tuple = ()
    user_op: object = None       # the user's tf.Operation (its traceback names the creating line)

    @property
    def file_type(self):
        """The op type in dump file names: the NPU's IR type when the report knows it."""
        return self.ir_type or self.tf_type


def plan_ops(emulation, plan, layers=(), casts=False):
    """The DumpOps a step of `plan` runs, in execution order (`layers`: only these op names when given).

    `casts`: also the Casts the pass added that narrow a float32 tensor to the reduced dtype, where a value
    beyond float16's range overflows on the NPU (its Cast task). The Casts that only emulate an op computed in
    float32 between casts are left out: that op's own output is where its overflow shows.
    """
    program = plan.program
    inner_graph, user_graph = program.graph, emulation.graph
    report = program.result.report
    tensor_map = program.result.tensor_map
    needed = _needed_ops(plan)
    wanted = set(layers)
    ops = []
    for op in inner_graph.get_operations():
        if op.name not in needed or (wanted and op.name not in wanted):
            continue
        if is_pass_node(op.name):
            if casts and _narrowing_cast(op, user_graph, report):
                ops.append(_cast_op(op, user_graph, len(ops)))
            continue
        user_op = _user_op(user_graph, op.name)
        if user_op is None or not user_op.inputs or tf_private.control_flow_context(user_op) is not None \
                or _reads_ref_variable(user_op):
            continue
        record = _record(report, op.name)
        emulated = record is not None and record.emulated
        data_format = _data_format(user_op)
        outputs = []
        for index, tensor in enumerate(user_op.outputs):
            ref = tensor_map.get(tensor.name)
            inner = _inner(inner_graph, ref.name if ref is not None else tensor.name)
            if inner is not None:
                outputs.append(DumpTensor(index, inner.name, _format(inner, data_format)))
        inputs = []
        for index, tensor in enumerate(op.inputs):
            if emulated and is_pass_node(tensor.op.name) and tensor.op.type == "Cast":
                tensor = tensor.op.inputs[0]
            if not tf_private.is_ref_dtype(tensor.dtype) and _dumpable(inner_graph, tensor):
                inputs.append(DumpTensor(index, tensor.name, _format(tensor, data_format)))
        ops.append(DumpOp(op.name, user_op.type, record.ir_type if record is not None else "", len(ops),
                          tuple(inputs), tuple(outputs), user_op))
    return ops


def _narrowing_cast(op, user_graph, report):
    """A pass Cast from float32 to float16/bfloat16 whose input is not the output of an emulated op."""
    if op.type != "Cast" or op.outputs[0].dtype.name not in ("float16", "bfloat16") \
            or tf_private.control_flow_context(op) is not None:
        return False
    source = _before_clamp(op.inputs[0])
    if source.dtype.name != "float32" or is_pass_node(source.op.name):
        return False
    record = _record(report, source.op.name)
    return not (record is not None and record.emulated)


def _before_clamp(tensor):
    """The value a saturation-mode clamp (`<src>-<port>-SatFp16-NpuBridge`, for float16 after its
    `-SatFp16Upper-` node; see core.precision.saturation) reads, or `tensor` itself when no clamp produced it."""
    while tensor.op.type in CLAMP_OPS and is_clamp(tensor.op.name):
        tensor = tensor.op.inputs[0]
    return tensor


def _cast_op(op, user_graph, task_id):
    """A pass Cast as a DumpOp: its input is the float32 value before any saturation clamp, its output what the
    NPU's Cast yields (after the clamp under saturation mode); its source line is that of the user op whose
    output it narrows."""
    source, result = _before_clamp(op.inputs[0]), op.outputs[0]
    try:
        result = op.graph.get_tensor_by_name(f"{op.name}-0{SATURATION_SUFFIX}:0")
    except KeyError:
        pass
    return DumpOp(op.name, "Cast", "Cast", task_id, (DumpTensor(0, source.name, "ND"),),
                  (DumpTensor(0, result.name, "ND"),), _user_op(user_graph, source.op.name))


def _needed_ops(plan):
    """Names of the inner ops one execution of `plan` runs: ancestors of its fetches and targets, up to feeds."""
    fed = set(plan.feed_names)
    inner_graph = plan.program.graph
    stack = [inner_graph.get_tensor_by_name(name).op for name in plan.fetch_names] + \
        [inner_graph.get_operation_by_name(name) for name in plan.target_names]
    seen = set()
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        stack.extend(tensor.op for tensor in op.inputs if tensor.name not in fed)
        stack.extend(op.control_inputs)
    return seen


def _reads_ref_variable(op):
    """A ref variable's `read` Identity: the NPU runs no task for it, and its fetched value would share the
    variable's buffer, showing the value after the step's update."""
    return op.type in ("Identity", "Snapshot") and tf_private.is_ref_dtype(op.inputs[0].dtype)


def _user_op(user_graph, name):
    try:
        return user_graph.get_operation_by_name(name)
    except (KeyError, ValueError):
        return None


def _record(report, name):
    try:
        return report.by_name(name)
    except KeyError:
        return None


def _inner(inner_graph, name):
    try:
        tensor = inner_graph.get_tensor_by_name(name)
    except (KeyError, ValueError):
        return None
    return tensor if _dumpable(inner_graph, tensor) else None


def _dumpable(inner_graph, tensor):
    dtype = tensor.dtype.base_dtype
    if dtype.name in ("string", "resource", "variant"):
        return False
    return dumpdata.dumpable(dtype.as_numpy_dtype) and inner_graph.is_fetchable(tensor)


def _data_format(user_op):
    try:
        value = user_op.get_attr("data_format")
    except ValueError:
        return "ND"
    value = value.decode() if isinstance(value, bytes) else str(value)
    return value if value in ("NHWC", "NCHW") else "ND"


def _format(tensor, data_format):
    return data_format if data_format != "ND" and tensor.shape.rank == 4 else "ND"
