"""Bad configuration input: every mistake is a clear NpuConfigError or one warning, and bounded in cost.

Decisions against the real adapter (docs/DESIGN.md "Bad configuration input"): what it rejects is an error here;
what it silently ignores or reads differently from what the user wrote is a warning naming the file and key.
"""
import json
import os
import warnings

import pytest
import tensorflow as tf

from npu_bridge.core.customize_dtypes import load_customize_dtypes
from npu_bridge.core.errors import NpuConfigError, NpuConfigWarning
from npu_bridge.core.mixlist import build_precision_lists, load_mixlist
from npu_bridge.core.oplib import BUILTIN_ROOT, load_op_library
from npu_bridge.core.options import options_from_parameter_map
from npu_bridge.core.precision import rewrite
from npu_test_support import npu_config

v1 = tf.compat.v1


@pytest.fixture(autouse=True)
def no_opp_env(monkeypatch):
    monkeypatch.delenv("ASCEND_OPP_PATH", raising=False)


def _options(**parameters):
    config = npu_config(precision_mode_v2="mixed_float16", **parameters)
    return options_from_parameter_map(config.graph_options.rewrite_options.custom_optimizers[0].parameter_map)


def _config_warnings(action):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = action()
    return result, [str(w.message) for w in caught if issubclass(w.category, NpuConfigWarning)]


def test_thousands_of_unknown_op_types_search_nearest_names_only_for_the_warned_ones(tmp_path, monkeypatch):
    library = load_op_library("ascend910")
    searched = []
    real_search = library.close_matches
    monkeypatch.setattr(library, "close_matches", lambda name: searched.append(name) or real_search(name))
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({"black-list": {"to-add": [f"NoSuchOp{i}" for i in range(3000)]}}))
    _, said = _config_warnings(lambda: load_mixlist(str(path), library))
    assert len(searched) == 20
    assert len(said) == 21 and said[-1].startswith("2980 more op type names act on no op on ascend910")


def test_deeply_nested_json_mixlist_is_a_config_error_naming_the_file(tmp_path):
    path = tmp_path / "nested.json"
    path.write_text("[" * 100_000)
    with pytest.raises(NpuConfigError, match=r"modify_mixlist \[.*nested.json\].*nested too deeply"):
        load_mixlist(str(path), load_op_library("ascend910"))


def test_deeply_nested_ops_info_file_is_a_config_error_naming_the_file(tmp_path):
    folder = tmp_path / "built-in/op_impl/ai_core/tbe/config/ascend910"
    folder.mkdir(parents=True)
    (folder / "aic-ascend910-ops-info.json").write_text('{"MatMulV2": ' + "[" * 100_000)
    with pytest.raises(NpuConfigError, match=r"aic-ascend910-ops-info.json is not valid JSON.*nested too deeply"):
        load_op_library("ascend910", str(tmp_path))


@pytest.mark.parametrize("key", ["modify_mixlist", "customize_dtypes", "dump_path"])
def test_a_path_with_a_nul_byte_is_a_config_error_naming_the_key(key):
    with pytest.raises(NpuConfigError, match=rf"parameter_map\['{key}'\] is '/tmp/a\\x00b', a path with a NUL byte"):
        _options(**{key: "/tmp/a\x00b"})


def test_an_empty_mixlist_path_set_through_s_warns_as_through_i():
    options, said = _config_warnings(lambda: _options(modify_mixlist=""))
    assert options.modify_mixlist is None
    assert said == ["NpuOptimizer parameter_map['modify_mixlist'] is an empty path: no file is read (the real "
                    "adapter takes an empty value for not set); remove the key or give the path."]


def test_a_non_utf8_bytes_path_opens_the_file_it_names(tmp_path):
    name = os.fsencode(str(tmp_path)) + b"/mixlist-\xe9.json"
    with open(name, "w") as handle:
        json.dump({"black-list": {"to-add": ["MatMulV2"]}}, handle)
    options = _options(modify_mixlist=name)
    assert build_precision_lists(options).list_of("MatMulV2").value == "black"


def test_a_key_written_twice_warns_that_the_first_block_is_dropped(tmp_path):
    path = tmp_path / "twice.json"
    path.write_text('{"black-list": {"to-add": ["MatMulV2"]}, "black-list": {"to-add": ["BiasAdd"]}}')
    actions, said = _config_warnings(lambda: load_mixlist(str(path), load_op_library("ascend910")))
    assert set(actions) == {"BiasAdd"}
    assert any("key 'black-list' appears twice in one object" in message for message in said)


def test_precision_reduce_written_as_a_string_warns_that_the_op_is_gray(tmp_path):
    folder = tmp_path / "built-in/op_impl/ai_core/tbe/config/ascend910"
    folder.mkdir(parents=True)
    source = BUILTIN_ROOT / "built-in/op_impl/ai_core/tbe/config/ascend910/aic-ascend910-ops-info.json"
    entries = json.loads(source.read_text())
    entries["Log"]["precision_reduce"] = "false"
    (folder / "aic-ascend910-ops-info.json").write_text(json.dumps(entries))
    library, said = _config_warnings(lambda: load_op_library("ascend910", str(tmp_path)))
    assert library.precision_reduce("Log") is None
    assert any("Log.precision_reduce is 'false', not an object such as {\"flag\": \"false\"}" in m for m in said)


def test_a_nul_byte_in_a_mixlist_or_customize_path_given_directly_is_a_config_error():
    with pytest.raises(NpuConfigError, match="modify_mixlist: cannot open file"):
        load_mixlist("/tmp/a\x00b", load_op_library("ascend910"))
    with pytest.raises(NpuConfigError, match="customize_dtypes .*does not exist"):
        load_customize_dtypes("/tmp/a\x00b")


def _matmul_graph():
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 2], name="x")
        tf.matmul(x, x, name="mm")
        tf.nn.relu(x, name="relu")
    return graph.as_graph_def()


@pytest.mark.parametrize("line, expected", [
    ("mm::InputDtype:float16,float16,float16,float16,float16,OutputDtype:float32",
     "line 1: 5 input dtypes for op 'mm' (MatMulV2), which has 4 inputs: the last 1 pin nothing"),
    ("relu::InputDtype:float32,float32,OutputDtype:float32",
     "line 1: 2 input dtypes for op 'relu' (Relu), which has 1 input: the last 1 pin nothing"),
    ("mm::InputDtype:float16,OutputDtype:float32",
     "line 1: 1 input dtype for op 'mm' (MatMulV2), which has 2 inputs: inputs 1 to 1 keep their dtype"),
    ("nope::InputDtype:float16,OutputDtype:float32", "line 1: the graph has no op named 'nope'"),
])
def test_customize_dtypes_lines_that_pin_less_than_they_say_are_warned(tmp_path, line, expected):
    path = tmp_path / "dtypes.cfg"
    path.write_text(line + "\n")
    result = rewrite(_matmul_graph(), _options(customize_dtypes=str(path)), log=False)
    assert any(expected in warning for warning in result.report.warnings), result.report.warnings


def test_the_common_matmulv2_line_with_a_bias_dtype_is_not_warned(tmp_path):
    path = tmp_path / "dtypes.cfg"
    path.write_text("OpType::MatMulV2:InputDtype:float16,float16,float32,OutputDtype:float32\n")
    result = rewrite(_matmul_graph(), _options(customize_dtypes=str(path)), log=False)
    assert not [w for w in result.report.warnings if "customize_dtypes" in w]


def test_function_bodies_left_as_written_are_warned_once_naming_the_function():
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 2], name="x")

        @tf.function
        def body(value):
            return tf.matmul(value, value)

        body(x)
        body(x + 1.0)
    result = rewrite(graph.as_graph_def(), _options(), log=False)
    said = [w for w in result.report.warnings if "is left as written" in w]
    assert len(said) == 1 and said[0].startswith("function '__inference_body_") and "called by op" in said[0]
