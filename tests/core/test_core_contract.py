"""The pass's output contract (npu_bridge.core.contract) is what the pass really produces, and has no copies."""
import ast
import pathlib
import re

import tensorflow as tf

from npu_bridge.core import contract
from npu_bridge.core.options import options_from_config
from npu_bridge.core.precision import rewrite
from npu_bridge.npu_init import npu_config_proto

v1 = tf.compat.v1
PACKAGE = pathlib.Path(contract.__file__).resolve().parents[1]


def _rewritten(soc):
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 2], name="x")
        w = v1.get_variable("w", [2, 2])
        tf.add(tf.nn.relu(tf.matmul(x, w, name="mm"), name="relu"), 1.0, name="add")
    config = npu_config_proto()
    params = config.graph_options.rewrite_options.custom_optimizers[0].parameter_map
    params["precision_mode"].s = b"allow_mix_precision"
    params["soc_config"].s = soc.encode()
    return rewrite(graph.as_graph_def(), options_from_config(config), log=False).graph_def


def test_the_pass_marks_and_names_its_casts_as_the_contract_says():
    nodes = {node.name: node for node in _rewritten("ascend910b").node}
    cast = nodes[contract.cast_name("x", 0, "float16")]
    assert cast.op == "Cast" and cast.attr[contract.MARKER].s == contract.MARK_CAST
    assert contract.is_pass_node(cast.name) and not contract.is_pass_node("mm")
    assert contract.user_names_in(f"reading '{cast.name}:0' failed") == "reading 'x:0' failed"
    # The MatMul is computed in float32 between Casts (the cube unit accumulates in float32), the Add retyped.
    assert nodes["mm"].attr[contract.MARKER].s == contract.MARK_EMULATED
    assert nodes["add"].attr[contract.MARKER].s == contract.MARK_RETYPED


def test_saturation_clamps_are_named_marked_and_mapped_back_as_the_contract_says():
    nodes = _rewritten("ascend910").node
    clamps = [node for node in nodes if contract.is_clamp(node.name)]
    assert clamps and all(node.op in contract.CLAMP_OPS for node in clamps)
    assert all(node.attr[contract.MARKER].s == contract.MARK_SATURATION for node in clamps)
    last = next(node for node in clamps if node.name.endswith(contract.SATURATION_SUFFIX))
    source = contract.clamped_source(last.name)
    assert any(node.name == source.split(":")[0] for node in nodes)
    assert contract.user_names_in(last.name) == source.split(":")[0]


def test_no_module_outside_the_contract_spells_the_contract_names():
    """A bare copy of a marker, a name suffix or the iterations attribute elsewhere would drift from the pass."""
    literals = re.compile(r"""["'](_npu_bridge|_npu_bridge_out|_npu_iterations_per_loop|_npu_float_status|"""
                          r"""-NpuBridge(Fetch)?|-SatFp16(Upper)?-NpuBridge)["']|b["'](cast|saturation|retyped|emulated)["']""")
    offenders = [f"{path.relative_to(PACKAGE)}:{number}"
                 for path in PACKAGE.rglob("*.py") if path.name != "contract.py"
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if literals.search(line)]
    assert offenders == []


# Spellings of the contract in pieces: a Cast's or clamp's name built from its parts, a fetch cast's suffix.
NAME_FRAGMENTS = re.compile(r"CastTo(Fp16|Bf16|Fp32)|SatFp16(Upper)?-|-NpuBridge|NpuBridgeFetch")


def _code_strings(tree):
    """(line, value) of every str or bytes constant of `tree` that is not a docstring (f-string pieces too)."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and id(node) not in docstrings]


def _compared_strings(tree):
    """(line, value) of every str constant a value is compared with: `x == "..."`, `x in ("...", ...)` (not the
    key of `"..." in mapping`)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for op, left, right in zip(node.ops, (node.left, *node.comparators), node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)):
                values = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else []
            else:
                values = [left, right]
            yield from ((node.lineno, value.value) for value in values
                        if isinstance(value, ast.Constant) and isinstance(value.value, str))


def _package_trees(*skipped):
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "contract.py" or path.relative_to(PACKAGE).as_posix() in skipped:
            continue
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def test_no_module_outside_the_contract_builds_a_contract_name_from_pieces_or_lists_variable_ops():
    """Docstrings may describe the names; code must take them (and what counts as a variable) from the contract."""
    offenders = [f"{where}:{line}: {value!r}" for where, tree in _package_trees()
                 for line, value in _code_strings(tree)
                 if isinstance(value, str) and (NAME_FRAGMENTS.search(value) or value in contract.VARIABLE_OPS)]
    assert offenders == []


def test_only_the_options_parser_compares_precision_mode_spellings():
    """Past the parser (core/options.py), a precision mode is a contract.PrecisionMode: a string comparison
    elsewhere would silently miss the adapter's other spelling of the same mode."""
    from npu_bridge.core import options

    spellings = {*options.PRECISION_MODE_VALUES, *options.PRECISION_MODE_V2_VALUES,
                 *(mode.value for mode in contract.PrecisionMode)}
    offenders = [f"{where}:{line}: {value!r}" for where, tree in _package_trees("core/options.py")
                 for line, value in _compared_strings(tree) if value in spellings]
    assert offenders == []


def test_the_scans_see_what_they_look_for():
    """The scans above would pass on an empty package: each finds its target in a line written to break it."""
    broken = ast.parse('"""A CastToFp16 in a docstring is allowed."""\n'
                       'name = f"{src}-0-CastToFp16-NpuBridge"\n'
                       'VARIABLES = ("VariableV2", "VarHandleOp")\n'
                       'mixed = mode in ("allow_mix_precision", "x") or "force_fp16" == mode or "origin" in record\n')
    assert [value for _, value in _code_strings(broken) if NAME_FRAGMENTS.search(value)] == ["-0-CastToFp16-NpuBridge"]
    assert {value for _, value in _code_strings(broken)} >= {"VariableV2", "VarHandleOp"}
    assert [value for _, value in _compared_strings(broken)] == ["allow_mix_precision", "x", "force_fp16"]


def test_the_precision_mode_enum_is_the_one_the_options_use():
    from npu_bridge.core import options

    assert options.PrecisionMode is contract.PrecisionMode
    assert options.PRECISION_MODE_VALUES["allow_mix_precision"] in contract.MIXED_MODES
