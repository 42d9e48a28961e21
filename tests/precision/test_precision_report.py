"""The report: one record per op, a summary line logged once per rewrite, JSON for tools."""
import json
import logging
import re

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.precision import OpRecord, rewrite
from precision_helpers import build, mode


def _net():
    x = tf.compat.v1.placeholder(tf.float32, [4, 4], name="x")
    mm = tf.matmul(x, tf.constant(np.ones((4, 4), np.float32)), name="mm")
    tf.math.log(tf.nn.relu(mm, name="relu") + 1.0, name="log")
    tf.argmax(mm, axis=1, name="argmax")
    tf.add(tf.constant(1), tf.constant(2), name="int_add")


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_summary_is_logged_once_per_rewrite():
    logger = tf.get_logger()
    handler, level = _Collect(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        result = rewrite(build(_net), mode("mixed_float16"))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert [m for m in handler.messages if m.startswith("NpuOptimizer")] == [result.report.summary()]
    # Relu computes in float32 between casts (slow float16 CPU kernel): it reads mm widened and is rounded: +2 casts.
    assert result.report.summary() == "NpuOptimizer mixed_float16: 4/12 ops reduced to float16, 9 casts, INF/NaN mode"


def test_records_cover_every_op_and_attribute_every_cast_once():
    graph_def = build(_net)
    report = rewrite(graph_def, mode("mixed_float16")).report
    assert [r.name for r in report.records] == [n.name for n in graph_def.node]
    assert report.n_ops == len(graph_def.node) and report.n_reduced == 4
    assert sum(len(r.casts) for r in report.records) == report.n_casts
    integer = report.by_name("int_add")
    assert (integer.list, integer.decision, integer.reason) == ("-", "unchanged", "no float type attribute")
    # Per type attribute: ArgMax's input attribute T follows the matmul, its int64 output is not touched.
    assert report.by_name("argmax").decision == "float16"
    assert report.by_name("x").reason.startswith("graph source")
    assert [r.name for r in report.reduced()] == ["mm", "relu", "add", "argmax"]
    for record in report.records:
        assert isinstance(record, OpRecord) and record.reason and record.reason.count("\n") == 0


def test_json_and_table_for_humans():
    report = rewrite(build(_net), mode("mixed_float16")).report
    data = json.loads(report.to_json())
    # 9 casts: Relu computes in float32 between casts (+2, see test_summary_is_logged_once_per_rewrite).
    assert (data["mode"], data["soc"], data["n_ops"], data["n_reduced"], data["n_casts"]) == \
        ("mixed_float16", "ascend910", 12, 4, 9)
    mm = next(r for r in data["records"] if r["name"] == "mm")
    assert mm == {"name": "mm", "tf_type": "MatMul", "ir_type": "MatMulV2", "list": "white", "decision": "float16",
                  "reason": report.by_name("mm").reason, "casts": list(report.by_name("mm").casts), "emulated": True,
                  "origin": "built-in ascend910 precision_reduce=true"}
    table = report.table()
    assert table.splitlines()[0] == report.summary()
    assert re.search(r"^mm \[MatMul -> MatMulV2, white\]: float16 \(float32 between casts\)\. white list", table, re.M)
    assert "int_add" not in table and "int_add" in report.table(everything=True)


def test_explain_walks_back_to_the_op_that_decided_the_chain():
    def fn():
        x = tf.compat.v1.placeholder(tf.float32, [4, 4], name="x")
        mm = tf.matmul(x, tf.constant(np.ones((4, 4), np.float32)), name="mm")
        tf.nn.softmax(tf.nn.relu(tf.nn.bias_add(mm, tf.ones([4]), name="bias"), name="relu"), name="probs")

    report = rewrite(build(fn), mode("mixed_float16")).report
    lines = report.explain("probs").splitlines()
    assert [line.split(" ")[0] for line in lines] == ["probs", "relu", "bias", "mm"]
    assert lines[0].startswith("probs [Softmax -> SoftmaxV2, gray]: float16. gray list")
    assert lines[-1].startswith("mm [MatMul -> MatMulV2, white]: float16. white list")


def test_an_unknown_op_name_is_a_key_error_that_names_the_close_ones():
    report = rewrite(build(_net), mode("mixed_float16")).report
    for lookup in (report.by_name, report.explain):
        with pytest.raises(KeyError, match="no op named 'rellu'; did you mean 'relu'"):
            lookup("rellu")


def test_constants_the_reduced_dtype_destroys_are_reported_where_they_are_read():
    """docs/BEHAVIOUR.md §7: an fp16 epsilon that underflows to 0, and (commonly) a -1e9 attention mask that becomes
    -inf. The reading op's reason says so and the report carries one warning per constant, logged once."""
    def fn():
        x = tf.compat.v1.placeholder(tf.float32, [4, 4], name="x")
        scores = tf.matmul(x, tf.constant(np.ones((4, 4), np.float32)), name="scores")
        tf.math.add(scores, tf.constant(-1e9, name="mask_value"), name="masked")
        tf.math.add(scores, tf.constant(1e-8, name="epsilon"), name="guarded")
        tf.math.add(scores, tf.constant(0.5, name="fine"), name="shifted")

    collect = _Collect()
    logger = logging.getLogger("tensorflow")
    logger.addHandler(collect)
    try:
        report = rewrite(build(fn), mode("mixed_float16")).report
    finally:
        logger.removeHandler(collect)
    assert report.warnings == (
        "constant 'mask_value' (-1e+09 is -inf in float16) where op 'masked' reads it in float16",
        "constant 'epsilon' (1e-08 is 0 in float16) where op 'guarded' reads it in float16")
    assert report.by_name("guarded").reason.endswith("; reads constant 'epsilon' (1e-08 is 0 in float16)")
    assert "constant" not in report.by_name("shifted").reason
    assert sum("constant 'epsilon'" in m for m in collect.messages) == 1
    assert json.loads(report.to_json())["warnings"] == list(report.warnings)
    bf16 = rewrite(build(fn), mode("mixed_bfloat16", soc="Ascend910B3")).report
    assert bf16.warnings == ()          # bfloat16 keeps float32's range


def test_repr_shows_the_summary_not_an_address():
    report = rewrite(build(_net), mode("mixed_float16")).report
    text = repr(report)
    assert report.summary() in text and "ascend910" in text and " at 0x" not in text and str(report) == text
