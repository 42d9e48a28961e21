"""The adapter's own checks of parameter_map values beyond the precision and dump options.

The real adapter (npu_attrs.cc) refuses these values when the session is created, so a script that sets one
never trains on the NPU; the emulator refuses them too, with the adapter's message where it is known
(docs/BEHAVIOUR.md §1) and a sentence saying what is expected. Keys absent from the parameter_map are never
checked: the adapter reads a key only when it is present.
"""
from npu_bridge.core.errors import NpuConfigError, shown

# CheckValueAllowed: the adapter's "option <name> value '<v>' is invalid, it should be one of the list:[...]".
_ALLOWED = {
    "variable_use_1g_huge_page": (0, 1, 2),
    "export_compile_stat": (0, 1, 2),
    "jit_compile": ("true", "false", "auto"),
    "shape_generalization_mode": ("STRICT", "FULL", "ADAPTIVE"),
}

# Value sets the adapter enforces with messages of their own (its texts).
_ONE_OF = {
    "enable_exception_dump": ((0, 1, 2), "enable_exception_dump should be one of 0, 1 and 2."),
    "op_select_implmode": (("high_precision", "high_performance", "high_precision_for_all",
                            "high_performance_for_all"),
                           "op select impl mode should be one of the list:[high_precision, high_performance, "
                           "high_precision_for_all, high_performance_for_all]"),
    "buffer_optimize": (("l2_optimize", "off_optimize"),
                        "buffer_optimize is invalid, should be one of [l2_optimize, off_optimize]"),
    "graph_slice": (("auto", "manual"), "graph_slice must be in ['auto', 'manual']"),
    "local_rank_id": (tuple(range(8)), "local rank id should be in [0,7]"),
}

# Keys the adapter reads with a type check instead of taking the field's default.
TYPE_CHECKED = ("jit_compile", "shape_generalization_mode")
# Keys the adapter reads only through their own field: set through another one they are ignored, and the
# adapter keeps its own default.
READ_ONLY_THROUGH_FIELD = ("export_compile_stat", "oo_constant_folding")

_DYNAMIC_DIMS = ("input_shape", "dynamic_dims", "dynamic_node_type")


def type_error(key):
    """The adapter's error for a type-checked key set through another field than .s."""
    hint = " Older adapters read it as a bool; write 'true', 'false' or 'auto'." if key == "jit_compile" else ""
    return NpuConfigError(f"NpuOptimizer: The data type of {key} is invalid. Expected string type. "
                          f"(custom_op.parameter_map['{key}'].s = tf.compat.as_bytes(...)){hint}")


def check_adapter_values(values, warn):
    """Raise NpuConfigError for the first value the real adapter refuses; `values` as read from the map. `warn`
    reports what the adapter only logs."""
    for key, allowed in _ALLOWED.items():
        if key in values and values[key] not in allowed:
            listed = ", ".join(f"'{value}'" for value in allowed)
            raise NpuConfigError(f"NpuOptimizer: option {key} value '{shown(values[key])}' is invalid, it should "
                                 f"be one of the list:[{listed}]")
    for key, (allowed, message) in _ONE_OF.items():
        if key in values and values[key] not in allowed:
            raise NpuConfigError(f"NpuOptimizer: {message} (got {shown(repr(values[key]))})")
    _check_aoe_mode(values, warn)
    if values.get("dynamic_input") and values.get("dynamic_graph_execute_mode", "dynamic_execute") not in (
            "lazy_recompile", "dynamic_execute"):
        raise NpuConfigError("NpuOptimizer: dynamic_graph_execute_mode should be lazy_recompile or dynamic_execute. "
                             f"(got {values['dynamic_graph_execute_mode']!r})")
    if "optypelist_for_implmode" in values and "op_select_implmode" not in values:
        raise NpuConfigError("NpuOptimizer: when use optypelist_for_implmode, op_select_implmode must be set.")
    if values.get("enable_compress_weight") and values.get("compress_weight_conf"):
        raise NpuConfigError("NpuOptimizer: enable_compress_weight can not use with compress_weight_conf.")
    if values.get("session_device_id", 0) < 0:
        raise NpuConfigError(f"NpuOptimizer: session_device_id must be nonnegative integer. "
                             f"(got {values['session_device_id']})")
    if values.get("graph_max_parallel_model_num", 1) < 1:
        raise NpuConfigError(f"NpuOptimizer: graph_max_parallel_model_num should not be less than 1 "
                             f"(got {values['graph_max_parallel_model_num']})")
    present = [key for key in _DYNAMIC_DIMS if key in values]
    if present and len(present) != len(_DYNAMIC_DIMS):
        raise NpuConfigError(f"NpuOptimizer: input_shape, dynamic_dims and dynamic_node_type should use together. "
                             f"(only {', '.join(present)} set)")
    if present and values["dynamic_node_type"] not in (0, 1):
        raise NpuConfigError(f"NpuOptimizer: dynamic_node_type should be 0 or 1. (got {values['dynamic_node_type']})")


def _check_aoe_mode(values, warn):
    """An empty aoe_mode is only logged by the adapter; any other value outside 1/2/4 is an error."""
    if "aoe_mode" not in values:
        return
    mode = values["aoe_mode"]
    if mode == "":
        warn("NpuOptimizer: aoe_mode is empty; the adapter logs \"aoe_mode should be one of the list:['1','2','4']\" "
             "and runs without tuning.")
    elif mode not in ("1", "2", "4"):
        raise NpuConfigError(f"NpuOptimizer: aoe mode:{mode} is invalid, aoe mode should be one of the list:"
                             "['1', '2', '4']")
