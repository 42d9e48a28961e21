"""customize_dtypes files: the real format, priority, duplicates and every error."""
import re

import pytest

from npu_bridge.core.customize_dtypes import DtypeRule, load_customize_dtypes
from npu_bridge.core.errors import NpuConfigError, NpuConfigWarning

# The file that recurs in ModelZoo scripts.
MODELZOO_FILE = """OpType::MatMulV2:InputDtype:float16,float16,float32,OutputDtype:float32
OpType::BatchMatMul:InputDtype:float16,float16,OutputDtype:float32
OpType::BatchMatMulV2:InputDtype:float16,float16,OutputDtype:float32
"""


def write(tmp_path, text):
    path = tmp_path / "customize_dtypes.cfg"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_modelzoo_file(tmp_path):
    rules = load_customize_dtypes(write(tmp_path, MODELZOO_FILE))
    rule = rules.rule_for("dense/MatMul", ["MatMulV2", "MatMul"])
    assert rule == DtypeRule(inputs=("float16", "float16", "float32"), outputs=("float32",), line=1, by="type",
                             target="MatMulV2")
    assert rules.rule_for("bmm", ["BatchMatMulV2"]).line == 3
    assert rules.rule_for("relu", ["Relu"]) is None


def test_node_name_beats_type(tmp_path):
    rules = load_customize_dtypes(write(tmp_path, "OpType::MatMulV2:InputDtype:float16,float16,OutputDtype:float16\n"
                                                  "dense/MatMul::InputDtype:float32,float32,OutputDtype:float32\n"))
    assert rules.rule_for("dense/MatMul", ["MatMulV2"]).by == "name"
    assert rules.rule_for("dense/MatMul", ["MatMulV2"]).outputs == ("float32",)
    assert rules.rule_for("other/MatMul", ["MatMulV2"]).by == "type"


def test_first_matching_ir_type_wins(tmp_path):
    rules = load_customize_dtypes(write(tmp_path, "OpType::ReduceSum:OutputDtype:float32\n"
                                                  "OpType::ReduceSumD:OutputDtype:float16\n"))
    assert rules.rule_for("sum", ["ReduceSumD", "ReduceSum"]).target == "ReduceSumD"


def test_empty_tokens_keep_and_parts_are_optional(tmp_path):
    rules = load_customize_dtypes(write(tmp_path, "a::InputDtype:,float16,OutputDtype:\n"
                                                  "b::OutputDtype:bfloat16\n"
                                                  "c::InputDtype:float,int32\n"))
    assert rules.rule_for("a", []).inputs == (None, "float16")
    assert rules.rule_for("a", []).outputs == (None,)
    assert rules.rule_for("b", []) == DtypeRule((), ("bfloat16",), 2, "name", "b")
    assert rules.rule_for("c", []).inputs == ("float32", "int32") and rules.rule_for("c", []).outputs == ()


def test_dtype_names_are_normalized_and_case_insensitive(tmp_path):
    rules = load_customize_dtypes(write(tmp_path, "a::InputDtype:FLOAT16,Float,double,bf16,OutputDtype:float32\n"))
    assert rules.rule_for("a", []).inputs == ("float16", "float32", "float64", "bfloat16")


def test_later_duplicates_are_ignored_with_a_warning(tmp_path):
    path = write(tmp_path, "OpType::MatMulV2:OutputDtype:float32\nOpType::MatMulV2:OutputDtype:float16\n"
                           "n::OutputDtype:float32\nn::OutputDtype:float16\n")
    with pytest.warns(NpuConfigWarning) as record:
        rules = load_customize_dtypes(path)
    assert rules.rule_for("x", ["MatMulV2"]).outputs == ("float32",)
    assert rules.rule_for("n", []).outputs == ("float32",)
    messages = [str(r.message) for r in record]
    assert any("line 2" in m and "already set on line 1" in m for m in messages)
    assert any("line 4" in m and "already set on line 3" in m for m in messages)


def test_a_byte_order_mark_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "customize_dtypes.cfg"
    path.write_text(MODELZOO_FILE, encoding="utf-8-sig")
    with pytest.warns(NpuConfigWarning, match="byte order mark"):
        rules = load_customize_dtypes(str(path))
    assert rules.rule_for("dense/MatMul", ["MatMulV2"]).line == 1


def test_blank_lines_are_skipped(tmp_path):
    rules = load_customize_dtypes(write(tmp_path, "\nOpType::Add:OutputDtype:float16\n\n"))
    assert rules.rule_for("add", ["Add"]).line == 2


@pytest.mark.parametrize("line, reason", [
    ("OpType::MatMulV2:InputDtype:float17,OutputDtype:float32", "float17 is an invalid dtype"),
    ("OpType::MatMulV2:OutputDtype:float32,InputDtype:float16", "inputDtype must on the left of outputDtype"),
    ("OpType::MatMulV2:float16,float16", "has neither InputDtype: nor OutputDtype:"),
    ("dense/MatMul:InputDtype:float16", "does not start with a node name"),
    ("::InputDtype:float16", "does not start with a node name"),
    ("OpType:::InputDtype:float16", "does not start with a node name"),
    ("# By operator name", "comment lines are not supported"),
    ("n::InputDtype:float16OutputDtype:float32", "must be separated by ','"),
    ("n::junk InputDtype:float16", "unexpected text"),
    ("n::InputDtype:" + "float16," * 200, "at most 1024"),
])
def test_bad_lines(tmp_path, line, reason):
    path = write(tmp_path, "OpType::Add:OutputDtype:float16\n" + line + "\n")
    with pytest.raises(NpuConfigError) as info:
        load_customize_dtypes(path)
    message = str(info.value)
    assert "The content format of the customization file is incorrect" in message
    assert f"[{path}] line 2" in message and reason in message


def test_missing_file(tmp_path):
    path = str(tmp_path / "nope.cfg")
    with pytest.raises(NpuConfigError, match=re.escape(
            f"customize_dtypes [{path}]: The customize file does not exist or its access permission is denied")):
        load_customize_dtypes(path)
