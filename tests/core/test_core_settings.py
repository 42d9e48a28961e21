"""core.settings: the core reads no environment variable; what the environment says (strict mode, the operator
library root, the default soc) is read at the edge (npu_bridge.settings) and reaches the core as CoreSettings."""
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.customize_dtypes import load_customize_dtypes
from npu_bridge.core.errors import NpuConfigError
from npu_bridge.core.mixlist import build_precision_lists
from npu_bridge.core.options import options_from_parameter_map
from npu_bridge.core.precision import rewrite
from npu_bridge.core.precision.incremental import Rewritten, rewrite_increment
from npu_bridge.core.settings import CoreSettings
from npu_bridge.settings import core_settings, session_options
from npu_test_support import opp_root_with_add_black
from npu_test_support import npu_config

ENVIRONMENT = ("NPU_BRIDGE_STRICT", "ASCEND_OPP_PATH", "NPU_BRIDGE_SOC")


class _NoEnvironment(dict):
    """Stands for os.environ: any read fails the test, naming the variable."""

    def _refuse(self, *args, **kwargs):
        raise AssertionError(f"the core read the environment: {args[:1]}")

    __getitem__ = get = __contains__ = __iter__ = keys = items = copy = _refuse


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)

def _graph():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [4, 4], name="x")
        w = tf.constant(np.ones((4, 4), np.float32), name="w")
        tf.add(tf.matmul(x, w, name="mm"), 1.0, name="add")
    return graph


def test_options_lists_files_and_rewrites_read_no_environment(tmp_path, monkeypatch):
    """With os.environ replaced by a mapping that fails on any read, the whole offline path runs on the settings
    it was given: options, the library and mixlist, the customize_dtypes file, a rewrite and an increment."""
    mixlist = tmp_path / "mixlist.json"
    mixlist.write_text(json.dumps({"black-list": {"to-add": ["Relu"]}}))
    customize = tmp_path / "customize.cfg"
    customize.write_text("mm::InputDtype:float32,float32,OutputDtype:float32\n")
    graph = _graph()
    settings = CoreSettings(opp_path=opp_root_with_add_black(tmp_path))
    monkeypatch.setattr(os, "environ", _NoEnvironment())
    options = options_from_parameter_map({"precision_mode": "allow_mix_precision", "modify_mixlist": str(mixlist),
                                          "customize_dtypes": str(customize)}, settings)
    lists = build_precision_lists(options)
    load_customize_dtypes(options.customize_dtypes, lists.library)
    base_def = graph.as_graph_def()
    base = Rewritten(base_def, rewrite(base_def, options, log=False))
    with graph.as_default():
        tf.nn.relu(graph.get_tensor_by_name("add:0"), name="late")
    increment = rewrite_increment(base, graph.as_graph_def(), options)
    assert increment is not None and increment.records[0].list == "black"
    assert base.result.report.by_name("add").list == "black"       # the edited library's flag
    plain = options_from_parameter_map({"precision_mode_v2": "mixed_float16"}, CoreSettings())   # built-in library
    assert rewrite(base_def, plain, log=False).report.by_name("add").list == "gray"


def test_settings_given_reach_the_library_the_soc_and_strict_mode(tmp_path):
    root = opp_root_with_add_black(tmp_path)
    options = options_from_parameter_map({"precision_mode": "allow_mix_precision"}, CoreSettings(opp_path=root))
    lists = build_precision_lists(options)
    assert lists.list_of("Add").value == "black" and root in lists.origin("Add")
    assert options_from_parameter_map({}, CoreSettings(soc="Ascend910B1")).soc == "ascend910b"
    assert options_from_parameter_map({"soc_config": "Ascend910A"}, CoreSettings(soc="Ascend910B1")).soc == \
        "ascend910"
    strict = CoreSettings(strict=True)
    with pytest.raises(NpuConfigError, match="'sump_mode' is not an option.*strict mode"):
        options_from_parameter_map({"sump_mode": "all"}, strict)
    mixlist = tmp_path / "misspelt.json"
    mixlist.write_text(json.dumps({"black-list": {"to-add": ["MatMull"]}}))
    options = options_from_parameter_map({"precision_mode": "allow_mix_precision", "modify_mixlist": str(mixlist)},
                                         strict)
    with pytest.raises(NpuConfigError, match="MatMull.*strict mode"):
        build_precision_lists(options)
    with pytest.warns(UserWarning, match="MatMull"):
        build_precision_lists(options_from_parameter_map(dict(options.raw), CoreSettings()))


def test_the_edge_reads_the_environment_when_options_are_made(tmp_path, monkeypatch):
    """core_settings() is the one reader; a session's options carry what it read when the session was created
    (tests/runtime/test_session_settings.py: a session's lists)."""
    root = opp_root_with_add_black(tmp_path)
    assert core_settings({"NPU_BRIDGE_STRICT": "0", "ASCEND_OPP_PATH": root, "NPU_BRIDGE_SOC": " Ascend910B1 "}) == \
        CoreSettings(strict=False, opp_path=root, soc="Ascend910B1")
    assert core_settings({"NPU_BRIDGE_STRICT": "1"}) == CoreSettings(strict=True)
    monkeypatch.setenv("ASCEND_OPP_PATH", root)
    options = session_options(npu_config(precision_mode="allow_mix_precision"))
    monkeypatch.delenv("ASCEND_OPP_PATH")
    assert options.settings.opp_path == root
    assert build_precision_lists(options).list_of("Add").value == "black"
    assert session_options(npu_config(precision_mode="allow_mix_precision")).settings == CoreSettings()
