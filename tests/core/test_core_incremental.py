"""core.precision.incremental: ops added to a rewritten graph get exactly what a full rewrite of the grown graph
gives them (nodes, tensor map, and the report records: list, decision, reason, casts), in several modes and with
a modify_mixlist, without a session."""
import json

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.precision import rewrite
from npu_bridge.core.precision.incremental import Rewritten, rewrite_increment
from tests.precision.precision_helpers import npu_options

v1 = tf.compat.v1


def _base():
    """A small training graph with user Casts, a Relu no gradient reads yet and a constant float16 destroys."""
    v1.set_random_seed(1)
    x = v1.placeholder(tf.float32, [4, 8], name="x")
    labels = v1.placeholder(tf.int32, [4], name="labels")
    h = tf.nn.relu(tf.matmul(x, v1.get_variable("w0", [8, 8])), name="h")
    tf.nn.relu(x * 2.0, name="side")
    h16 = tf.cast(h, tf.float16, name="h16")
    mixed = tf.add(tf.cast(h16, tf.float32), 1.0, name="mixed")
    logits = tf.matmul(mixed, v1.get_variable("w1", [8, 3]), name="logits")
    eps = tf.constant(1e-8, name="eps")
    tf.add(logits, eps, name="shifted")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
                          name="loss")
    v1.train.GradientDescentOptimizer(0.1).minimize(loss)


def _tensor(name):
    return v1.get_default_graph().get_tensor_by_name(name)


GROWTHS = {
    "scalar of the loss": lambda: _tensor("loss:0") * 3.0,
    "gray op after a white one": lambda: tf.nn.relu(_tensor("logits:0")) + 1.0,
    "white op on a reduced tensor": lambda: tf.matmul(_tensor("h:0"), tf.ones([8, 2])),
    "user Cast of a new tensor": lambda: tf.cast(_tensor("h:0") * 2.0, tf.float16) + tf.constant(1.0, tf.float16),
    "gradient of an old Relu": lambda: tf.gradients(tf.reduce_sum(_tensor("h:0") * _tensor("h:0")),
                                                    _tensor("h:0"))[0],
    "first gradient of an old Relu": lambda: tf.gradients(tf.reduce_sum(_tensor("side:0")), _tensor("x:0"))[0],
    "black op": lambda: tf.exp(_tensor("logits:0")),
    "an old constant that rounds away, read again": lambda: _tensor("logits:0") * _tensor("eps:0"),
    "a new constant that rounds away": lambda: _tensor("logits:0") - tf.constant(1e-9, name="tiny"),
}


@pytest.fixture(scope="module")
def mixlist(tmp_path_factory):
    path = tmp_path_factory.mktemp("mixlist") / "mixlist.json"
    path.write_text(json.dumps({"black-list": {"to-add": ["Relu", "Mul"]}, "white-list": {"to-add": ["Exp"]}}))
    return str(path)


MODES = {
    "allow_mix_precision": dict(v1="allow_mix_precision"),
    "must_keep_origin_dtype": dict(v1="must_keep_origin_dtype"),
    "force_fp16": dict(v1="force_fp16"),
    "mixed_bfloat16": dict(v2="mixed_bfloat16", soc="Ascend910B1"),
    "allow_mix_precision + modify_mixlist": dict(v1="allow_mix_precision"),
}


def _options(mode, mixlist):
    if mode.endswith("modify_mixlist"):
        return npu_options(**MODES[mode], modify_mixlist=mixlist)
    return npu_options(**MODES[mode])


def _grown(growth, options):
    """(the rewritten base, the grown user GraphDef, its increment, its full rewrite)."""
    graph = tf.Graph()
    with graph.as_default():
        _base()
        base_def = graph.as_graph_def()
        GROWTHS[growth]()
    grown_def = graph.as_graph_def()
    base = Rewritten(base_def, rewrite(base_def, options, log=False))
    return base, grown_def, rewrite_increment(base, grown_def, options), rewrite(grown_def, options, log=False)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("growth", list(GROWTHS))
def test_an_added_op_gets_the_record_a_full_rewrite_gives_it(mode, growth, mixlist):
    options = _options(mode, mixlist)
    base, grown_def, increment, full = _grown(growth, options)
    assert increment is not None, "the added part was rewritten in full instead"
    new = [node.name for node in grown_def.node[len(base.user_def.node):]]
    assert [record.name for record in increment.records] == new
    for record in increment.records:
        assert record == full.report.by_name(record.name), record.name
    grown = increment.result
    assert grown.report.records == full.report.records
    assert grown.report.followed == full.report.followed
    counts = ("n_ops", "n_reduced", "n_casts", "n_clamped", "overflow_mode", "mode_name", "soc")
    assert [getattr(grown.report, c) for c in counts] == [getattr(full.report, c) for c in counts]
    assert set(grown.report.warnings) == set(full.report.warnings)
    assert {n.name: n for n in grown.graph_def.node} == {n.name: n for n in full.graph_def.node}
    assert dict(grown.tensor_map) == dict(full.tensor_map)
    known = {node.name for node in base.result.graph_def.node}
    assert [node.name for node in increment.added] == [n.name for n in grown.graph_def.node if n.name not in known]


def test_a_shared_cast_and_its_note_stay_with_the_old_op_that_caused_them():
    """The Cast of constant 'eps' to float16 and the note that 1e-08 is 0 there belong to the old op that read it
    first, as in a full rewrite; the new op reading 'eps' again names neither, and a new constant that rounds away
    is noted on the new op that reads it."""
    options = npu_options(v1="allow_mix_precision")
    _, _, increment, full = _grown("an old constant that rounds away, read again", options)
    shifted = full.report.by_name("shifted")
    assert "reads constant 'eps' (1e-08 is 0 in float16)" in shifted.reason
    assert any(cast.startswith("eps-0-CastToFp16") for cast in shifted.casts)
    (mul,) = increment.records
    assert "eps" not in mul.reason and not any(cast.startswith("eps") for cast in mul.casts)
    _, _, increment, _ = _grown("a new constant that rounds away", options)
    (sub,) = [r for r in increment.records if r.tf_type == "Sub"]
    assert "reads constant 'tiny' (1e-09 is 0 in float16)" in sub.reason
    assert any(cast.startswith("tiny-0-CastToFp16") for cast in sub.casts)
    assert any("constant 'tiny'" in warning for warning in increment.result.report.warnings)


def test_a_new_gradient_of_an_old_relu_changes_that_relus_record_as_a_full_rewrite_does():
    """A ReluGrad reading an old Relu makes the pair the engine's ReluV2 / ReluGradV2: the old Relu's record
    changes though its node does not."""
    options = npu_options(v1="allow_mix_precision")
    base, _, increment, full = _grown("first gradient of an old Relu", options)
    assert base.result.report.by_name("side").ir_type == "Relu"
    assert increment.result.report.by_name("side").ir_type == full.report.by_name("side").ir_type == "ReluV2"


def test_a_user_cast_of_an_old_tensor_asks_for_a_full_rewrite():
    """Old readers of that tensor may now read the user's Cast instead of one of the pass's own."""
    options = npu_options(v1="allow_mix_precision")
    graph = tf.Graph()
    with graph.as_default():
        _base()
        base_def = graph.as_graph_def()
        tf.cast(_tensor("w1/read:0"), tf.float16) * 2.0
    base = Rewritten(base_def, rewrite(base_def, options, log=False))
    assert rewrite_increment(base, graph.as_graph_def(), options) is None


def test_a_part_the_pass_refuses_asks_for_a_full_rewrite_which_names_the_error():
    """The part's PrecisionPassError is not turned into a result; the caller's full rewrite raises it."""
    from npu_bridge.core.errors import PrecisionPassError

    options = npu_options(v1="allow_mix_precision")
    graph = tf.Graph()
    with graph.as_default():
        _base()
    base_def = graph.as_graph_def()
    grown_def = graph.as_graph_def()
    grown_def.node.add(name="late", op="NoSuchOp", input=["logits"])
    base = Rewritten(base_def, rewrite(base_def, options, log=False))
    assert rewrite_increment(base, grown_def, options) is None
    with pytest.raises(PrecisionPassError, match="late.*NoSuchOp"):
        rewrite(grown_def, options, log=False)


def test_a_customize_dtypes_line_naming_an_added_op_asks_for_a_full_rewrite(tmp_path):
    """Before the op existed the line named a missing op (a report warning); the full rewrite decides both."""
    rules = tmp_path / "customize.cfg"
    rules.write_text("late::InputDtype:float32,float32,OutputDtype:float32\n")
    options = npu_options(v1="allow_mix_precision", customize_dtypes=str(rules))
    graph = tf.Graph()
    with graph.as_default():
        _base()
        base_def = graph.as_graph_def()
        tf.matmul(_tensor("h:0"), tf.constant(np.ones((8, 2), np.float32)), name="late")
    base = Rewritten(base_def, rewrite(base_def, options, log=False))
    assert any("no op named 'late'" in w for w in base.result.report.warnings)
    assert rewrite_increment(base, graph.as_graph_def(), options) is None
    full = rewrite(graph.as_graph_def(), options, log=False)
    assert full.report.by_name("late").decision == "float32"
    assert not any("no op named 'late'" in w for w in full.report.warnings)


def test_a_report_grown_thousands_of_times_builds_its_rows_without_recursion():
    """A script adding one op per run makes a chain of growths as long as its runs; reading the last report's
    rows walks it iteratively (sys.getrecursionlimit() is 1000), with later replacements winning."""
    from npu_bridge.core.precision.report import Growth, OpRecord, Report

    def record(name, decision="float32"):
        return OpRecord(name, "Relu", "Relu", "gray", decision, f"follows '{name}-in'")

    report = Report("mixed_float16", "ascend910", "float16", lambda: ([record("base")], {"base": "base-in"}), 1, 0, 0)
    for i in range(3000):
        replaced = {"base": record("base", "float16")} if i == 1500 else {}
        report = Report("mixed_float16", "ascend910", "float16", None, i + 2, 0, 0,
                        growth=Growth(report, (record(f"op{i}"),), replaced, {f"op{i}": f"op{i}-in"}))
    assert [r.name for r in report.records] == ["base", *(f"op{i}" for i in range(3000))]
    assert report.by_name("base").decision == "float16" and "base" not in report.followed
    assert report.followed["op2999"] == "op2999-in"
