"""Text output of npu-report: the op table, one op explained in full, and the differences between two modes.

Everything printed comes from the Report (OpRecord fields), the PrecisionLists that produced it (where a list
came from) and the two GraphDefs (producers of an op, the Casts it caused); nothing here decides precision.
"""
import textwrap

import tensorflow as tf

from npu_bridge.core.contract import MIXED_MODES, clamped_source
from npu_bridge.core.tf_to_ir import is_cube

COLUMNS = ("op", "TF type", "IR type", "list", "decision", "casts", "reason")
DEFAULT_WIDTH = 120                     # columns of the default view; --wide prints each row on one line
_COLUMN_CAPS = {0: 40, 1: 24, 2: 24}    # widest op name / type columns in the default view


def selected(record, report, args):
    """Whether a record passes the --list / --reduced-only / --all filters."""
    if args.lists and record.list not in args.lists:
        return False
    if args.reduced_only and record.decision != report.reduced_dtype:
        return False
    return args.all or record.decision != "unchanged"


def _graph_dtypes(graph_def):
    """{node name: the name of its first float type attribute's dtype} for nodes that have one."""
    floats = {tf.float32.as_datatype_enum: "float32", tf.float16.as_datatype_enum: "float16",
              tf.bfloat16.as_datatype_enum: "bfloat16"}
    found = {}
    for node in graph_def.node:
        for key in sorted(node.attr):
            dtype = floats.get(node.attr[key].type)
            if dtype is not None:
                found[node.name] = dtype
                break
    return found


def _format_rows(header, rows, width=None):
    """Aligned columns. Without `width` (--wide) each row is one greppable line, the last column (a reason) left
    ragged. With it (the default view) names longer than their column are shortened from the left and the reason
    goes on indented lines below its row, wrapped, so that every line fits `width`."""
    cells = [header, *rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header) - 1)]
    if width:
        widths = [min(w, _COLUMN_CAPS.get(i, w)) for i, w in enumerate(widths)]
    lines = []
    for index, row in enumerate(cells):
        lead = "  ".join(_shortened(cell, w).ljust(w) for cell, w in zip(row, widths))
        if not width:
            lines.append(f"{lead}  {row[-1]}")
        elif index == 0:
            lines.extend([lead.rstrip(), f"    {row[-1]}"])
        else:
            lines.append(lead.rstrip())
            lines.extend(textwrap.wrap(row[-1], width, initial_indent="    ", subsequent_indent="    "))
    return lines


def _shortened(cell, width):
    """The cell, or its end after "..." when longer than width (an op's own name is at the end of its path)."""
    return cell if len(cell) <= width else "..." + cell[len(cell) - width + 3:]


def run_once_ops(graph_def):
    """Names of ops that only compute variables' initial values (they run once, at initialization): nodes in an
    "Initializer" name scope, and nodes whose every consumer is one of those or a variable's initializing
    "<variable>/Assign". The default table hides them: they are not what a training step computes."""
    consumers = {}
    for node in graph_def.node:
        for tensor in node.input:
            consumers.setdefault(tensor.lstrip("^").split(":")[0], []).append(node.name)
    found = {node.name for node in graph_def.node if "Initializer" in node.name.split("/")[:-1] or
             (node.op in ("Assign", "AssignVariableOp") and node.input and
              node.name == node.input[0].split(":")[0] + "/Assign")}
    grew = True
    while grew:
        grew = False
        for node in graph_def.node:
            users = consumers.get(node.name)
            if node.name not in found and users and all(user in found for user in users):
                found.add(node.name)
                grew = True
    return found


def _decision_cell(record):
    return record.decision + ("*" if record.emulated else "")


def _footnote(records, out):
    if any(r.emulated for r in records):
        print("* computed in float32 between casts that round to the decided dtype", file=out)


def print_table(report, args, out, graph_def=None):
    rows = [r for r in report.records if selected(r, report, args)]
    hidden = 0
    if graph_def is not None and not args.all:
        run_once = run_once_ops(graph_def)
        hidden = sum(1 for r in rows if r.name in run_once)
        rows = [r for r in rows if r.name not in run_once]
    note = f" ({hidden} run-once initializer ops hidden; --all shows them)" if hidden else ""
    print(f"{len(rows)} of {report.n_ops} ops shown{note}", file=out)
    if not rows:
        return
    cells = [(r.name, r.tf_type, r.ir_type, r.list, _decision_cell(r), str(len(r.casts)), r.reason) for r in rows]
    print("\n".join(_format_rows(COLUMNS, cells, None if args.wide else DEFAULT_WIDTH)), file=out)
    _footnote(rows, out)


def _list_field(record, options, lists):
    if record.list not in ("white", "black", "gray"):
        return "- (not examined by the list rules)"
    text = f"{record.list} (from {lists.origin(record.ir_type)})"
    if options.mode not in MIXED_MODES:
        text += f"; lists only decide under mixed_float16/mixed_bfloat16, not {options.mode_name}"
    return text


def _dtype(attr_value):
    return tf.as_dtype(attr_value.type).name


def print_explanation(name, options, lists, result, graph_def, out, other=None):
    """Everything known about one op: IR type, list and its origin, decision, producers, casts, emulation.

    other: the --compare-mode Report, whose decision for the op is shown last.
    """
    report = result.report
    record = report.by_name(name)
    library = lists.library
    source = "built-in operator library" if library.builtin else f"ASCEND_OPP_PATH ({library.source})"
    fields = [("TF type", record.tf_type),
              ("IR type", record.ir_type + (" (cube op)" if is_cube(record.ir_type) else " (vector op)")),
              ("library", f"{source}, soc {library.soc}"),
              ("list", _list_field(record, options, lists)),
              ("decision", record.decision),
              ("reason", record.reason)]
    node = next(n for n in graph_def.node if n.name == name)
    for tensor in node.input:
        if not tensor.startswith("^"):
            producer = report.by_name(tensor.split(":")[0])
            fields.append(("producer", f"{tensor} <- {producer.tf_type} [{producer.list}] {producer.decision}"))
    added = {n.name: n for n in result.graph_def.node if n.name in record.casts}
    for cast in record.casts:
        attrs = added[cast].attr
        fields.append(("cast", f"{cast}: reads {clamped_source(added[cast].input[0])}, {_dtype(attrs['SrcT'])} -> "
                               f"{_dtype(attrs['DstT'])}"))
    if not record.casts:
        fields.append(("cast", "none"))
    fields.append(("emulated", "yes: the CPU computes it in float32 between the casts above" if record.emulated
                   else "no"))
    if other is not None:
        theirs = other.by_name(name)
        fields.append(("compare", f"under {other.mode_name}: {theirs.decision}. {theirs.reason}"))
    print(f"op {name}", file=out)
    print("\n".join(f"  {label:<9} {text}" for label, text in fields), file=out)


def print_comparison(report, other, note, args, graph_def, out):
    """Ops whose dtype or way of computing differs between the main run and the --compare-mode run (filters apply
    to either). "unchanged" is the op's graph dtype, so a float32 op left alone by one mode and kept float32 by the
    other is not a difference."""
    others = {r.name: r for r in other.records}
    graph_dtypes = _graph_dtypes(graph_def)

    def computed(record):
        dtype = graph_dtypes.get(record.name, record.decision) if record.decision == "unchanged" else record.decision
        return dtype, record.emulated

    rows = [(r, others[r.name]) for r in report.records if computed(others[r.name]) != computed(r) and
            (selected(r, report, args) or selected(others[r.name], other, args))]
    print(other.summary(), file=out)
    if note:
        print(note, file=out)
    print(f"{len(rows)} ops decide differently under {report.mode_name} and {other.mode_name}", file=out)
    if not rows:
        return
    header = ("op", "IR type", "list", report.mode_name, other.mode_name, f"reason under {other.mode_name}")
    cells = [(a.name, a.ir_type, a.list, _decision_cell(a), _decision_cell(b), b.reason) for a, b in rows]
    print("\n".join(_format_rows(header, cells, None if args.wide else DEFAULT_WIDTH)), file=out)
    _footnote([r for pair in rows for r in pair], out)
