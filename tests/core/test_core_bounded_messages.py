"""Messages stay bounded and mistakes that change nothing are said: a pasted megabyte, a file for another model,
a modify_mixlist move onto the list an op is already on."""
import json

import pytest
import tensorflow as tf

from npu_bridge.core.errors import NpuConfigError, NpuConfigWarning
from npu_bridge.core.mixlist import build_precision_lists
from npu_bridge.core.options import NpuOptions, PrecisionMode, options_from_parameter_map
from npu_bridge.core.precision import rewrite

v1 = tf.compat.v1


@pytest.fixture(autouse=True)
def no_opp_env(monkeypatch):
    monkeypatch.delenv("ASCEND_OPP_PATH", raising=False)


@pytest.mark.parametrize("key", ["precision_mode_v2", "precision_mode", "op_select_implmode"])
def test_a_megabyte_option_value_gives_an_error_of_bounded_size(key):
    value = "mixed_float16" + "x" * 1_000_000
    with pytest.raises(NpuConfigError) as caught:
        options_from_parameter_map({key: value})
    message = str(caught.value)
    assert len(message) < 2000 and value[:100] in message and "characters)" in message
    if key.startswith("precision_mode"):
        assert f"option {key} value '{value[:120]}... (1000013 characters)' is invalid" in message


def _graph_def():
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 2], name="x")
        tf.matmul(x, x, name="mm")
    return graph.as_graph_def()


def test_customize_dtypes_naming_thousands_of_absent_nodes_warns_twenty_times_and_sums_up_the_rest(tmp_path):
    path = tmp_path / "dtypes.cfg"
    path.write_text("".join(f"absent_{i}::InputDtype:float16,float16,OutputDtype:float32\n" for i in range(5000)))
    options = options_from_parameter_map({"precision_mode": "allow_mix_precision", "customize_dtypes": str(path)})
    report = rewrite(_graph_def(), options, log=False).report
    about = [w for w in report.warnings if "customize_dtypes" in w]
    assert len(about) == 21
    assert "line 20: the graph has no op named 'absent_19'" in about[19]
    assert about[20] == (f"customize_dtypes [{path}]: 4980 more lines name ops the graph does not have and pin "
                         "nothing, as above: line 21 'absent_20', line 22 'absent_21', line 23 'absent_22', ...")


@pytest.mark.parametrize("list_name, op_type", [("white", "MatMulV2"), ("black", "ReduceSumD")])
def test_adding_an_op_to_the_list_it_is_already_on_is_warned(tmp_path, list_name, op_type):
    path = tmp_path / "ops_info.json"
    path.write_text(json.dumps({f"{list_name}-list": {"to-add": [op_type]}}))
    options = NpuOptions(mode=PrecisionMode.MIXED_FP16, mode_name="allow_mix_precision", modify_mixlist=str(path))
    with pytest.warns(NpuConfigWarning) as record:
        lists = build_precision_lists(options)
    messages = [str(w.message) for w in record]
    assert any(f"{list_name}-list.to-add of '{op_type}' has no effect: it is already {list_name} (built-in "
               "ascend910 precision_reduce=" in m for m in messages), messages
    assert lists.list_of(op_type) == list_name
