"""NPURunConfig, DumpConfig and ProfilingConfig: the Estimator-path way to configure the NpuOptimizer.

NPURunConfig is a tf.estimator.RunConfig whose session_config carries the NpuOptimizer custom optimizer with
every NPU argument written into its parameter_map, so an Estimator's sessions get the same emulation as a
hand-configured tf.Session. The parameter_map is validated by npu_bridge.core.options, so a bad value fails here
with the same error a session would raise. It is TensorFlow's RunConfig up to 2.15 and npu_bridge's
(npu_bridge.tf1compat.estimator) on later TensorFlow, which removed tf.estimator.
"""
import enum

import tensorflow.compat.v1 as tf
from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2

from npu_bridge.core.customize_dtypes import load_customize_dtypes
from npu_bridge.core.errors import NpuConfigError
from npu_bridge.core.mixlist import build_precision_lists
from npu_bridge.settings import parameter_map_options
from npu_bridge.estimator.npu.estimator_support import ESTIMATOR

NPU_OPTIMIZER_NAME = "NpuOptimizer"


class NpuExecutePlacement(enum.Enum):
    """Where npu_scope.npu_variable_scope places the variables created inside it (HOST: in host memory, for
    embedding tables too large for the device). On the CPU every placement is the same memory."""
    ALL = "all"
    CUBE = "cube"
    VECTOR = "vector"
    TAISHAN = "taishan"
    DVPP = "dvpp"
    HOST = "host"


class DumpConfig:
    """Data dump (enable_dump, dump_path, dump_step, dump_mode) and overflow dump (enable_dump_debug) options."""

    def __init__(self, enable_dump=False, dump_path=None, dump_step=None, dump_mode="output",
                 enable_dump_debug=False, dump_debug_mode="all", dump_data="tensor", dump_layer=None):
        self._enable_dump = enable_dump
        self._dump_path = dump_path
        self._dump_step = dump_step
        self._dump_mode = dump_mode
        self._enable_dump_debug = enable_dump_debug
        self._dump_debug_mode = dump_debug_mode
        self._dump_data = dump_data
        self._dump_layer = dump_layer

    def parameters(self):
        """The parameter_map entries these options set."""
        params = {"enable_dump": bool(self._enable_dump), "enable_dump_debug": bool(self._enable_dump_debug),
                  "dump_mode": self._dump_mode, "dump_debug_mode": self._dump_debug_mode,
                  "dump_data": self._dump_data}
        for key, value in (("dump_path", self._dump_path), ("dump_step", self._dump_step),
                           ("dump_layer", self._dump_layer)):
            if value is not None:
                params[key] = value
        return params


class DynamicInputConfig:
    """Input shapes with -1 dims and the values those dims take (the NPU compiles one graph per value set).

    The emulator runs TensorFlow's CPU kernels, which take any shape, so the graph needs nothing compiled per
    value set; the three fields still go into the parameter_map (input_shape, dynamic_dims, dynamic_node_type)
    as on the NPU. dynamic_node_type: 0 when the dynamic inputs come from a dataset, 1 from placeholders.
    """

    def __init__(self, input_shape, dynamic_dims, dynamic_node_type):
        if not isinstance(input_shape, str) or not isinstance(dynamic_dims, str):
            raise ValueError(f"DynamicInputConfig: input_shape and dynamic_dims are strings (e.g. 'data:-1,3' and "
                             f"'1;2;4'), got {input_shape!r} and {dynamic_dims!r}")
        if dynamic_node_type not in (0, 1) or isinstance(dynamic_node_type, bool):
            raise ValueError(f"DynamicInputConfig: dynamic_node_type must be 0 (dataset) or 1 (placeholder), "
                             f"got {dynamic_node_type!r}")
        self._input_shape = input_shape
        self._dynamic_dims = dynamic_dims
        self._dynamic_node_type = dynamic_node_type

    def parameters(self):
        return {"input_shape": self._input_shape, "dynamic_dims": self._dynamic_dims,
                "dynamic_node_type": self._dynamic_node_type}


class ProfilingConfig:
    """Profiling switch and options. The emulator has no device profiler: the options are kept, not acted on."""

    def __init__(self, enable_profiling=False, profiling_options=None):
        self._enable_profiling = enable_profiling
        self._profiling_options = profiling_options
        if enable_profiling:
            tf.logging.info("npu_bridge: NPU profiling is not emulated; ProfilingConfig options are recorded only")

    def parameters(self):
        params = {"profiling_mode": bool(self._enable_profiling)}
        if self._profiling_options is not None:
            params["profiling_options"] = self._profiling_options
        return params


def _set_attr(parameter_map, key, value):
    """Write a python value through the AttrValue field the adapter reads for its type."""
    if isinstance(value, bool):
        parameter_map[key].b = value
    elif isinstance(value, int):
        parameter_map[key].i = value
    else:
        parameter_map[key].s = tf.compat.as_bytes(str(value))


def npu_session_config(parameters, session_config=None):
    """A ConfigProto (a copy of `session_config`) whose NpuOptimizer entry holds `parameters`, validated.

    Like the real adapter it turns TF's remapper and memory optimizer off and allows soft placement. A bad value
    or a missing / malformed modify_mixlist or customize_dtypes file raises NpuConfigError here, with the frames
    of the validation dropped so the user sees their own call and the message.
    """
    config = config_pb2.ConfigProto()
    if session_config is not None:
        config.CopyFrom(session_config)
    rewrite_options = config.graph_options.rewrite_options
    entries = [e for e in rewrite_options.custom_optimizers if e.name == NPU_OPTIMIZER_NAME]
    custom_op = entries[-1] if entries else rewrite_options.custom_optimizers.add(name=NPU_OPTIMIZER_NAME)
    for key, value in parameters.items():
        _set_attr(custom_op.parameter_map, key, value)
    rewrite_options.remapping = rewriter_config_pb2.RewriterConfig.OFF
    rewrite_options.memory_optimization = rewriter_config_pb2.RewriterConfig.OFF
    config.allow_soft_placement = True
    try:
        _validate(custom_op.parameter_map)
    except NpuConfigError as error:
        raise error.with_traceback(None) from None
    return config


def _validate(parameter_map):
    """Every check a session makes when it is created: option values, the mixlist and customize_dtypes files."""
    options = parameter_map_options(parameter_map)
    build_precision_lists(options)
    if options.customize_dtypes:
        load_customize_dtypes(options.customize_dtypes, strict=options.settings.strict)


def _check_run_config_args(iterations_per_loop, mix_compile_mode, jit_compile, graph_run_mode, dump_config,
                           profiling_config, horovod_mode):
    """The argument checks the real NPURunConfig makes before anything reaches the session."""
    if not isinstance(mix_compile_mode, bool):
        raise TypeError(f'"mix_compile_mode" type must be bool, got {type(mix_compile_mode).__name__}')
    if not isinstance(jit_compile, str):
        raise TypeError(f'"jit_compile" type must be str ("true", "false" or "auto"), got {type(jit_compile).__name__}')
    if isinstance(iterations_per_loop, bool) or not isinstance(iterations_per_loop, int) or iterations_per_loop < 1:
        raise ValueError(f"iterations_per_loop must be a positive integer, got {iterations_per_loop!r}")
    if mix_compile_mode and iterations_per_loop != 1:
        raise ValueError(f"if mix_compile_mode is True, iterations_per_loop must be 1, got {iterations_per_loop}")
    if graph_run_mode not in (0, 1):
        raise ValueError(f'"graph_run_mode" value must be 0 or 1, got {graph_run_mode!r}')
    if dump_config is not None and not isinstance(dump_config, DumpConfig):
        raise ValueError(f"dump_config must be a DumpConfig, got {type(dump_config).__name__}")
    if profiling_config is not None and not isinstance(profiling_config, ProfilingConfig):
        raise ValueError(f"profiling_config must be a ProfilingConfig, got {type(profiling_config).__name__}")
    if not isinstance(horovod_mode, bool):
        raise ValueError(f'"horovod_mode" type must be bool, got {type(horovod_mode).__name__}')


class NPURunConfig(ESTIMATOR.RunConfig):
    """RunConfig carrying the NpuOptimizer options; arguments keep the real adapter's names and defaults.

    Arguments not listed explicitly but known to the adapter (e.g. op_debug_config, hccl_timeout) may be passed
    as keyword arguments; they are written into the parameter_map as given, and npu_bridge.core.options warns
    about misspelt ones. `distribute` (an NPU distribution strategy) has nothing to distribute over on one
    emulated device and is not used.
    """

    def __init__(self, iterations_per_loop=1, profiling_config=None, model_dir=None, tf_random_seed=None,
                 save_summary_steps=0, save_checkpoints_steps=None, save_checkpoints_secs=None, session_config=None,
                 keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 distribute=None, enable_data_pre_proc=True, precision_mode=None, enable_reduce_precision=False,
                 variable_format_optimize=True, mix_compile_mode=False, hcom_parallel=True,
                 graph_memory_max_size=None, variable_memory_max_size=None, auto_tune_mode=None, dump_config=None,
                 stream_max_parallel_num=None, is_tailing_optimization=False, horovod_mode=False, graph_run_mode=1,
                 op_debug_level=0, enable_scope_fusion_passes=None, enable_exception_dump=2,
                 op_select_implmode=None, optypelist_for_implmode=None, dynamic_input_config=None,
                 work_path=None, buffer_optimize="l2_optimize", enable_small_channel=0, fusion_switch_file=None,
                 enable_compress_weight=False, compress_weight_conf=None, op_compiler_cache_mode=None,
                 op_compiler_cache_dir=None, debug_dir=None, hcom_multi_mode=False, dynamic_input=False,
                 dynamic_graph_execute_mode="dynamic_execute", dynamic_inputs_shape_range=None,
                 train_distribute=None, eval_distribute=None, local_rank_id=None, local_device_list=None,
                 session_device_id=None, modify_mixlist=None, op_precision_mode=None, soc_config=None,
                 customize_dtypes=None, precision_mode_v2=None, deterministic=0, jit_compile="auto",
                 **adapter_options):
        _check_run_config_args(iterations_per_loop, mix_compile_mode, jit_compile, graph_run_mode, dump_config,
                               profiling_config, horovod_mode)
        if dynamic_input_config is not None and not isinstance(dynamic_input_config, DynamicInputConfig):
            raise ValueError(f"NPURunConfig: dynamic_input_config must be a DynamicInputConfig, "
                             f"got {type(dynamic_input_config).__name__}")
        parameters = {
            "use_off_line": True, "iterations_per_loop": iterations_per_loop, "graph_run_mode": graph_run_mode,
            "enable_data_pre_proc": enable_data_pre_proc, "mix_compile_mode": mix_compile_mode,
            "hcom_parallel": hcom_parallel, "is_tailing_optimization": is_tailing_optimization,
            "enable_reduce_precision": enable_reduce_precision, "variable_format_optimize": variable_format_optimize,
            "op_debug_level": op_debug_level, "enable_exception_dump": enable_exception_dump,
            "buffer_optimize": buffer_optimize, "enable_small_channel": enable_small_channel,
            "enable_compress_weight": enable_compress_weight, "hcom_multi_mode": hcom_multi_mode,
            "dynamic_input": dynamic_input, "dynamic_graph_execute_mode": dynamic_graph_execute_mode,
            "deterministic": deterministic, "jit_compile": jit_compile,
        }
        optional = {
            "precision_mode": precision_mode, "precision_mode_v2": precision_mode_v2,
            "modify_mixlist": modify_mixlist, "customize_dtypes": customize_dtypes,
            "op_precision_mode": op_precision_mode, "op_select_implmode": op_select_implmode,
            "optypelist_for_implmode": optypelist_for_implmode, "soc_config": soc_config,
            "graph_memory_max_size": graph_memory_max_size, "variable_memory_max_size": variable_memory_max_size,
            "auto_tune_mode": auto_tune_mode, "stream_max_parallel_num": stream_max_parallel_num,
            "enable_scope_fusion_passes": enable_scope_fusion_passes, "work_path": work_path,
            "fusion_switch_file": fusion_switch_file, "compress_weight_conf": compress_weight_conf,
            "op_compiler_cache_mode": op_compiler_cache_mode, "op_compiler_cache_dir": op_compiler_cache_dir,
            "debug_dir": debug_dir, "dynamic_inputs_shape_range": dynamic_inputs_shape_range,
            "local_rank_id": local_rank_id, "local_device_list": local_device_list,
            "session_device_id": session_device_id, **adapter_options,
        }
        parameters.update({key: value for key, value in optional.items() if value is not None})
        if dump_config is not None:
            parameters.update(dump_config.parameters())
        if profiling_config is not None:
            parameters.update(profiling_config.parameters())
        if dynamic_input_config is not None:
            parameters.update(dynamic_input_config.parameters())
        if save_checkpoints_secs is None and save_checkpoints_steps is None:
            save_checkpoints_steps = 100  # the real NPURunConfig's default: checkpoints by steps, not by time
        self.iterations_per_loop = iterations_per_loop
        self.dump_config = dump_config
        self.profiling_config = profiling_config
        self.precision_mode = precision_mode
        self.precision_mode_v2 = precision_mode_v2
        self.mix_compile_mode = mix_compile_mode
        self.graph_run_mode = graph_run_mode
        super().__init__(
            model_dir=model_dir, tf_random_seed=tf_random_seed, save_summary_steps=save_summary_steps,
            save_checkpoints_steps=save_checkpoints_steps, save_checkpoints_secs=save_checkpoints_secs,
            session_config=npu_session_config(parameters, session_config),
            keep_checkpoint_max=keep_checkpoint_max, keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            log_step_count_steps=log_step_count_steps, train_distribute=train_distribute,
            eval_distribute=eval_distribute)
