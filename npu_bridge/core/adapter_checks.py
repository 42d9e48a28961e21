"""The adapter's own checks of parameter_map values beyond the precision and dump options.

The real adapter (npu_attrs.cc) refuses these values when the session is created, so a script that sets one
never trains on the NPU; the emulator refuses them too, with the adapter's message where it is known
(research notes §1.2) and a sentence saying what is expected. Keys absent from the parameter_map are never
checked: the adapter reads a key only when it is present.
"""
from npu_bridge.core.errors import NpuConfigError

# CheckValueAllowed: the adapter's "option <name> value '<v>' is invalid, it should be one of the list:[...]".
_ALLOWED = {
    "variable_use_1g_huge_page": (0, 1, 2),
    "export_compile_stat": (0, 1, 2),
    "jit_compile": ("true", "false", "auto"),
    "shape_generalization_mode": ("STRICT", "FULL", "ADAPTIVE"),
}

# Value sets the adapter enforces with messages of their own.
_ONE_OF = {
    "enable_exception_dump": ((0, 1, 2), "enable_exception_dump should be one of 0, 1 and 2."),
    "op_select_implmode": (("high_precision", "high_performance", "high_precision_for_all",
                            "high_performance_for_all"), "op_select_implmode is invalid."),
    "aoe_mode": (("1", "2", "4"), "aoe_mode is invalid (1: subgraph tuning, 2: operator tuning, 4: gradient "
                                  "split tuning)."),
    "buffer_optimize": (("l2_optimize", "off_optimize"), "buffer_optimize is invalid."),
    "dynamic_graph_execute_mode": (("lazy_recompile", "dynamic_execute"), "dynamic_graph_execute_mode is invalid."),
    "graph_slice": (("auto", "manual"), "graph_slice is invalid."),
    "local_rank_id": (tuple(range(8)), "local_rank_id is the device number within the server, 0 to 7."),
}

# Keys the adapter reads with a type check instead of taking the field's default.
TYPE_CHECKED = ("jit_compile", "shape_generalization_mode")

_DYNAMIC_DIMS = ("input_shape", "dynamic_dims", "dynamic_node_type")


def type_error(key):
    """The adapter's error for a type-checked key set through another field than .s."""
    hint = " Older adapters read it as a bool; write 'true', 'false' or 'auto'." if key == "jit_compile" else ""
    return NpuConfigError(f"NpuOptimizer: The data type of {key} is invalid. Expected string type. "
                          f"(custom_op.parameter_map['{key}'].s = tf.compat.as_bytes(...)){hint}")


def check_adapter_values(values):
    """Raise NpuConfigError for the first value the real adapter refuses; `values` as read from the map."""
    for key, allowed in _ALLOWED.items():
        if key in values and values[key] not in allowed:
            listed = ", ".join(f"'{value}'" for value in allowed)
            raise NpuConfigError(f"NpuOptimizer: option {key} value '{values[key]}' is invalid, it should be one "
                                 f"of the list:[{listed}]")
    for key, (allowed, message) in _ONE_OF.items():
        if key in values and values[key] not in allowed:
            raise NpuConfigError(f"NpuOptimizer: {message} Got {values[key]!r}; allowed: "
                                 f"{', '.join(map(repr, allowed))}.")
    if values.get("optypelist_for_implmode") and not values.get("op_select_implmode"):
        raise NpuConfigError("NpuOptimizer: optypelist_for_implmode is set without op_select_implmode; the list "
                             "names the ops that op_select_implmode applies to, so set both (or use "
                             "op_precision_mode).")
    if values.get("enable_compress_weight") and values.get("compress_weight_conf"):
        raise NpuConfigError("NpuOptimizer: enable_compress_weight and compress_weight_conf can not be set at the "
                             "same time: compress every weight, or only those the file lists.")
    if values.get("session_device_id", 0) < 0:
        raise NpuConfigError(f"NpuOptimizer: session_device_id is {values['session_device_id']}; it must be >= 0.")
    if values.get("graph_max_parallel_model_num", 1) < 1:
        raise NpuConfigError(f"NpuOptimizer: graph_max_parallel_model_num is {values['graph_max_parallel_model_num']}"
                             "; it must be >= 1.")
    present = [key for key in _DYNAMIC_DIMS if key in values]
    if present and len(present) != len(_DYNAMIC_DIMS):
        missing = [key for key in _DYNAMIC_DIMS if key not in values]
        raise NpuConfigError(f"NpuOptimizer: {', '.join(present)} set without {', '.join(missing)}: input_shape, "
                             "dynamic_dims and dynamic_node_type describe dynamic inputs together.")
