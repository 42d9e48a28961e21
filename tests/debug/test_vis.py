"""The `.vis` graph `npu-debug compare` writes for tb-graph-ascend: structure, colours, overflow levels, and the
plugin's own reader on it (skipped when tb-graph-ascend is not installed)."""
import importlib.util
import json

import numpy as np
import pytest
import tensorflow as tf
from npu_test_support import npu_config

import npu_bridge.runtime
from npu_bridge.debug import compare_step, metrics, vis

npu_bridge.runtime.activate()
v1 = tf.compat.v1


@pytest.fixture(scope="module")
def comparison():
    """A two-block network whose first block's MatMul overflows float16 (its inputs are finite): the culprit."""
    with tf.Graph().as_default():
        rng = np.random.RandomState(0)
        x = v1.placeholder(tf.float32, [8, 8], name="x")
        with tf.name_scope("block1"):
            w1 = tf.constant(rng.randn(8, 16).astype(np.float32) * 30000.0)
            hidden = tf.nn.relu(tf.matmul(x, w1, name="big_matmul") * (1.0 / 30000.0), name="act")
        with tf.name_scope("block2"):
            w2 = tf.constant(rng.randn(16, 1).astype(np.float32))
            out = tf.matmul(hidden, w2, name="head")
        loss = tf.reduce_mean(tf.square(out - 1.0), name="loss")
        with v1.Session(config=npu_config(precision_mode="allow_mix_precision")) as sess:
            _, result = compare_step(sess, loss, {x: rng.randn(8, 8).astype(np.float32)})
    return result


def test_scopes_are_modules_ops_are_api_nodes_matched_by_name(comparison):
    document = vis.build(comparison)
    npu, bench = document["NPU"]["node"], document["Bench"]["node"]
    assert document["NPU"]["root"] == document["Bench"]["root"] == vis.ROOT
    assert set(npu) == set(bench)
    assert npu["block1"]["node_type"] == vis.MODULE and npu["block1"]["upnode"] == vis.ROOT
    assert npu["block1/big_matmul"]["node_type"] == vis.API and npu["block1/big_matmul"]["upnode"] == "block1"
    assert npu["block1"]["subnodes"][0] == "block1/big_matmul"       # execution order
    assert npu["block1/big_matmul"]["matched_node_link"] == [vis.ROOT, "block1", "block1/big_matmul"]
    assert bench["block2/head"]["matched_node_link"][-1] == "block2/head"
    assert "loss" in npu[vis.ROOT]["subnodes"]
    json.dumps(document, allow_nan=False)                            # plain JSON: the browser parses it


def test_precision_index_grades_our_error_and_the_legend_explains_it(comparison):
    document = vis.build(comparison)
    npu = document["NPU"]["node"]
    tolerance = metrics.LOCAL_THRESHOLDS["float16"]
    assert vis.precision_index(0.0, tolerance) == 0 and vis.precision_index(tolerance, tolerance) == 0.3
    assert vis.precision_index(100 * tolerance, tolerance) == 0.6 and vis.precision_index(float("nan"), 1) == 0.99
    culprit = npu["block1/big_matmul"]
    assert culprit["data"]["precision_index"] == 0.99              # an overflow (65504s against 1e5s): red
    assert 0.6 < npu["block2/head"]["data"]["precision_index"] < 0.99   # over 100 tolerances off: red
    assert npu["block1"]["data"]["precision_index"] == 0.99         # a module shows the worst below it
    colors = document["Colors"]
    ranges = sorted(c["value"] for c in colors.values() if isinstance(c["value"], list))
    assert ranges == [[0, 0.3], [0.3, 0.6], [0.6, 1.0]]
    assert all(c["description"] for c in colors.values())
    assert "4 float16 unit roundoffs" in colors["#FFFCF3"]["description"]


def test_overflow_source_line_metrics_and_the_culprit_are_on_the_node(comparison):
    npu = vis.build(comparison)["NPU"]["node"]
    bench = vis.build(comparison)["Bench"]["node"]
    culprit = npu["block1/big_matmul"]
    assert culprit["data"]["overflow_level"] == "critical"         # overflows from finite inputs
    assert npu["block1/mul"]["data"]["overflow_level"] == "medium"  # reads the saturated 65504s, returns normal values
    assert 'tf.matmul(x, w1, name="big_matmul")' in culprit["stack_info"][0]
    assert "first op breaking accuracy" in culprit["suggestions"]["npu_bridge"]
    assert comparison.culprit["NPUDump"] == "block1/big_matmul"
    output = culprit["output_data"]["block1/big_matmul.output.0"]
    assert output["dtype"] == "float16" and output["shape"] == [8, 16] and output["OverFlow"] == "YES"
    assert output["Max"] == 65504.0 and "RelativeEuclideanDistance" in output
    truth = bench["block1/big_matmul"]["output_data"]["block1/big_matmul.output.0"]
    assert truth["dtype"] == "float32" and truth["Max"] > 65504
    assert npu["block1/act"]["input_data"]["block1/act.input.0"]["Max"] == 1.0 * npu["block1/mul"][
        "output_data"]["block1/mul.output.0"]["Max"]


@pytest.mark.skipif(importlib.util.find_spec("server") is None or
                    importlib.util.find_spec("server.app") is None, reason="tb-graph-ascend is not installed")
def test_tb_graph_ascends_reader_loads_and_colours_it(comparison, tmp_path):
    from server.app.service.graph_service_vis import JsonGraphService
    from server.app.utils.global_state import GraphState

    run = tmp_path / "npu_debug_compare"     # not "run": the plugin's state has a key of that name
    run.mkdir()
    vis.write(comparison, str(run / "compare_step0.vis"))
    GraphState.set_global_value("logdir", str(tmp_path))
    found = JsonGraphService.load_meta_dir()                # what the plugin does on start: finds runs and tags
    assert found["data"] == {"npu_debug_compare": {"type": "json", "tags": ["compare_step0"]}}, found
    service = JsonGraphService("npu_debug_compare", "compare_step0")
    events = list(service.load_graph_data())
    assert '"done": true' in events[-1]
    meta = {"run": "npu_debug_compare", "tag": "compare_step0", "microStep": -1}
    config = service.load_graph_config_info()
    assert config["success"] and not config["data"]["isSingleGraph"], config
    assert "#FF704D" in config["data"]["colors"]
    nodes = service.load_graph_all_node_list(meta)["data"]
    assert nodes["npuUnMatchNodes"] == [] and nodes["npuMatchNodes"]["block1/big_matmul"] == "block1/big_matmul"
    red = service.search_node_by_precision(meta, [[0.6, 1.0]])["data"]
    assert "block1/big_matmul" in red
    info = service.get_node_info({"nodeType": "NPU", "nodeName": "block1/big_matmul"}, meta)["data"]
    assert info["bench"]["id"] == "block1/big_matmul" and info["npu"]["stack_info"]
    expanded = service.change_node_expand_state({"nodeType": "NPU", "nodeName": "root"}, meta)
    assert expanded["success"], expanded
