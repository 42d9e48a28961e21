"""contrib.tfprof.model_analyzer: print_model_analysis and its option dicts, as tf.compat.v1.profiler.profile and
ProfileOptionBuilder's dicts (the same keys TF 1.15's constants had)."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed

_BUILDER = tf.compat.v1.profiler.ProfileOptionBuilder
TRAINABLE_VARS_PARAMS_STAT_OPTIONS = _BUILDER.trainable_variables_parameter()
FLOAT_OPS_OPTIONS = _BUILDER.float_operation()
PRINT_ALL_TIMING_MEMORY = _BUILDER.time_and_memory()


def print_model_analysis(graph, run_meta=None, op_log=None, tfprof_cmd="scope",
                         tfprof_options=TRAINABLE_VARS_PARAMS_STAT_OPTIONS):
    """Print (and return) the profile of `graph`: parameters by scope by default, FLOPs with FLOAT_OPS_OPTIONS."""
    return tf.compat.v1.profiler.profile(graph, run_meta=run_meta, cmd=tfprof_cmd, options=tfprof_options)


__getattr__ = removed.module_getattr(__name__)
