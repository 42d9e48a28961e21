"""The session configurations compared in the step-time and memory benchmarks.

Every configuration starts from the same base ConfigProto (remapping and memory optimization OFF, as Ascend
scripts set them and as the real adapter forces them), so that a ratio against `plain_fp32` measures the
emulation or the precision rewrite and not a difference in TensorFlow's own grappler passes. TensorFlow is
imported inside the functions: the parent process of the benchmark only needs the names and stays light.
"""
# name -> (kind, NpuOptimizer parameters). kind: "plain" (TF float32), "npu" (emulated), "tf_amp" (TF's pass).
CONFIGS = {
    "plain_fp32": ("plain", {}),
    "npu_origin": ("npu", {"precision_mode": "must_keep_origin_dtype"}),
    "npu_mixed_float16": ("npu", {"precision_mode_v2": "mixed_float16"}),
    "npu_mixed_bfloat16": ("npu", {"precision_mode_v2": "mixed_bfloat16", "soc_config": "Ascend910B1"}),
    "npu_force_fp16": ("npu", {"precision_mode": "force_fp16"}),
    "tf_amp_cpu": ("tf_amp", {}),
}


def base_config():
    from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2

    config = config_pb2.ConfigProto()
    rewrite = config.graph_options.rewrite_options
    rewrite.remapping = rewriter_config_pb2.RewriterConfig.OFF
    rewrite.memory_optimization = rewriter_config_pb2.RewriterConfig.OFF
    return config


def npu_config(parameters):
    """ConfigProto with the NpuOptimizer entry exactly as an Ascend training script writes it."""
    config = base_config()
    custom = config.graph_options.rewrite_options.custom_optimizers.add()
    custom.name = "NpuOptimizer"
    custom.parameter_map["use_off_line"].b = True
    for key, value in parameters.items():
        custom.parameter_map[key].s = value.encode()
    return config


def tf_amp_config():
    from tensorflow.core.protobuf import rewriter_config_pb2

    config = base_config()
    config.graph_options.rewrite_options.auto_mixed_precision_cpu = rewriter_config_pb2.RewriterConfig.ON
    return config


def session_config(name):
    kind, parameters = CONFIGS[name]
    if kind == "npu":
        return npu_config(parameters)
    if kind == "tf_amp":
        return tf_amp_config()
    return base_config()


def is_emulated(name):
    return CONFIGS[name][0] == "npu"
