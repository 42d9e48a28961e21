"""NPURunConfig / DumpConfig / ProfilingConfig: the parameter_map they write and the errors they raise."""
import pytest
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

from npu_bridge.core.errors import NpuConfigError
from npu_bridge.estimator.npu.estimator_support import ESTIMATOR
from npu_bridge.estimator.npu.npu_config import (
    DumpConfig, DynamicInputConfig, NPURunConfig, ProfilingConfig, npu_session_config,
)



def _params(config):
    entry, = [e for e in config.graph_options.rewrite_options.custom_optimizers if e.name == "NpuOptimizer"]
    return entry.parameter_map


def test_session_config_writes_each_value_through_its_field(tmp_path):
    dump = DumpConfig(enable_dump=True, dump_path=str(tmp_path), dump_step="0|5", dump_mode="all")
    parameters = {"use_off_line": True, "precision_mode": "allow_mix_precision", "iterations_per_loop": 3,
                  **dump.parameters(), **ProfilingConfig(True, '{"output":"/tmp"}').parameters()}
    params = _params(npu_session_config(parameters))
    assert params["use_off_line"].b and params["enable_dump"].b and params["profiling_mode"].b
    assert params["precision_mode"].s == b"allow_mix_precision"
    assert params["iterations_per_loop"].i == 3
    assert params["dump_path"].s == str(tmp_path).encode()
    assert (params["dump_step"].s, params["dump_mode"].s) == (b"0|5", b"all")
    assert params["profiling_options"].s == b'{"output":"/tmp"}'


def test_session_config_turns_remapping_and_memory_optimization_off_and_keeps_user_settings():
    user = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=2)
    config = npu_session_config({"use_off_line": True}, user)
    assert config.inter_op_parallelism_threads == 2
    assert config.graph_options.rewrite_options.remapping == RewriterConfig.OFF
    assert config.graph_options.rewrite_options.memory_optimization == RewriterConfig.OFF
    assert config.allow_soft_placement
    assert not user.graph_options.rewrite_options.custom_optimizers


def test_session_config_errors_are_those_of_the_session_path():
    with pytest.raises(NpuConfigError, match="'precision_mode' and 'precision_mode_v2' can not be assigned"):
        npu_session_config({"precision_mode": "force_fp16", "precision_mode_v2": "fp16"})
    with pytest.raises(NpuConfigError, match="option precision_mode value 'fp17' is invalid"):
        npu_session_config({"precision_mode": "fp17"})
    with pytest.raises(NpuConfigError, match="dump_path must be set"):
        npu_session_config(DumpConfig(enable_dump=True).parameters())


def test_profiling_config_records_options_without_a_profiler():
    assert ProfilingConfig().parameters() == {"profiling_mode": False}


def test_run_config_writes_the_npu_parameter_map(tmp_path):
    config = NPURunConfig(model_dir=str(tmp_path), iterations_per_loop=4, precision_mode="allow_mix_precision",
                          save_checkpoints_steps=10, dump_config=DumpConfig(enable_dump_debug=True,
                                                                            dump_path=str(tmp_path)))
    params = _params(config.session_config)
    assert params["use_off_line"].b
    assert params["iterations_per_loop"].i == 4
    assert params["precision_mode"].s == b"allow_mix_precision"
    assert params["enable_dump_debug"].b
    assert config.model_dir == str(tmp_path) and config.save_checkpoints_steps == 10
    assert config.iterations_per_loop == 4
    assert config.session_config.graph_options.rewrite_options.remapping == RewriterConfig.OFF
    assert isinstance(config, ESTIMATOR.RunConfig)


def test_run_config_passes_adapter_options_through():
    config = NPURunConfig(fusion_switch_file="/tmp/fusion.cfg", modify_mixlist=None, precision_mode_v2="origin")
    params = _params(config.session_config)
    assert params["fusion_switch_file"].s == b"/tmp/fusion.cfg"
    assert params["precision_mode_v2"].s == b"origin"
    assert "modify_mixlist" not in params


@pytest.mark.parametrize("kwargs, error, message", [
    ({"mix_compile_mode": 1}, TypeError, "mix_compile_mode"),
    ({"jit_compile": True}, TypeError, "jit_compile"),
    ({"iterations_per_loop": 0}, ValueError, "iterations_per_loop must be a positive integer"),
    ({"mix_compile_mode": True, "iterations_per_loop": 2}, ValueError, "iterations_per_loop must be 1"),
    ({"graph_run_mode": 2}, ValueError, '"graph_run_mode" value must be 0 or 1'),
    ({"dump_config": {"enable_dump": True}}, ValueError, "dump_config must be a DumpConfig"),
    ({"horovod_mode": "yes"}, ValueError, "horovod_mode"),
    ({"dynamic_input_config": {"input_shape": "data:-1,3"}}, ValueError,
     "dynamic_input_config must be a DynamicInputConfig, got dict"),
    ({"precision_mode": "allow_mix_precision", "precision_mode_v2": "mixed_float16"}, NpuConfigError,
     "can not be assigned at the same time"),
    ({"modify_mixlist": "/tmp/ops_info.json", "precision_mode": "force_fp32"}, NpuConfigError,
     "modify_mixlist is assigned"),
])
def test_run_config_rejects_what_the_adapter_rejects(kwargs, error, message):
    with pytest.raises(error, match=message):
        NPURunConfig(**kwargs)


def test_misspelt_adapter_options_warn_with_the_nearest_key():
    from npu_bridge.core.errors import NpuConfigWarning

    with pytest.warns(NpuConfigWarning, match="precision_mode"):
        npu_session_config({"precison_mode": "allow_mix_precision"})


def test_run_config_checkpoints_by_steps_by_default():
    assert NPURunConfig().save_checkpoints_steps == 100


def test_dynamic_input_config_is_written_and_an_estimator_trains_with_any_batch_size(tmp_path):
    """The NPU compiles a graph per listed batch size; the CPU kernels take any shape, so the config is recorded
    (input_shape, dynamic_dims, dynamic_node_type as on the NPU) and the Estimator trains unmodified."""
    from npu_bridge.estimator.npu.npu_estimator import NPUEstimator, NPUEstimatorSpec

    dynamic = DynamicInputConfig(input_shape="x:-1,3", dynamic_dims="2;4", dynamic_node_type=0)
    config = NPURunConfig(model_dir=str(tmp_path), dynamic_input_config=dynamic, log_step_count_steps=None)
    params = _params(config.session_config)
    assert (params["input_shape"].s, params["dynamic_dims"].s, params["dynamic_node_type"].i) == \
        (b"x:-1,3", b"2;4", 0)

    def model_fn(features, labels, mode):
        kernel = tf.compat.v1.get_variable("kernel", [3, 1])
        loss = tf.reduce_mean(tf.square(tf.matmul(features, kernel) - labels))
        step = tf.compat.v1.train.get_or_create_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        return NPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)

    def input_fn():
        x = tf.ones([6, 3])
        return tf.data.Dataset.from_tensor_slices((x, x[:, :1])).batch(4)       # batches of 4, then 2

    estimator = NPUEstimator(model_fn=model_fn, config=config)
    estimator.train(input_fn)
    assert estimator.get_variable_value("global_step") == 2


def test_dynamic_input_config_rejects_what_the_npu_cannot_compile():
    with pytest.raises(ValueError, match="dynamic_node_type must be 0 \\(dataset\\) or 1 \\(placeholder\\), got 2"):
        DynamicInputConfig("x:-1,3", "2;4", 2)
    with pytest.raises(ValueError, match="input_shape and dynamic_dims are strings"):
        DynamicInputConfig("x:-1,3", [2, 4], 0)
