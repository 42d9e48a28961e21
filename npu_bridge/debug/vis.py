"""A comparison as a `.vis` graph for tb-graph-ascend, the TensorBoard plugin Ascend users view comparisons in.

The file is the plugin's JSON graph (reader: `server/app/repositories/graph_repo_vis.py`, `model/hierarchy.py`,
`service/graph_service_vis.py`): `NPU` is the emulated graph, `Bench` float32, each `{"root", "node"}`. Name
scopes become module nodes (node_type 0) and compared ops API nodes (node_type 1) under them, in execution
order; every NPU node is matched to the Bench node of the same name (`matched_node_link`: the Bench node's
ancestors, then itself). An NPU node's `data.precision_index` (0..1) is coloured by the `Colors` ranges:

- the error measure is msaccucmp's relative Euclidean distance of each output to float32, in units of the
  run's rounding tolerance `tol` (metrics.LOCAL_THRESHOLDS of its reduced dtype: 4 unit roundoffs);
- a ratio r = distance / tol up to 1 maps to 0.3 * r (light: rounding explains it), beyond that to
  0.3 + 0.15 * log10(r) (orange up to 100 tol, red beyond), capped at 0.99 (the plugin's filters take the
  ranges as [lo, hi), so 1 would never be found); an output holding Inf/NaN or an overflow (overflow.py) is
  0.99;
- a module takes the largest index below it.

`data.overflow_level` follows the overflow rule (overflow.py) as msprobe grades it: "critical" where an op
overflows from normal inputs, "high" where an abnormal input gives an abnormal output, "medium" where an abnormal
input gives a normal one. `stack_info` holds the user's line that created the op, `input_data`/`output_data`
each tensor's Max/Min/Mean/Norm (NPU: emulated values, Bench: float32) and, on the NPU side, its metrics, and
the first op breaking accuracy carries a `suggestions` entry saying so (its name is also the summary's).
"""
import json
import math

from npu_bridge.debug import dumpdata, metrics

ROOT = "Graph"
MODULE, API = 0, 1
LIGHT, ORANGE, TOP = 0.3, 0.6, 1.0
WORST = 0.99            # the highest index: the plugin's colour filters take ranges as [lo, hi)
UNMATCHED = "无匹配节点"      # the value the plugin's legend looks for to colour unmatched nodes
METRICS = ("CosineSimilarity", "MaxAbsoluteError", "RelativeEuclideanDistance", "MaxRelativeError",
           "MeanRelativeError", "LocalRelativeError", "LocalThreshold")
TOOLTIP = {
    "CosineSimilarity": "cosine similarity to float32 (msaccucmp); below 0.99 is a loss of accuracy",
    "MaxAbsoluteError": "largest |emulated - float32| (msaccucmp)",
    "RelativeEuclideanDistance": "||emulated - float32|| / ||float32|| (msaccucmp): what precision_index grades",
    "MaxRelativeError": "largest |emulated / float32 - 1| over elements with |float32| > 1e-10 (msaccucmp)",
    "MeanRelativeError": "mean |emulated / float32 - 1| over elements with |float32| > 1e-10 (msaccucmp)",
    "LocalRelativeError": "the op alone, fed float32 inputs: max |error| / max |float32 output|",
    "LocalThreshold": "4 unit roundoffs of the op's dtype: a local error above it is the op's own doing",
}


def precision_index(distance, tolerance):
    """The 0..1 colour index of a relative Euclidean distance (see the module docstring)."""
    if distance is None or distance == "" or not math.isfinite(float(distance)):
        return WORST
    ratio = float(distance) / tolerance
    if ratio <= 1:
        return round(LIGHT * ratio, 4)
    return round(min(WORST, LIGHT + 0.15 * math.log10(ratio)), 4)


def colors(tolerance, dtype):
    """The legend: each colour's index range and what it means for this run."""
    return {
        "#FFFCF3": {"value": [0, LIGHT], "description": (
            f"every output within {tolerance:.3g} (4 {dtype} unit roundoffs) of float32 in relative Euclidean "
            "distance: rounding explains it")},
        "#FFDC7F": {"value": [LIGHT, ORANGE], "description": (
            f"an output 1 to 100 times that far from float32 ({tolerance:.3g} to {100 * tolerance:.3g}): "
            "error grows here")},
        "#FF704D": {"value": [ORANGE, TOP], "description": (
            f"an output more than {100 * tolerance:.3g} from float32, or Inf/NaN: accuracy is lost here or above")},
        "#C7C7C7": {"value": UNMATCHED, "description": "no float32 counterpart"},
    }


def _json_number(value):
    """Non-finite floats as the strings the plugin reads ("inf", "-inf", "Nan"): JSON itself has none."""
    if isinstance(value, float) and not math.isfinite(value):
        return "Nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _tensor(row, side):
    stats = row[f"stats_{side}"]
    entry = {"dtype": dumpdata.numpy_name(row[f"DataType_{side}"]), "shape": json.loads(row["Shape"]),
             **{key: _json_number(value) for key, value in stats.items()}}
    if side == "npu":
        truth = row["stats_truth"]
        for key in ("Max", "Min", "Mean", "Norm"):       # what the plugin's "update precision" menu reads
            entry[f"{key}RelativeErr"] = _relative(stats[key], truth[key])
        entry.update({key: _json_number(row[key]) for key in METRICS if row.get(key, "") != ""})
        entry["OverFlow"] = row["OverFlow"]
    return entry


def _relative(value, reference):
    if not (math.isfinite(value) and math.isfinite(reference)):
        return "Nan" if math.isnan(value) or math.isnan(reference) else "inf"
    if reference == 0:
        return "0.0%" if value == 0 else "inf"
    return f"{abs(value - reference) / abs(reference) * 100:.4f}%"


def _overflow_level(rows, abnormal_inputs):
    if any(row["overflow_origin"] or row["LocalOverFlow"] == "YES" for row in rows):
        return "critical"
    if any(row["OverFlow"] == "YES" for row in rows):
        return "high" if abnormal_inputs else "critical"
    return "medium" if abnormal_inputs else None


class _Graph:
    """One side's nodes: modules from name scopes, API nodes for ops, in first-seen order."""

    def __init__(self):
        self.nodes = {ROOT: {"id": ROOT, "node_type": MODULE, "upnode": None, "subnodes": [], "data": {},
                             "input_data": {}, "output_data": {}, "matched_node_link": [], "stack_info": [],
                             "suggestions": {}}}

    def _node(self, node_id, node_type, upnode):
        node = self.nodes.get(node_id)
        if node is None:
            node = self.nodes[node_id] = {"id": node_id, "node_type": node_type, "upnode": upnode, "subnodes": [],
                                          "data": {}, "input_data": {}, "output_data": {},
                                          "matched_node_link": [], "stack_info": [], "suggestions": {}}
            self.nodes[upnode]["subnodes"].append(node_id)
        return node

    def add_op(self, op_name, module_names):
        """The API node of `op_name` under the module nodes of its scopes (`module_names`: scope -> node id)."""
        parts = op_name.split("/")
        upnode = ROOT
        for depth in range(1, len(parts)):
            scope = "/".join(parts[:depth])
            upnode = self._node(module_names[scope], MODULE, upnode)["id"]
        return self._node(op_name, API, upnode)

    def ancestors(self, node_id):
        chain = []
        while node_id is not None:
            chain.append(node_id)
            node_id = self.nodes[node_id]["upnode"]
        return list(reversed(chain))


def _module_names(op_names):
    """scope -> module node id: the scope itself, or with a trailing "/" where an op has that very name."""
    ops = set(op_names)
    scopes = {"/".join(name.split("/")[:depth]) for name in op_names for depth in range(1, len(name.split("/")))}
    return {scope: scope + "/" if scope in ops else scope for scope in scopes}


def build(comparison):
    """The `.vis` document (a dict) of one StepComparison."""
    rows_by_op = {}
    for row in comparison.rows:
        rows_by_op.setdefault(row["NPUDump"], []).append(row)
    by_tensor = {row["tensor"]: row for row in comparison.rows}
    reduced = "bfloat16" if any(row["DataType_npu"] == "DT_BF16" for row in comparison.rows) else "float16"
    tolerance = metrics.LOCAL_THRESHOLDS[reduced]
    culprit = comparison.culprit
    modules = _module_names(list(rows_by_op))
    npu, bench = _Graph(), _Graph()
    for op_name, rows in rows_by_op.items():
        node, twin = npu.add_op(op_name, modules), bench.add_op(op_name, modules)
        producers = [by_tensor[name] for name in rows[0]["inputs"] if name in by_tensor]
        for index, producer in enumerate(producers):
            node["input_data"][f"{op_name}.input.{index}"] = _tensor(producer, "npu")
            twin["input_data"][f"{op_name}.input.{index}"] = _tensor(producer, "truth")
        for row in rows:
            name = f"{op_name}.output.{row['tensor'].rsplit(':', 1)[-1]}"
            node["output_data"][name] = _tensor(row, "npu")
            twin["output_data"][name] = _tensor(row, "truth")
        node["data"]["precision_index"] = max(
            WORST if row["OverFlow"] == "YES" else precision_index(row["RelativeEuclideanDistance"], tolerance)
            for row in rows)
        level = _overflow_level(rows, any(p["OverFlow"] == "YES" for p in producers))
        if level:
            node["data"]["overflow_level"] = level
        lines = [row["SourceLine"] for row in rows[:1] if row["SourceLine"]]
        node["stack_info"] = twin["stack_info"] = lines
        if culprit is not None and culprit["NPUDump"] == op_name:
            node["suggestions"]["npu_bridge"] = _culprit_text(culprit)
    _grade_modules(npu)
    for node_id, node in npu.nodes.items():
        node["matched_node_link"] = bench.ancestors(node_id)
        bench.nodes[node_id]["matched_node_link"] = npu.ancestors(node_id)
    return {"NPU": {"root": ROOT, "node": npu.nodes}, "Bench": {"root": ROOT, "node": bench.nodes},
            "ToolTip": TOOLTIP, "Colors": colors(tolerance, reduced), "OverflowCheck": True,
            "task": "tensor", "npu_bridge": {"step": comparison.step, "fetches": comparison.fetches,
                                             "first_op_breaking_accuracy": culprit["NPUDump"] if culprit else None}}


def _culprit_text(row):
    if row["LocalOverFlow"] == "YES":
        why = "it overflows from finite float32 inputs"
    elif row["overflow_origin"]:
        why = "it overflows in the emulated step though none of its inputs does"
    else:
        why = (f"alone on float32 inputs it adds a relative error of {float(row['LocalRelativeError']):.3g} "
               f"(threshold {float(row['LocalThreshold']):.3g} for {dumpdata.numpy_name(row['DataType_npu'])})")
    return f"first op breaking accuracy in step: {why}; created at {row['SourceLine'] or 'an unknown line'}"


def _grade_modules(graph):
    """Each module's precision_index and overflow level: the worst below it."""
    order = {"medium": 1, "high": 2, "critical": 3}

    def grade(node_id):
        node = graph.nodes[node_id]
        if node["node_type"] == API:
            return node["data"].get("precision_index", 0.0), node["data"].get("overflow_level")
        grades = [grade(child) for child in node["subnodes"]]
        index = max((g[0] for g in grades), default=0.0)
        level = max((g[1] for g in grades if g[1]), key=order.get, default=None)
        node["data"]["precision_index"] = index
        if level:
            node["data"]["overflow_level"] = level
        return index, level

    grade(ROOT)


def write(comparison, path):
    """Write the `.vis` of `comparison` to `path`; returns the path."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(build(comparison), handle, ensure_ascii=False, allow_nan=False)
    return path
