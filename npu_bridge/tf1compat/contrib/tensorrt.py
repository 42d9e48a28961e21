"""tf.contrib.tensorrt on a machine without TensorRT: the graph comes back unconverted.

TF-TRT replaced the segments of a frozen graph that TensorRT can run with TRTEngineOp nodes and left everything
else as TensorFlow ops; a segment it cannot convert stays as it was. With no TensorRT (no NVIDIA GPU, and an Ascend
NPU never runs TensorRT engines) no segment converts, so create_inference_graph does the CPU-path thing: it returns
a copy of the input GraphDef, which computes the same outputs, and warns once that nothing was converted.
Converting a SavedModel (input_saved_model_dir) raises ContribRemovedError: that path writes a new SavedModel,
which a script can do itself with tf.compat.v1.saved_model.
"""
import logging

from npu_bridge.tf1compat.contrib import removed

_LOG = logging.getLogger(__name__)
_warned = []


class TrtPrecisionMode:
    """The precision_mode values TF 1.15 accepted."""
    FP32 = "FP32"
    FP16 = "FP16"
    INT8 = "INT8"


def _unconverted(graph_def, caller):
    if graph_def is None:
        raise removed.error(f"contrib.tensorrt.{caller} of a SavedModel (input_saved_model_dir)")
    if not _warned:
        _warned.append(True)
        _LOG.warning("tf.contrib.tensorrt.%s: no TensorRT on this machine, so the graph is returned unconverted "
                     "(it computes the same outputs with TensorFlow's own ops)", caller)
    converted = type(graph_def)()
    converted.CopyFrom(graph_def)
    return converted


def create_inference_graph(input_graph_def, outputs, max_batch_size=1, max_workspace_size_bytes=2 << 20,
                           precision_mode=TrtPrecisionMode.FP32, minimum_segment_size=3, is_dynamic_op=False,
                           maximum_cached_engines=1, cached_engine_batches=None, use_calibration=True,
                           input_saved_model_dir=None, input_saved_model_tags=None,
                           input_saved_model_signature_key=None, output_saved_model_dir=None, session_config=None):
    """TF 1.15's signature; returns input_graph_def unconverted (see the module)."""
    if precision_mode.upper() not in (TrtPrecisionMode.FP32, TrtPrecisionMode.FP16, TrtPrecisionMode.INT8):
        raise ValueError(f"tf.contrib.tensorrt.create_inference_graph: precision_mode {precision_mode!r} is not "
                         f"one of FP32, FP16, INT8")
    return _unconverted(input_graph_def, "create_inference_graph")


def calib_graph_to_infer_graph(calibration_graph_def, is_dynamic_op=False):
    """The INT8 calibration step: the unconverted graph needs none, so it comes back as it is (a copy)."""
    return _unconverted(calibration_graph_def, "calib_graph_to_infer_graph")


__getattr__ = removed.module_getattr(__name__)
