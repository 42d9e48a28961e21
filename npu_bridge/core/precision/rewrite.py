"""rewrite(): the precision pass as one pure function over a GraphDef.

The pass works on a private copy of the caller's GraphDef, so a failure anywhere leaves the caller's graph
exactly as it was; every failure surfaces as PrecisionPassError naming the node and the rule involved.
"""
from collections.abc import Iterable
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from tensorflow.core.framework import graph_pb2
from tensorflow.python.platform import tf_logging

from npu_bridge.core.contract import PrecisionMode
from npu_bridge.core.errors import PrecisionPassError
from npu_bridge.core.gcpause import collector_paused
from npu_bridge.core.graph import Graph
from npu_bridge.core.precision.casts import CastBuilder, CastPlanError
from npu_bridge.core.precision.decide import CALL, Decider, GraphStructureError
from npu_bridge.core.precision.report import OpRecord, Report, RewriteResult
from npu_bridge.core.precision.rules import FOLLOWED, OpFacts, RuleViolation
from npu_bridge.core.precision.saturation import saturate
from npu_bridge.core.precision.typeattrs import (
    DTYPES_BY_NAME, FLOAT_DTYPES, MalformedNodeError, OpTable, UnknownOpError,
)
from npu_bridge.core.soc import saturates

if TYPE_CHECKING:
    from npu_bridge.core.customize_dtypes import CustomizeDtypes
    from npu_bridge.core.mixlist import PrecisionLists
    from npu_bridge.core.options import NpuOptions


# Shape and ShapeN of a tensor whose shape is static (the NPU compiles static shapes unless told otherwise) are
# folded to constants by the graph engine before the pass that turns a constant size input into an attribute, so
# Conv3DBackpropFilterV2 fed by ShapeN, as tf.nn.conv3d's gradient is, becomes Conv3DBackpropFilterD.
_FOLDED_SHAPES = frozenset({"Shape", "ShapeN"})


class PassContext:
    """Everything the pass knows about one graph and one configuration, with per-op-type caches."""

    def __init__(self, graph_def, options, lists, customize, saturation=False, paired_relus=None):
        from npu_bridge.core import tf_to_ir

        self._tf_to_ir = tf_to_ir
        self.graph = Graph(graph_def)
        self.optable = OpTable(graph_def)
        self.lists = lists
        self.customize = customize
        self.mode = options.mode
        self.mode_name = options.mode_name
        self.reduced = DTYPES_BY_NAME[options.reduced_dtype]
        # mix_compile_mode: ops in without_npu_compile_scope stay in TensorFlow on the host.
        self.host_ops = bool(options.raw.get("mix_compile_mode"))
        self.saturation = saturation     # a float16 overflow gives +-65504 (saturation.py), not inf
        self.folded: frozenset[str] = frozenset()  # nodes the graph engine folds from constants (the Decider's run)
        self.current: str | None = None
        self._facts = {}
        self._facts_by_op = {}
        self._by_axis = {}
        self._paired_relus = paired_relus   # None: found in this graph when first needed

    def signature(self, node):
        self.current = node.name
        return self.optable.signature(node)

    def ir_candidates(self, node):
        """IR types the node may become; scans for a Const axis input only for ops whose mapping depends on it."""
        op = node.op
        by_axis = self._by_axis.get(op)
        if by_axis is None:
            by_axis = self._by_axis[op] = (self._tf_to_ir.ir_candidates(op, False),
                                           self._tf_to_ir.ir_candidates(op, True))
        if op.startswith("FusedBatchNorm"):
            attrs = node.node_def.attr
            return self._tf_to_ir.ir_candidates(op, is_training="is_training" in attrs and attrs["is_training"].b)
        nodes = self.graph.nodes
        if op == "ReluGrad":
            features = nodes.get(node.inputs[1].node) if len(node.inputs) == 2 else None
            return self._tf_to_ir.ir_candidates(op, relu_pair=features is not None and features.op == "Relu")
        if op == "Relu":
            return self._tf_to_ir.ir_candidates(op, relu_pair=node.name in self._relus_with_gradient())
        if by_axis[0] == by_axis[1]:
            return by_axis[0]
        for source in node.inputs:
            producer = nodes.get(source.node)
            if producer is not None and (producer.op in _FOLDED_SHAPES or producer.op == "Const" and
                                         producer.node_def.attr["dtype"].type not in FLOAT_DTYPES):
                return by_axis[1]
        return by_axis[0]

    def _relus_with_gradient(self):
        """Names of the Relus a ReluGrad reads as its features (one scan, on the first Relu met)."""
        if self._paired_relus is None:
            self._paired_relus = {n.inputs[1].node for n in self.graph.order
                                  if n.op == "ReluGrad" and len(n.inputs) == 2}
        return self._paired_relus

    def op_facts(self, node):
        facts = self._facts_by_op.get(node.op)
        if facts is not None:
            return facts
        candidates = self.ir_candidates(node)
        facts = self._facts.get(candidates)
        if facts is None:
            ir_type = self._ir_type(candidates)
            listed = self.lists.list_of(ir_type)
            facts = OpFacts(ir_type, candidates, getattr(listed, "value", listed), self.lists.origin(ir_type),
                            self._tf_to_ir.is_cube(ir_type), self.lists.library)
            self._facts[candidates] = facts
            by_axis = self._by_axis[node.op]
            if by_axis[0] == by_axis[1] and not node.op.startswith("FusedBatchNorm") and \
                    node.op not in self._tf_to_ir.RELU_PAIR:
                self._facts_by_op[node.op] = facts      # the same for every node of this op type
        return facts

    def _ir_type(self, candidates):
        """The candidate the lists are read for: the first the library knows, or its other CANN form.

        Older CANN turns a constant-axis Sum into ReduceSumD, newer CANN keeps ReduceSum, so a mixlist written
        for real hardware names either: when the file moves only the other form, that is the one the user
        meant. Other alternatives are not swapped in: a mixlist naming MatMul does nothing on the real engine
        (TF MatMul becomes MatMulV2), and the mixlist loader already warns about it.
        """
        types = self.lists.library.types
        first = next((c for c in candidates if c in types), candidates[0])
        if not self.lists.edited(first):
            for other in (first + "D", first[:-1] if first.endswith("D") else None):
                if other in candidates and self.lists.edited(other):
                    return other
        return first

    def customize_rule(self, node, facts):
        if self.customize is None:
            return None
        return self.customize.rule_for(node.name, _customizable(node.op, facts.ir_candidates))


class PassRun(NamedTuple):
    """What one run of the pass over a private copy of a GraphDef produced, before it becomes a Report."""

    graph_def: graph_pb2.GraphDef       # the rewritten copy
    ctx: PassContext
    plans: dict                         # node name -> NodePlan
    facts: dict                         # node name -> OpFacts (nodes the lists decided)
    builder: CastBuilder                # originals, the Casts created and what each op caused
    tensor_map: dict                    # user tensor name -> TensorRef
    n_clamped: int
    warnings: list                      # the Decider's (customize_dtypes lines that pin less than they say)


def pass_inputs(options: "NpuOptions", lists: "PrecisionLists | None" = None,
                customize: "CustomizeDtypes | None" = None, saturation: bool | None = None
                ) -> "tuple[PrecisionLists, CustomizeDtypes | None, bool]":
    """(lists, customize, saturation) as rewrite() uses them: read from the options' files and the device's mode
    when not given; customize is None when no file applies (none named, or must_keep_origin_dtype)."""
    if lists is None:
        from npu_bridge.core.mixlist import build_precision_lists

        lists = build_precision_lists(options)
    if not options.customize_dtypes or options.mode is PrecisionMode.KEEP_ORIGIN:
        customize = None
    elif customize is None:
        from npu_bridge.core.customize_dtypes import load_customize_dtypes

        customize = load_customize_dtypes(options.customize_dtypes, lists.library)
    if saturation is None:
        saturation = saturates(options.soc)
    return lists, customize, saturation


def run_pass(graph_def: graph_pb2.GraphDef, options: "NpuOptions", lists: "PrecisionLists",
             customize: "CustomizeDtypes | None", saturation: bool,
             paired_relus: frozenset[str] | None = None) -> PassRun:
    """Run the pass's stages on a copy of `graph_def`; every failure is a PrecisionPassError naming the node.

    `paired_relus`: the names of the Relus a ReluGrad reads as features (the engine's ReluV2 / ReluGradV2
    fusion), when `graph_def` is part of a larger graph whose ReluGrads it may lack; None: found in `graph_def`.
    """
    work = graph_pb2.GraphDef()
    work.CopyFrom(graph_def)
    ctx: PassContext | None = None
    # The pass allocates a few small objects per node (see core.gcpause).
    with collector_paused():
        try:
            ctx = PassContext(work, options, lists, customize, saturation, paired_relus)
            decider = Decider(ctx)
            plans = decider.run()
            ctx.folded = decider.folded
            builder = CastBuilder(ctx, plans, decider.signatures, decider.changed)
            tensor_map = builder.apply()
            n_clamped = saturate(ctx.graph, builder, tensor_map, decider.folded) if saturation else 0
        except GraphStructureError as error:
            raise PrecisionPassError(error.node, "graph structure", str(error)) from None
        except CastPlanError as error:
            raise PrecisionPassError(error.node, "cast insertion", str(error)) from None
        except UnknownOpError as error:
            raise PrecisionPassError(_at(ctx), "op registry", f"op type '{error.args[0]}' is neither registered in "
                                                          "TensorFlow nor a function of the graph's library") from None
        except RuleViolation as error:
            raise PrecisionPassError(_at(ctx), error.rule, str(error)) from None
        except MalformedNodeError as error:
            raise PrecisionPassError(_at(ctx), "op definition", str(error)) from None
        except Exception as error:
            raise PrecisionPassError(_at(ctx), "internal", f"{type(error).__name__}: {error}") from error
    return PassRun(work, ctx, plans, decider.facts, builder, tensor_map, n_clamped, list(decider.warnings))


def _at(ctx: PassContext | None) -> str:
    """The node the pass was deciding when it failed, for the error ("?" before the first)."""
    return (ctx.current if ctx else None) or "?"


def rewrite(graph_def: graph_pb2.GraphDef, options: "NpuOptions", *, lists: "PrecisionLists | None" = None,
            customize: "CustomizeDtypes | None" = None, log: bool = True,
            saturation: bool | None = None) -> RewriteResult:
    """Apply the NPU precision rules of `options` to a copy of `graph_def`; see docs/DESIGN.md core.precision.

    `lists` and `customize` (the parsed modify_mixlist lists and customize_dtypes file) are read from the files
    `options` names when not given; a session passes the ones it read when it was created, so its files are read
    once and warned about once however often its graph is rewritten.

    `log=False` leaves the one-line summary to the caller (the runtime adds how the graph was built; the CLI
    prints it itself), so each rewrite is logged exactly once.

    `saturation`: float16 overflow gives +-65504 (True) or inf (False); None: the device's mode, i.e. the soc's
    default unless npu_plugin.set_device_sat_mode chose one (saturation.py).
    """
    lists, customize, saturation = pass_inputs(options, lists, customize, saturation)
    done = run_pass(graph_def, options, lists, customize, saturation)
    builder = done.builder
    warnings = [*done.warnings, *unmatched_names(customize, done.ctx.graph.nodes), *function_bodies(done),
                *builder.warnings]
    report = _report(options, done, saturation, warnings)
    if log:
        tf_logging.info(report.summary())
        for warning in report.warnings:
            tf_logging.warning("NpuOptimizer %s: %s", options.mode_name, warning)
    return RewriteResult(done.graph_def, report, MappingProxyType(done.tensor_map))


@lru_cache(maxsize=None)
def _customizable(op_type, candidates):
    """The IR types an OpType line may name for a TF op: not the TF op's own name when the engine renames it (a
    line for MatMul pins nothing on hardware, where TF MatMul runs as MatMulV2; the loader warns about it)."""
    from npu_bridge.core import tf_to_ir

    if op_type in tf_to_ir.renamed_tf_types():
        return tuple(c for c in candidates if c != op_type)
    return candidates


@lru_cache(maxsize=None)
def _plain_ir_type(op_type):
    """The IR type of an op the pass did not examine (report only)."""
    from npu_bridge.core import tf_to_ir

    return tf_to_ir.ir_candidates(op_type)[0]


def unmatched_names(customize: "CustomizeDtypes | None", names: Iterable[str]) -> list[str]:
    """customize_dtypes lines naming a node not among `names`: they pin nothing (silently, on the NPU).

    The first _MAX_UNMATCHED_WARNINGS each get a warning, the rest one summary: a file written for another model
    can name hundreds of thousands of nodes.
    """
    if customize is None:
        return []
    path = customize.path
    unmatched = [(name, rule) for name, rule in customize.by_name.items() if name not in names]
    warnings = [f"customize_dtypes [{path}] line {rule.line}: the graph has no op named '{name}', so the line pins "
                "nothing (the real adapter ignores it silently; check the name against the graph, e.g. "
                "tf.get_default_graph().get_operations())" for name, rule in unmatched[:_MAX_UNMATCHED_WARNINGS]]
    rest = unmatched[_MAX_UNMATCHED_WARNINGS:]
    if rest:
        first = ", ".join(f"line {rule.line} '{name}'" for name, rule in rest[:3])
        warnings.append(f"customize_dtypes [{path}]: {len(rest)} more lines name ops the graph does not have and pin "
                        f"nothing, as above: {first}{', ...' if len(rest) > 3 else ''}")
    return warnings


_MAX_UNMATCHED_WARNINGS = 20


def function_bodies(done: PassRun) -> list[str]:
    """One warning naming the functions the pass left as written (tf.function bodies, control flow v2), which the
    NPU compiles like any other ops: what they reduce there is not reduced here."""
    library = done.graph_def.library.function
    called: dict[str, str] = {}
    for node in done.builder.originals:
        if done.plans[node.name] is not CALL:
            continue
        names = [node.op] if node.op in {f.signature.name for f in library} else []
        for value in node.node_def.attr.values():
            names += [value.func.name] if value.HasField("func") else [f.name for f in value.list.func]
        for name in names:
            called.setdefault(name, node.name)
    if not called:
        return []
    sizes: dict[str, int] = {f.signature.name: len(f.node_def) for f in library}
    first, caller = next(iter(called.items()))
    more = f" and {len(called) - 1} more function(s) ({', '.join(list(called)[1:4])}...)" if len(called) > 1 else ""
    return [f"function '{first}' (called by op '{caller}'){more}, {sum(sizes.get(n, 0) for n in called)} ops in "
            "all, is left as written: the precision pass does not rewrite function bodies (tf.function, control "
            "flow v2), which the NPU compiles and reduces like any other ops. Build the graph with v1 control flow "
            "(tf.compat.v1.disable_control_flow_v2(), as npu-run does) and without tf.function to emulate them."]


def op_record(name: str, op: str, plan, facts: dict, casts: Iterable[str], notes: list[str]) -> OpRecord:
    """The report row of node `name` (of type `op`) decided by `plan`: `casts` names the Casts it caused, `notes`
    the sentences its reason adds (constants it reads that the reduced dtype destroys)."""
    found = facts.get(name) if plan.list_name != "-" else None
    reason = plan.reason
    if notes:
        reason = f"{reason}; {'; '.join(notes)}"
    if plan.followed:
        reason = reason.replace(FOLLOWED, plan.followed)
    return OpRecord(name, op, plan.ir_type or _plain_ir_type(op), plan.list_name, plan.decision, reason,
                    tuple(casts), plan.emulated, found.list_origin if found else "")


def _report(options: "NpuOptions", done: PassRun, saturation: bool, warnings: list[str]) -> Report:
    """The Report, with its per-op rows left to build until someone reads them.

    The row builder keeps the plans and each node's name and type, not the graph model, so a Report kept by
    the runtime does not hold the pass's working copy alive.
    """
    builder, plans, facts = done.builder, done.plans, done.facts
    nodes = [(node.name, node.op) for node in builder.originals]
    reduced = options.reduced_dtype
    n_reduced = sum(1 for name, _ in nodes if plans[name].decision == reduced)
    caused, notes = builder.caused, builder.notes()

    def rows():
        records = [op_record(name, op, plans[name], facts, caused.get(name, ()),
                             [note for _, note in notes.get(name, ())]) for name, op in nodes]
        return records, {name: plans[name].followed for name, _ in nodes if plans[name].followed}

    return Report(options.mode_name, options.soc, reduced, rows, len(nodes), n_reduced, len(builder.created),
                  tuple(warnings), overflow_mode="saturation" if saturation else "inf_nan",
                  n_clamped=done.n_clamped)
