"""NpuOptimizer options: read a ConfigProto's "NpuOptimizer" custom optimizer the way the real adapter does.

Real scripts configure the NPU through `custom_op.parameter_map[key].b/.s/.i`. The real adapter reads each key
through one fixed AttrValue field, rejects some values with known messages, and silently ignores unknown keys
and values written to the wrong field (which then read as "", False or 0). We reproduce every rejection with
the real message inside an NpuConfigError, and turn each silent case into an NpuConfigWarning that names the
nearest known key or the field that was expected, because those silent cases are how real scripts go wrong.

The precision mode is resolved here, once, with the defaults of docs/BEHAVIOUR.md §2 applied: the rest of the
package only looks at `NpuOptions.mode`.
"""
import difflib
import functools
import os
import re
import sys
import types
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import tensorflow as tf
from tensorflow.core.protobuf import config_pb2

from npu_bridge.core.adapter_checks import READ_ONLY_THROUGH_FIELD, TYPE_CHECKED, check_adapter_values, type_error
from npu_bridge.core.contract import PrecisionMode
from npu_bridge.core.errors import (
    MAX_SHOWN_VALUE, STRICT_ENV, NpuConfigError, NpuConfigWarning, did_you_mean, shown)
from npu_bridge.core.settings import CoreSettings
from npu_bridge.core.soc import KEEP_ORIGIN_BY_DEFAULT, selected_soc, soc_info

OPTIMIZER_NAME = "NpuOptimizer"


# Allowed values in the adapter's own order (its error message lists them so).
PRECISION_MODE_VALUES = {
    "force_fp32": PrecisionMode.FORCE_FP32,
    "allow_fp32_to_fp16": PrecisionMode.ALLOW_FP32_TO_FP16,
    "force_fp16": PrecisionMode.FORCE_FP16,
    "must_keep_origin_dtype": PrecisionMode.KEEP_ORIGIN,
    "allow_mix_precision": PrecisionMode.MIXED_FP16,
    "cube_fp16in_fp32out": PrecisionMode.FORCE_FP32,
    "allow_mix_precision_fp16": PrecisionMode.MIXED_FP16,
    "allow_mix_precision_bf16": PrecisionMode.MIXED_BF16,
    "allow_fp32_to_bf16": PrecisionMode.ALLOW_FP32_TO_BF16,
}
PRECISION_MODE_V2_VALUES = {
    "fp16": PrecisionMode.FORCE_FP16,
    "origin": PrecisionMode.KEEP_ORIGIN,
    "cube_fp16in_fp32out": PrecisionMode.FORCE_FP32,
    "mixed_float16": PrecisionMode.MIXED_FP16,
    "mixed_bfloat16": PrecisionMode.MIXED_BF16,
    "cube_hif8": None,
    "mixed_hif8": None,
}
_MIXED_V1 = ("allow_mix_precision", "allow_mix_precision_fp16", "allow_mix_precision_bf16")
_MIXED_V2 = ("mixed_float16", "mixed_bfloat16", "mixed_hif8")
_BF16_MODES = (PrecisionMode.MIXED_BF16, PrecisionMode.ALLOW_FP32_TO_BF16)

_MIXLIST_V1_MESSAGE = ("modify_mixlist is assigned, please ensure that precision_mode is assigned to "
                       "'allow_mix_precision' or 'allow_mix_precision_fp16' or 'allow_mix_precision_bf16'"
                       "(if available).")
_MIXLIST_V2_MESSAGE = ("modify_mixlist is assigned, please ensure that precision_mode_v2 is assigned to "
                       "'mixed_float16' or 'mixed_bfloat16'(if available).")
_MIXLIST_NEITHER_MESSAGE = ("modify_mixlist is assigned, please ensure that precision_mode is assigned to "
                            "'allow_mix_precision' or 'allow_mix_precision_fp16' or 'allow_mix_precision_bf16'"
                            "(if available), or precision_mode_v2 is assigned to 'mixed_float16' or "
                            "'mixed_bfloat16'(if available).")

# Every parameter_map key the current adapter reads (docs/BEHAVIOUR.md §1), with the AttrValue field it reads it from.
_KEYS_B = """use_off_line enable_data_pre_proc mix_compile_mode in_out_pair_flag lower_functional_ops frozen_variable
    enable_dump enable_dump_debug profiling_mode hcom_parallel is_tailing_optimization enable_compress_weight
    oo_constant_folding input_batch_cpy external_weight variable_format_optimize enable_graph_parallel
    all_tensor_not_empty dynamic_input compile_dynamic_mode hcom_multi_mode
    enable_reduce_precision min_group_size"""
# Written by NPUEstimator but read by no current adapter: known (no warning), never suggested as a spelling fix.
_IGNORED_KEYS = ("enable_reduce_precision", "min_group_size")
# Names from other Ascend tools that scripts put in parameter_map by mistake, too far from ours for difflib.
_KEY_ALIASES = {"soc_version": "soc_config", "soc": "soc_config"}
_KEYS_S = """in_out_pair job device_type soc_config local_device_list variable_placement
    precision_mode precision_mode_v2 modify_mixlist customize_dtypes op_precision_mode op_select_implmode
    optypelist_for_implmode experimental_accelerate_train_mode
    dump_path dump_step dump_mode dump_data dump_layer dump_debug_mode quant_dumpable op_debug_config debug_dir
    fusion_switch_file profiling_options stream_max_parallel_num ac_parallel_enable enable_scope_fusion_passes
    buffer_optimize compress_weight_conf op_compiler_cache_mode op_compiler_cache_dir graph_compiler_cache_dir
    aicore_num oo_level optimization_switch memory_optimization_policy graph_memory_max_size
    variable_memory_max_size graph_slice insert_op_file resource_config_path graph_parallel_option_path
    auto_multistream_parallel_mode dynamic_graph_execute_mode dynamic_inputs_shape_range input_shape dynamic_dims
    shape_generalization_mode jit_compile HCCL_algorithm aoe_mode work_path distribute_config aoe_config_file
    auto_tune_mode experimental_logical_device_cluster_deploy_mode experimental_logical_device_id
    experimental_model_deploy_mode experimental_model_deploy_devicelist"""
_KEYS_I = """graph_run_mode iterations_per_loop session_device_id deterministic task_index local_rank_id
    graph_max_parallel_model_num enable_exception_dump op_debug_level export_compile_stat enable_small_channel
    input_fusion_size atomic_clean_policy static_memory_policy variable_use_1g_huge_page topo_sorting_mode
    dynamic_node_type compile_hybrid_mode hccl_timeout op_wait_timeout op_execute_timeout stream_sync_timeout
    event_sync_timeout graph_exec_timeout"""
KNOWN_KEYS = types.MappingProxyType({
    **{key: "b" for key in _KEYS_B.split()},
    **{key: "s" for key in _KEYS_S.split()},
    **{key: "i" for key in _KEYS_I.split()},
})
_FIELD_NAMES = {"b": ".b (bool)", "s": ".s (bytes)", "i": ".i (int)", "f": ".f (float)", "list": ".list",
                "type": ".type", "shape": ".shape", "tensor": ".tensor", "func": ".func",
                "placeholder": ".placeholder"}
_FIELD_DEFAULTS = {"b": False, "s": "", "i": 0}
_FIELD_EXAMPLES = {"b": "True", "s": "tf.compat.as_bytes(...)", "i": "1"}


@dataclass(frozen=True)
class DumpOptions:
    enable_dump: bool = False
    dump_path: str | None = None
    dump_step: tuple[tuple[int, int], ...] | None = None
    dump_mode: str = "output"
    dump_data: str = "tensor"
    dump_layer: tuple[str, ...] = ()
    enable_dump_debug: bool = False
    dump_debug_mode: str = "all"


@dataclass(frozen=True)
class NpuOptions:
    use_off_line: bool = True
    graph_run_mode: int = 1
    precision_mode: str | None = None
    precision_mode_v2: str | None = None
    mode: PrecisionMode = PrecisionMode.ALLOW_FP32_TO_FP16
    mode_name: str = "allow_fp32_to_fp16 (default)"
    soc: str = "ascend910"
    modify_mixlist: str | None = None
    customize_dtypes: str | None = None
    iterations_per_loop: int = 1
    dump: DumpOptions = field(default_factory=DumpOptions)
    raw: types.MappingProxyType = field(default_factory=lambda: types.MappingProxyType({}))
    settings: CoreSettings = field(default_factory=CoreSettings)   # what the environment said, at the edge

    @property
    def reduced_dtype(self) -> str:
        """The dtype this mode lowers float32 to: "bfloat16" for the bf16 modes, else "float16"."""
        return "bfloat16" if self.mode in _BF16_MODES else "float16"


def config_warning(message: str, *, strict: bool) -> None:
    """Report a mistake the real adapter would swallow: as an NpuConfigWarning, or in strict mode as an error
    (`strict`: CoreSettings.strict, which the caller was given).

    The warning is attributed to the user's line (the first frame outside npu_bridge and TensorFlow), whichever
    entry point (Session, NPURunConfig, npu_config_proto, the CLI) led here. It is a Python warning only (not a
    TensorFlow log line too), so each problem is printed once and Python's warning filters control it.
    """
    if strict:
        raise NpuConfigError(f"{message} (strict mode: {STRICT_ENV}=1 or --strict makes configuration warnings "
                             "errors)")
    warnings.warn(message, NpuConfigWarning, stacklevel=_first_user_frame())


# npu_bridge itself, and the site-packages folder holding TensorFlow (TF, Keras, the Estimator, pytest...).
_LIBRARY_DIRS = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
                 os.path.dirname(os.path.dirname(tf.__file__)) + os.sep)


def library_frame(filename: str) -> bool:
    """Is this source file part of npu_bridge or of the installed libraries (TF, Keras, pytest...)?"""
    return filename.startswith(_LIBRARY_DIRS)


def _first_user_frame():
    """warnings.warn stacklevel of the nearest caller outside npu_bridge and TensorFlow."""
    frame: types.FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_LIBRARY_DIRS):
        frame, level = frame.f_back, level + 1
    return level


def options_from_config(config: config_pb2.ConfigProto | None,
                        settings: CoreSettings | None = None) -> "NpuOptions | None":
    """NpuOptions of the custom optimizer named exactly "NpuOptimizer" in a ConfigProto, or None if it has none.

    `settings`: see options_from_parameter_map.
    """
    settings = _settings(settings)
    parameter_map = npu_parameter_map(config, settings)
    return None if parameter_map is None else options_from_parameter_map(parameter_map, settings)


def npu_parameter_map(config: config_pb2.ConfigProto | None, settings: CoreSettings) -> Mapping | None:
    """The parameter_map of the "NpuOptimizer" entries of a ConfigProto (merged in order, as the adapter reads
    them), or None when it has none; warns about near misses of the name."""
    if config is None:
        return None
    warn = functools.partial(config_warning, strict=settings.strict)
    entries = list(config.graph_options.rewrite_options.custom_optimizers)
    ours = [entry for entry in entries if entry.name == OPTIMIZER_NAME]
    for entry in entries:
        near = entry.name.strip().replace("_", "").lower() in ("npuoptimizer", "npuoptimiser")
        if entry.name != OPTIMIZER_NAME and near:
            warn(f"custom optimizer {entry.name!r} is ignored: the Ascend adapter only reads the entry "
                 f"named exactly '{OPTIMIZER_NAME}'.")
    if not ours:
        return None
    if len(ours) == 1:
        return ours[0].parameter_map
    # The adapter reads every entry of that name in order, each key it finds overwriting the value read before.
    merged = {}
    for entry in ours:
        merged.update(entry.parameter_map)
    warn(f"the ConfigProto has {len(ours)} custom optimizers named '{OPTIMIZER_NAME}'; like the real "
         "adapter, their parameter_maps are merged in order, a later entry's value winning for a key both "
         "set.")
    return merged


def _which_field(value):
    """(field, python value) of an AttrValue, or of a plain python value standing in for one."""
    if hasattr(value, "WhichOneof"):
        which = value.WhichOneof("value")
        return which, (getattr(value, which) if which else None)
    if isinstance(value, bool):
        return "b", value
    if isinstance(value, int):
        return "i", value
    if isinstance(value, (str, bytes)):
        return "s", value
    if isinstance(value, float):
        return "f", value
    raise NpuConfigError(f"parameter_map value {value!r} is not an AttrValue (set .b, .s or .i)")


def _as_python(which, value):
    if which == "s":
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    if which == "b":
        return bool(value)
    if which == "i":
        return int(value)
    return value


# File and folder options: read as the OS spells paths, so a non-UTF-8 bytes path opens the file it names.
_PATH_KEYS = frozenset({"modify_mixlist", "customize_dtypes", "dump_path"})


def _path_value(key, value, warn):
    text = os.fsdecode(value) if isinstance(value, bytes) else str(value)
    if "\x00" in text:
        raise NpuConfigError(f"NpuOptimizer: parameter_map['{key}'] is {text!r}, a path with a NUL byte: no file can "
                             "have that name (the adapter's C++ side would read the path only up to the NUL).")
    if not text:
        warn(f"NpuOptimizer parameter_map['{key}'] is an empty path: no file is read (the real adapter "
             "takes an empty value for not set); remove the key or give the path.")
    return text


def _read_parameter_map(parameter_map, warn):
    """{key: python value} read through the field the adapter uses, warning about every silent mistake."""
    values = {}
    for key in sorted(parameter_map):
        which, value = _which_field(parameter_map[key])
        expected = KNOWN_KEYS.get(key)
        if expected is None:
            suggestible = [known for known in KNOWN_KEYS if known not in _IGNORED_KEYS]
            nearest = [_KEY_ALIASES[key]] if key in _KEY_ALIASES else \
                difflib.get_close_matches(key, suggestible, n=3, cutoff=0.75)
            hint = did_you_mean(nearest)
            warn(f"NpuOptimizer parameter_map key '{key}' is not an option the Ascend adapter reads; "
                 f"the real adapter ignores it silently, so it has no effect.{hint}")
            values[key] = _as_python(which, value) if which else None
            continue
        if which == expected:
            values[key] = _path_value(key, value, warn) if key in _PATH_KEYS else _as_python(which, value)
            continue
        if key in TYPE_CHECKED:
            raise type_error(key)
        if key in READ_ONLY_THROUGH_FIELD:
            warn(f"NpuOptimizer parameter_map['{key}'] must be set through {_FIELD_NAMES[expected]}; the "
                 "real adapter ignores it otherwise and keeps its default.")
            continue
        default = _FIELD_DEFAULTS[expected]
        if which is None:
            warn(f"NpuOptimizer parameter_map['{key}'] is present but holds no value; the adapter reads "
                 f"its {_FIELD_NAMES[expected]} field and gets {default!r}.")
        else:
            warn(
                f"NpuOptimizer parameter_map['{key}'] was set through {_FIELD_NAMES[which]} but "
                f"{_FIELD_NAMES[expected]} was expected (custom_op.parameter_map['{key}'].{expected} = "
                f"{_FIELD_EXAMPLES[expected]}); the real adapter silently reads {default!r} instead of "
                f"{_as_python(which, value)!r}.")
        values[key] = default
    return values


def _allowed_list_error(key, value, allowed):
    listed = ", ".join(f"'{name}'" for name in allowed)
    other_key, other_values = (("precision_mode_v2", PRECISION_MODE_V2_VALUES) if key == "precision_mode"
                               else ("precision_mode", PRECISION_MODE_VALUES))
    if value in other_values:
        hint = f" '{value}' is a {other_key} value: set it through parameter_map['{other_key}'] instead."
    elif len(value) > MAX_SHOWN_VALUE:
        hint = ""
    elif value.strip() != value or not value.isprintable():
        hint = f" The value holds whitespace or invisible characters: {value!r}."
    else:
        # Never suggest a float16 mode for a bfloat16 spelling or the other way round ('bf16' is near 'fp16').
        nearest = [name for name in difflib.get_close_matches(value.lower(), allowed, n=3, cutoff=0.75)
                   if ("bf" in name) == ("bf" in value.lower())]
        hint = did_you_mean(nearest)
    return NpuConfigError(f"NpuOptimizer: option {key} value '{shown(value)}' is invalid, it should be one of the "
                          f"list:[{listed}]{hint}")


def _resolve_precision(values, soc, graph_run_mode):
    """(mode, mode_name) per docs/BEHAVIOUR.md §2."""
    has_v1, has_v2 = "precision_mode" in values, "precision_mode_v2" in values
    if has_v1 and has_v2:
        raise NpuConfigError("NpuOptimizer: 'precision_mode' and 'precision_mode_v2' can not be assigned at the "
                             "same time. Keep one of them (precision_mode_v2 is the newer spelling).")
    if has_v1:
        value = values["precision_mode"]
        if value not in PRECISION_MODE_VALUES:
            raise _allowed_list_error("precision_mode", value, PRECISION_MODE_VALUES)
        mode, name = PRECISION_MODE_VALUES[value], value
    elif has_v2:
        value = values["precision_mode_v2"]
        if value not in PRECISION_MODE_V2_VALUES:
            raise _allowed_list_error("precision_mode_v2", value, PRECISION_MODE_V2_VALUES)
        chosen = PRECISION_MODE_V2_VALUES[value]
        if chosen is None:
            raise NpuConfigError(
                f"NpuOptimizer: precision_mode_v2 '{value}' (HiFloat8) is not supported: the Ascend TF adapter "
                "documents it as not supported in this version, and npu_bridge does not emulate HiFloat8. Use "
                "'mixed_float16' or 'mixed_bfloat16'.")
        mode, name = chosen, value
    elif graph_run_mode == 0:
        mode, name = PrecisionMode.FORCE_FP16, "force_fp16 (default for graph_run_mode=0)"
    elif soc in KEEP_ORIGIN_BY_DEFAULT:
        mode, name = PrecisionMode.KEEP_ORIGIN, "must_keep_origin_dtype (default)"
    else:
        mode, name = PrecisionMode.ALLOW_FP32_TO_FP16, "allow_fp32_to_fp16 (default)"
    if mode in _BF16_MODES and not soc_info(soc).supports_bf16:
        raise NpuConfigError(
            f"NpuOptimizer: precision mode '{name}' on soc {soc}: The AI core doesn't support mixed_bfloat16, "
            "allow_mix_precision_bf16 or allow_fp32_to_bf16. bfloat16 needs ascend910b or later "
            "(soc_config / NPU_BRIDGE_SOC).")
    return mode, name


def _check_mixlist_mode(values):
    if not values.get("modify_mixlist"):
        return
    if "precision_mode" in values:
        if values["precision_mode"] not in _MIXED_V1:
            raise NpuConfigError(f"NpuOptimizer: {_MIXLIST_V1_MESSAGE} (precision_mode is "
                                 f"'{values['precision_mode']}')")
    elif "precision_mode_v2" in values:
        if values["precision_mode_v2"] not in _MIXED_V2:
            raise NpuConfigError(f"NpuOptimizer: {_MIXLIST_V2_MESSAGE} (precision_mode_v2 is "
                                 f"'{values['precision_mode_v2']}')")
    else:
        raise NpuConfigError(f"NpuOptimizer: {_MIXLIST_NEITHER_MESSAGE} Neither is set, and the default mode "
                             "does not use the black/white/gray lists.")


_DUMP_STEP_PATTERN = re.compile(r"(\d+-\d+\||\d+\|)+")


def _parse_dump_step(text):
    """'0|5|10-20' -> ((0, 0), (5, 5), (10, 20)), with the adapter's checks and messages."""
    if not _DUMP_STEP_PATTERN.fullmatch(text + "|"):
        raise NpuConfigError(f"NpuOptimizer: dump_step '{shown(text)}': dump_step string style is error, correct "
                             "example:'0|5|10|50-100'")
    groups = text.split("|")
    if len(groups) > 100:
        raise NpuConfigError(f"NpuOptimizer: dump_step has {len(groups)} groups: dump_step only support dump "
                             "<= 100 sets of data")
    steps = []
    for group in groups:
        first, _, last = group.partition("-")
        start, end = int(first), int(last or first)
        if last and start >= end:
            raise NpuConfigError(f"NpuOptimizer: dump_step group '{group}': in range steps, the first step is >= "
                                 "second step, correct example:'0|5|10-20'")
        steps.append((start, end))
    return tuple(steps)


def _check_dump_path(path):
    if not path:
        raise NpuConfigError("NpuOptimizer: if use dump function, dump_path must be set. (enable_dump or "
                             "enable_dump_debug is True; set parameter_map['dump_path'].s to an existing "
                             "directory)")
    if not os.path.isdir(path):
        raise NpuConfigError(f"NpuOptimizer: dump_path: the path {path} is not directory. (it must exist "
                             "before the session starts)")
    if not os.access(path, os.R_OK | os.W_OK):
        raise NpuConfigError(f"NpuOptimizer: dump_path: the path {path} does't have read, write permissions.")


def _dump_options(values):
    enable_dump = values.get("enable_dump", False)
    enable_debug = values.get("enable_dump_debug", False)
    if enable_dump and enable_debug:
        raise NpuConfigError("NpuOptimizer: enable_dump and enable_dump_debug are both True: "
                             "ge.exec.enableDump and ge.exec.enableDumpDebug cannot be set to 1 at the same time.")
    dump_path = values.get("dump_path") or None
    if enable_dump or enable_debug:
        _check_dump_path(dump_path)
    dump_step = None
    dump_mode = values.get("dump_mode", "output")
    dump_data = values.get("dump_data", "tensor")
    dump_debug_mode = values.get("dump_debug_mode", "all")
    if enable_dump:
        if values.get("dump_step"):
            dump_step = _parse_dump_step(values["dump_step"])
        if dump_mode not in ("input", "output", "all"):
            raise NpuConfigError(f"NpuOptimizer: dump_mode '{dump_mode}': dump mode should be one of the "
                                 "list:[input, output, all]")
        if dump_data not in ("tensor", "stats"):
            raise NpuConfigError(f"NpuOptimizer: dump_data '{dump_data}': dump_data should be 'tensor' or "
                                 "'stats'.")
    if enable_debug and dump_debug_mode not in ("aicore_overflow", "atomic_overflow", "all"):
        raise NpuConfigError(f"NpuOptimizer: dump_debug_mode '{dump_debug_mode}': dump debug mode should be one "
                             "of the list:[aicore_overflow, atomic_overflow, all]")
    return DumpOptions(enable_dump=enable_dump, dump_path=dump_path, dump_step=dump_step, dump_mode=dump_mode,
                       dump_data=dump_data, dump_layer=tuple(values.get("dump_layer", "").split()),
                       enable_dump_debug=enable_debug, dump_debug_mode=dump_debug_mode)


def _optional_path(values, key):
    """A file-path option; "" (e.g. the key set through the wrong field) counts as not set."""
    return values.get(key) or None


def _settings(settings: CoreSettings | None) -> CoreSettings:
    """The settings given, or for offline use (nothing given) the process environment's as it is now."""
    if settings is not None:
        return settings
    from npu_bridge.settings import core_settings

    return core_settings()


def options_from_parameter_map(parameter_map: Mapping, settings: CoreSettings | None = None) -> NpuOptions:
    """NpuOptions from an NpuOptimizer parameter_map (AttrValues; plain python values are accepted too).

    `settings` (CoreSettings: strict mode, the operator library root, the default soc) is what the environment
    says, read by the caller at its edge; None reads the environment now (npu_bridge.settings.core_settings),
    for offline use. The options carry it to everything that loads their files.
    """
    settings = _settings(settings)
    warn = functools.partial(config_warning, strict=settings.strict)
    values = _read_parameter_map(parameter_map, warn)
    graph_run_mode = values.get("graph_run_mode", 1)
    if graph_run_mode not in (0, 1):
        raise NpuConfigError(f"NpuOptimizer: graph_run_mode is {graph_run_mode}: graph_run_mode value must be 0 "
                             "or 1 (0 = online inference, 1 = training)")
    iterations_per_loop = values.get("iterations_per_loop", 1)
    if iterations_per_loop < 1:
        raise NpuConfigError(f"NpuOptimizer: iterations_per_loop is {iterations_per_loop}; it must be a positive "
                             "integer (the number of training steps one sess.run executes)")
    soc = selected_soc(values.get("soc_config"), settings.soc)
    mode, mode_name = _resolve_precision(values, soc, graph_run_mode)
    _check_mixlist_mode(values)
    check_adapter_values(values, warn)
    if mode is PrecisionMode.KEEP_ORIGIN and _optional_path(values, "customize_dtypes"):
        warn(f"NpuOptimizer: customize_dtypes ({values['customize_dtypes']}) has no effect under "
             f"{mode_name}: the NPU ignores the file when every op keeps its original dtype.")
    return NpuOptions(
        use_off_line=values.get("use_off_line", True),
        graph_run_mode=graph_run_mode,
        precision_mode=values.get("precision_mode"),
        precision_mode_v2=values.get("precision_mode_v2"),
        mode=mode,
        mode_name=mode_name,
        soc=soc,
        modify_mixlist=_optional_path(values, "modify_mixlist"),
        customize_dtypes=_optional_path(values, "customize_dtypes"),
        iterations_per_loop=iterations_per_loop,
        dump=_dump_options(values),
        raw=types.MappingProxyType(values),
        settings=settings,
    )
