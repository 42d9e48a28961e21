"""NpuOptimizer options: reading a real ConfigProto, mode resolution and defaults, every error and warning."""
import os
import re
import warnings

import pytest
import tensorflow as tf

from npu_bridge.core.errors import NpuConfigError, NpuConfigWarning
from npu_test_support import npu_config
from npu_bridge.core.options import (KNOWN_KEYS, DumpOptions, NpuOptions, PrecisionMode, options_from_config,
                                     options_from_parameter_map)


@pytest.fixture(autouse=True)
def no_soc_env(monkeypatch):
    monkeypatch.delenv("NPU_BRIDGE_SOC", raising=False)


def options(**params):
    return options_from_config(npu_config(**params))


def test_no_config_or_no_npu_optimizer_gives_none():
    assert options_from_config(None) is None
    config = tf.compat.v1.ConfigProto()
    config.graph_options.rewrite_options.custom_optimizers.add().name = "pruning"
    assert options_from_config(config) is None


def test_only_the_exact_name_is_read_and_near_misses_warn():
    config = tf.compat.v1.ConfigProto()
    other = config.graph_options.rewrite_options.custom_optimizers.add()
    other.name = "NPUOptimizer"
    other.parameter_map["precision_mode"].s = b"force_fp32"
    with pytest.warns(NpuConfigWarning, match="named exactly 'NpuOptimizer'"):
        assert options_from_config(config) is None


def test_a_name_with_stray_whitespace_is_a_near_miss_too():
    config = tf.compat.v1.ConfigProto()
    config.graph_options.rewrite_options.custom_optimizers.add().name = "NpuOptimizer "
    with pytest.warns(NpuConfigWarning, match="'NpuOptimizer ' is ignored"):
        assert options_from_config(config) is None


def test_several_npu_optimizer_entries_are_merged_key_by_key_in_order():
    """The adapter loops over every entry named NpuOptimizer and each key it finds overwrites the earlier value."""
    config = tf.compat.v1.ConfigProto()
    first = config.graph_options.rewrite_options.custom_optimizers.add()
    first.name = "NpuOptimizer"
    first.parameter_map["precision_mode"].s = b"allow_mix_precision"
    first.parameter_map["iterations_per_loop"].i = 5
    second = config.graph_options.rewrite_options.custom_optimizers.add()
    second.name = "NpuOptimizer"
    second.parameter_map["use_off_line"].b = True
    second.parameter_map["iterations_per_loop"].i = 10
    with pytest.warns(NpuConfigWarning, match="merged in order"):
        opts = options_from_config(config)
    assert opts.mode is PrecisionMode.MIXED_FP16 and opts.mode_name == "allow_mix_precision"
    assert opts.iterations_per_loop == 10 and opts.use_off_line is True


def test_seed_example_precision_mode_v2():
    opts = options(use_off_line=True, precision_mode_v2="mixed_float16")
    assert opts.mode is PrecisionMode.MIXED_FP16
    assert opts.mode_name == "mixed_float16"
    assert opts.precision_mode_v2 == "mixed_float16" and opts.precision_mode is None
    assert opts.reduced_dtype == "float16"
    assert opts.use_off_line is True and opts.soc == "ascend910" and opts.graph_run_mode == 1


@pytest.mark.parametrize("value, mode", [
    ("allow_mix_precision", PrecisionMode.MIXED_FP16), ("allow_mix_precision_fp16", PrecisionMode.MIXED_FP16),
    ("force_fp16", PrecisionMode.FORCE_FP16), ("force_fp32", PrecisionMode.FORCE_FP32),
    ("cube_fp16in_fp32out", PrecisionMode.FORCE_FP32), ("must_keep_origin_dtype", PrecisionMode.KEEP_ORIGIN),
    ("allow_fp32_to_fp16", PrecisionMode.ALLOW_FP32_TO_FP16),
])
def test_v1_values(value, mode):
    opts = options(precision_mode=value)
    assert opts.mode is mode and opts.mode_name == value and opts.precision_mode == value


@pytest.mark.parametrize("value, mode", [
    ("fp16", PrecisionMode.FORCE_FP16), ("origin", PrecisionMode.KEEP_ORIGIN),
    ("cube_fp16in_fp32out", PrecisionMode.FORCE_FP32), ("mixed_float16", PrecisionMode.MIXED_FP16),
])
def test_v2_values(value, mode):
    assert options(precision_mode_v2=value).mode is mode


@pytest.mark.parametrize("key, value, mode", [
    ("precision_mode", "allow_mix_precision_bf16", PrecisionMode.MIXED_BF16),
    ("precision_mode", "allow_fp32_to_bf16", PrecisionMode.ALLOW_FP32_TO_BF16),
    ("precision_mode_v2", "mixed_bfloat16", PrecisionMode.MIXED_BF16),
])
def test_bf16_modes_on_910b(key, value, mode):
    opts = options(**{key: value, "soc_config": "Ascend910B3"})
    assert opts.mode is mode and opts.soc == "ascend910b" and opts.reduced_dtype == "bfloat16"


@pytest.mark.parametrize("key, value", [
    ("precision_mode", "allow_mix_precision_bf16"), ("precision_mode", "allow_fp32_to_bf16"),
    ("precision_mode_v2", "mixed_bfloat16"),
])
def test_bf16_modes_rejected_without_bf16(key, value):
    with pytest.raises(NpuConfigError) as info:
        options(**{key: value})
    assert "The AI core doesn't support mixed_bfloat16, allow_mix_precision_bf16 or allow_fp32_to_bf16." \
        in str(info.value)
    assert "ascend910" in str(info.value)


def test_defaults():
    assert options().mode is PrecisionMode.ALLOW_FP32_TO_FP16
    assert options().mode_name == "allow_fp32_to_fp16 (default)"
    assert options(graph_run_mode=0).mode is PrecisionMode.FORCE_FP16
    assert options(graph_run_mode=0).mode_name.startswith("force_fp16 (default")
    assert options(soc_config="ascend910b").mode is PrecisionMode.KEEP_ORIGIN
    assert options(soc_config="ascend910b").mode_name == "must_keep_origin_dtype (default)"
    assert options(soc_config="Ascend910_9391").mode is PrecisionMode.KEEP_ORIGIN
    assert options(soc_config="ascend910b", graph_run_mode=0).mode is PrecisionMode.FORCE_FP16
    assert NpuOptions().mode is PrecisionMode.ALLOW_FP32_TO_FP16 and NpuOptions().dump == DumpOptions()


def test_soc_from_environment(monkeypatch):
    monkeypatch.setenv("NPU_BRIDGE_SOC", "Ascend910B1")
    assert options().soc == "ascend910b"
    assert options(soc_config="Ascend910A").soc == "ascend910"


def test_both_precision_keys_rejected_regardless_of_values():
    with pytest.raises(NpuConfigError, match=re.escape(
            "'precision_mode' and 'precision_mode_v2' can not be assigned at the same time.")):
        options(precision_mode="allow_mix_precision", precision_mode_v2="mixed_float16")


def test_invalid_v1_value_lists_the_allowed_values_in_order():
    with pytest.raises(NpuConfigError) as info:
        options(precision_mode="FP16")
    assert ("option precision_mode value 'FP16' is invalid, it should be one of the list:['force_fp32', "
            "'allow_fp32_to_fp16', 'force_fp16', 'must_keep_origin_dtype', 'allow_mix_precision', "
            "'cube_fp16in_fp32out', 'allow_mix_precision_fp16', 'allow_mix_precision_bf16', "
            "'allow_fp32_to_bf16']") in str(info.value)


def test_invalid_value_hints():
    with pytest.raises(NpuConfigError, match="Did you mean 'allow_mix_precision'"):
        options(precision_mode="allow_mixed_precision")
    with pytest.raises(NpuConfigError, match=re.escape("'mixed_float16' is a precision_mode_v2 value")):
        options(precision_mode="mixed_float16")
    with pytest.raises(NpuConfigError, match=re.escape("'force_fp16' is a precision_mode value")):
        options(precision_mode_v2="force_fp16")


def test_invalid_v2_value():
    with pytest.raises(NpuConfigError) as info:
        options(precision_mode_v2="allow_mix_precision")
    assert ("option precision_mode_v2 value 'allow_mix_precision' is invalid, it should be one of the "
            "list:['fp16', 'origin', 'cube_fp16in_fp32out', 'mixed_float16', 'mixed_bfloat16', 'cube_hif8', "
            "'mixed_hif8']") in str(info.value)


@pytest.mark.parametrize("value", ["cube_hif8", "mixed_hif8"])
def test_hifloat8_not_supported(value):
    with pytest.raises(NpuConfigError, match="not supported"):
        options(precision_mode_v2=value)


def test_modify_mixlist_needs_a_mixed_mode(tmp_path):
    path = str(tmp_path / "ops_info.json")
    with pytest.raises(NpuConfigError) as info:
        options(precision_mode="allow_fp32_to_fp16", modify_mixlist=path)
    assert ("modify_mixlist is assigned, please ensure that precision_mode is assigned to 'allow_mix_precision' "
            "or 'allow_mix_precision_fp16' or 'allow_mix_precision_bf16'(if available).") in str(info.value)
    with pytest.raises(NpuConfigError) as info:
        options(precision_mode_v2="origin", modify_mixlist=path)
    assert ("modify_mixlist is assigned, please ensure that precision_mode_v2 is assigned to 'mixed_float16' or "
            "'mixed_bfloat16'(if available).") in str(info.value)
    with pytest.raises(NpuConfigError) as info:
        options(modify_mixlist=path, soc_config="ascend910b")
    assert "precision_mode is assigned to" in str(info.value) and "precision_mode_v2 is assigned to" in str(info.value)
    assert options(precision_mode="allow_mix_precision", modify_mixlist=path).modify_mixlist == path
    assert options(precision_mode_v2="mixed_float16", modify_mixlist=path).modify_mixlist == path


@pytest.mark.parametrize("value", [2, -1])
def test_graph_run_mode_must_be_0_or_1(value):
    with pytest.raises(NpuConfigError, match="graph_run_mode value must be 0 or 1"):
        options(graph_run_mode=value)


def test_iterations_per_loop():
    assert options(iterations_per_loop=10).iterations_per_loop == 10
    with pytest.raises(NpuConfigError, match="iterations_per_loop"):
        options(iterations_per_loop=0)


def test_unknown_key_names_the_nearest_known_key():
    with pytest.warns(NpuConfigWarning, match="'sump_mode'.*Did you mean 'dump_mode'"):
        opts = options(sump_mode="all")
    assert opts.raw["sump_mode"] == "all"


def test_a_key_from_another_ascend_tool_names_ours():
    with pytest.warns(NpuConfigWarning, match="Did you mean 'soc_config'"):
        options(soc_version="Ascend910B3", precision_mode_v2="mixed_float16")


@pytest.mark.parametrize("value, hint", [
    ("mixed_float16\n", "invisible characters: 'mixed_float16\\n'"),
    ("mixed_float16\u200b", "invisible characters"),
    ("bf16", None),
    ("mixed_float61", "Did you mean 'mixed_float16'"),
])
def test_bad_precision_values_get_a_hint_that_helps(value, hint):
    with pytest.raises(NpuConfigError) as caught:
        options(precision_mode_v2=value)
    message = str(caught.value)
    assert "is invalid, it should be one of the list" in message
    if hint is None:
        assert "Did you mean" not in message
    else:
        assert hint in message


def test_unknown_key_without_a_near_one():
    with pytest.warns(NpuConfigWarning, match="'enable_auto_mix_precision' is not an option") as record:
        options(enable_auto_mix_precision=True)
    assert "Did you mean" not in str(record[0].message)


def test_a_warning_is_reported_once_as_a_python_warning_not_also_in_the_tf_log(caplog):
    with pytest.warns(NpuConfigWarning) as record:
        options(sump_mode="all")
    assert len(record) == 1
    assert not any("sump_mode" in r.getMessage() for r in caplog.records)


def test_strict_mode_turns_a_warning_into_a_config_error(monkeypatch):
    monkeypatch.setenv("NPU_BRIDGE_STRICT", "1")
    with pytest.raises(NpuConfigError, match=r"'sump_mode' is not an option.*strict mode"):
        options(sump_mode="all")
    monkeypatch.setenv("NPU_BRIDGE_STRICT", "0")
    with pytest.warns(NpuConfigWarning):
        options(sump_mode="all")


def test_the_public_warning_category_and_warning_options_naming_it():
    import npu_bridge
    from npu_bridge.settings import apply_warning_options

    assert npu_bridge.NpuConfigWarning is NpuConfigWarning
    with warnings.catch_warnings():
        # What Python itself dropped at start-up ("Invalid -W option ignored") is applied when npu_bridge is imported.
        apply_warning_options(["error::npu_bridge.NpuConfigWarning", "ignore::DeprecationWarning"])
        assert warnings.filters[0][:3] == ("error", None, NpuConfigWarning)
        with pytest.raises(NpuConfigWarning, match="sump_mode"):
            options(sump_mode="all")


def test_precision_mode_set_through_b_warns_then_fails_like_the_adapter():
    config = npu_config()
    config.graph_options.rewrite_options.custom_optimizers[0].parameter_map["precision_mode"].b = True
    with pytest.warns(NpuConfigWarning, match=re.escape(".s (bytes) was expected")):
        with pytest.raises(NpuConfigError, match="option precision_mode value '' is invalid"):
            options_from_config(config)


def test_wrong_field_reads_the_default():
    config = npu_config()
    params = config.graph_options.rewrite_options.custom_optimizers[0].parameter_map
    params["use_off_line"].s = b"True"
    params["enable_dump"].i = 1
    with pytest.warns(NpuConfigWarning) as record:
        opts = options_from_config(config)
    assert opts.use_off_line is False and opts.dump.enable_dump is False
    messages = " ".join(str(r.message) for r in record)
    assert ".s (bytes) but .b (bool) was expected" in messages and ".i (int) but .b (bool)" in messages


def test_iterations_per_loop_through_s_reads_zero_and_fails():
    config = npu_config()
    config.graph_options.rewrite_options.custom_optimizers[0].parameter_map["iterations_per_loop"].s = b"10"
    with pytest.warns(NpuConfigWarning, match=re.escape(".i (int) was expected")):
        with pytest.raises(NpuConfigError, match="iterations_per_loop is 0"):
            options_from_config(config)


def test_every_research_key_is_known_with_its_field():
    for key, field in {"use_off_line": "b", "graph_run_mode": "i", "precision_mode": "s", "dump_path": "s",
                       "profiling_options": "s", "dynamic_input": "b", "dynamic_graph_execute_mode": "s",
                       "profiling_mode": "b", "mix_compile_mode": "b", "enable_dump_debug": "b",
                       "dump_debug_mode": "s", "enable_data_pre_proc": "b", "auto_tune_mode": "s",
                       "enable_dump": "b", "dump_mode": "s", "dump_step": "s", "hcom_parallel": "b",
                       "fusion_switch_file": "s", "modify_mixlist": "s", "iterations_per_loop": "i",
                       "customize_dtypes": "s", "soc_config": "s", "jit_compile": "s", "op_debug_level": "i",
                       "enable_exception_dump": "i", "HCCL_algorithm": "s", "graph_exec_timeout": "i"}.items():
        assert KNOWN_KEYS[key] == field, key
    assert len(KNOWN_KEYS) >= 105


def test_typical_modelzoo_config_has_no_warning(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", NpuConfigWarning)
        opts = options(use_off_line=True, precision_mode="allow_mix_precision", enable_data_pre_proc=True,
                       mix_compile_mode=False, iterations_per_loop=1, profiling_mode=False,
                       dynamic_input=True, dynamic_graph_execute_mode="lazy_recompile", hcom_parallel=True,
                       enable_dump_debug=True, dump_debug_mode="all", dump_path=str(tmp_path))
    assert opts.dump.enable_dump_debug and opts.dump.dump_path == str(tmp_path)


def test_options_are_immutable():
    opts = options()
    with pytest.raises(AttributeError):
        opts.mode = PrecisionMode.FORCE_FP32
    with pytest.raises(TypeError):
        opts.raw["x"] = 1


def test_file_options_are_kept_and_empty_means_unset():
    opts = options(customize_dtypes="/tmp/c.cfg", precision_mode="allow_mix_precision", modify_mixlist="/tmp/m.json")
    assert opts.customize_dtypes == "/tmp/c.cfg" and opts.modify_mixlist == "/tmp/m.json"
    assert options(customize_dtypes="").customize_dtypes is None


def test_customize_dtypes_under_keep_origin_warns_that_it_does_nothing():
    with pytest.warns(NpuConfigWarning, match=re.escape("customize_dtypes (/tmp/c.cfg) has no effect under "
                                                        "must_keep_origin_dtype")):
        options(customize_dtypes="/tmp/c.cfg", precision_mode="must_keep_origin_dtype")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        options(customize_dtypes="/tmp/c.cfg", precision_mode="allow_mix_precision")
    assert not [w for w in caught if "has no effect under" in str(w.message)]


def test_unknown_soc_config():
    with pytest.raises(NpuConfigError, match="soc_config value 'Ascend999'"):
        options(soc_config="Ascend999")


def test_plain_python_parameter_map():
    opts = options_from_parameter_map({"precision_mode": "force_fp32", "iterations_per_loop": 5,
                                       "use_off_line": True})
    assert opts.mode is PrecisionMode.FORCE_FP32 and opts.iterations_per_loop == 5


# --- dump options -------------------------------------------------------------------------------------------

def test_dump_options_parsed(tmp_path):
    opts = options(enable_dump=True, dump_path=str(tmp_path), dump_step="0|5|10-20", dump_mode="all",
                   dump_data="stats", dump_layer="conv1 fc2")
    assert opts.dump == DumpOptions(enable_dump=True, dump_path=str(tmp_path), dump_step=((0, 0), (5, 5), (10, 20)),
                                    dump_mode="all", dump_data="stats", dump_layer=("conv1", "fc2"))


@pytest.mark.parametrize("key", ["enable_dump", "enable_dump_debug"])
def test_dump_without_path(key):
    with pytest.raises(NpuConfigError, match=re.escape("if use dump function, dump_path must be set.")):
        options(**{key: True})


def test_dump_path_must_be_an_existing_directory(tmp_path):
    missing = str(tmp_path / "nope")
    with pytest.raises(NpuConfigError, match=re.escape(f"the path {missing} is not directory.")):
        options(enable_dump=True, dump_path=missing)
    a_file = tmp_path / "f"
    a_file.write_text("")
    with pytest.raises(NpuConfigError, match="is not directory"):
        options(enable_dump=True, dump_path=str(a_file))


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_dump_path_without_permissions(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(NpuConfigError, match="does't have read, write permissions."):
        options(enable_dump=True, dump_path=str(locked))


def test_dump_path_not_checked_when_dump_is_off():
    assert options(dump_path="/does/not/exist").dump.dump_path == "/does/not/exist"


def test_dump_mode(tmp_path):
    with pytest.raises(NpuConfigError, match=re.escape("dump mode should be one of the list:[input, output, all]")):
        options(enable_dump=True, dump_path=str(tmp_path), dump_mode="outputs")


def test_dump_debug_mode(tmp_path):
    with pytest.raises(NpuConfigError, match=re.escape(
            "dump debug mode should be one of the list:[aicore_overflow, atomic_overflow, all]")):
        options(enable_dump_debug=True, dump_path=str(tmp_path), dump_debug_mode="overflow")
    assert options(enable_dump_debug=True, dump_path=str(tmp_path),
                   dump_debug_mode="aicore_overflow").dump.dump_debug_mode == "aicore_overflow"


def test_dump_data(tmp_path):
    with pytest.raises(NpuConfigError, match=re.escape("dump_data should be 'tensor' or 'stats'.")):
        options(enable_dump=True, dump_path=str(tmp_path), dump_data="csv")


@pytest.mark.parametrize("step, message", [
    ("0,5", "dump_step string style is error, correct example:'0|5|10|50-100'"),
    ("0|", "dump_step string style is error"),
    ("a|1", "dump_step string style is error"),
    ("10-5", "in range steps, the first step is >= second step, correct example:'0|5|10-20'"),
    ("3-3", "in range steps, the first step is >= second step"),
    ("|".join(str(i) for i in range(101)), "dump_step only support dump <= 100 sets of data"),
])
def test_dump_step_errors(tmp_path, step, message):
    with pytest.raises(NpuConfigError, match=re.escape(message)):
        options(enable_dump=True, dump_path=str(tmp_path), dump_step=step)


def test_dump_step_limits_accepted(tmp_path):
    hundred = "|".join(str(i) for i in range(100))
    assert len(options(enable_dump=True, dump_path=str(tmp_path), dump_step=hundred).dump.dump_step) == 100


def test_dump_and_dump_debug_together(tmp_path):
    with pytest.raises(NpuConfigError, match="cannot be set to 1 at the same time"):
        options(enable_dump=True, enable_dump_debug=True, dump_path=str(tmp_path))


@pytest.mark.parametrize("params, message", [
    ({"jit_compile": "yes"}, "option jit_compile value 'yes' is invalid, it should be one of the "
                             "list:['true', 'false', 'auto']"),
    ({"shape_generalization_mode": "LOOSE"}, "option shape_generalization_mode value 'LOOSE' is invalid"),
    ({"variable_use_1g_huge_page": 5}, "option variable_use_1g_huge_page value '5' is invalid, it should be one of "
                                       "the list:['0', '1', '2']"),
    ({"export_compile_stat": 7}, "option export_compile_stat value '7' is invalid"),
    ({"enable_exception_dump": 5}, "enable_exception_dump should be one of 0, 1 and 2. (got 5)"),
    ({"op_select_implmode": "fast"}, "op select impl mode should be one of the list:[high_precision, "
                                     "high_performance, high_precision_for_all, high_performance_for_all]"),
    ({"optypelist_for_implmode": ""}, "when use optypelist_for_implmode, op_select_implmode must be set."),
    ({"aoe_mode": "3"}, "aoe mode:3 is invalid, aoe mode should be one of the list:['1', '2', '4']"),
    ({"buffer_optimize": "l1_optimize"}, "buffer_optimize is invalid, should be one of [l2_optimize, off_optimize]"),
    ({"graph_slice": "half"}, "graph_slice must be in ['auto', 'manual']"),
    ({"local_rank_id": 9}, "local rank id should be in [0,7] (got 9)"),
    ({"session_device_id": -1}, "session_device_id must be nonnegative integer. (got -1)"),
    ({"graph_max_parallel_model_num": 0}, "graph_max_parallel_model_num should not be less than 1 (got 0)"),
    ({"dynamic_input": True, "dynamic_graph_execute_mode": "eager"},
     "dynamic_graph_execute_mode should be lazy_recompile or dynamic_execute. (got 'eager')"),
    ({"input_shape": "data:-1,3"}, "input_shape, dynamic_dims and dynamic_node_type should use together. (only "
                                   "input_shape set)"),
    ({"input_shape": "data:-1,3", "dynamic_dims": "1,2", "dynamic_node_type": 2},
     "dynamic_node_type should be 0 or 1. (got 2)"),
    ({"enable_compress_weight": True, "compress_weight_conf": "/tmp/w.cfg"},
     "enable_compress_weight can not use with compress_weight_conf."),
])
def test_values_the_real_adapter_refuses_are_refused(params, message):
    with pytest.raises(NpuConfigError, match=re.escape(message)):
        options(**params)


def test_jit_compile_set_as_a_bool_is_the_adapters_type_error():
    """Scripts written for older adapters set jit_compile with .b; the current adapter refuses it
    (docs/BEHAVIOUR.md §1)."""
    with pytest.raises(NpuConfigError, match=re.escape("The data type of jit_compile is invalid. Expected string "
                                                       "type.")):
        options(jit_compile=True)


def test_what_the_adapter_only_logs_or_skips_is_not_an_error():
    with pytest.warns(NpuConfigWarning, match="aoe_mode is empty"):
        options(aoe_mode="")
    opts = options(dynamic_graph_execute_mode="eager")           # checked only with dynamic_input on
    assert opts.raw["dynamic_graph_execute_mode"] == "eager"
    with pytest.warns(NpuConfigWarning, match=re.escape("parameter_map['export_compile_stat'] must be set through "
                                                        ".i (int); the real adapter ignores it otherwise")):
        opts = options(export_compile_stat="2")
    assert "export_compile_stat" not in opts.raw


def test_values_the_real_adapter_accepts_pass_its_checks():
    opts = options(jit_compile="false", shape_generalization_mode="ADAPTIVE", variable_use_1g_huge_page=2,
                   export_compile_stat=1, enable_exception_dump=0, op_select_implmode="high_precision",
                   optypelist_for_implmode="Pooling", aoe_mode="2", buffer_optimize="off_optimize",
                   graph_slice="auto", local_rank_id=7, session_device_id=0, graph_max_parallel_model_num=2,
                   input_shape="data:-1,3", dynamic_dims="1;2", dynamic_node_type=1, enable_compress_weight=False,
                   compress_weight_conf="/tmp/w.cfg")
    assert opts.raw["jit_compile"] == "false"
