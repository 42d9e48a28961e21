"""tf.contrib.summary: TF 1.15's graph-mode summary writers, which TF 2 keeps as summary_ops_v2 (the same
functions: scalar(name, tensor, family=None, step=None), create_file_writer, always_record_summaries, ...)."""
from tensorflow.python.ops.summary_ops_v2 import (  # noqa: F401
    SummaryWriter,
    always_record_summaries,
    audio,
    create_file_writer,
    flush,
    generic,
    graph,
    histogram,
    image,
    import_event,
    initialize,
    never_record_summaries,
    record_summaries_every_n_global_steps,
    scalar,
    summary_writer_initializer_op,
)
from tensorflow.python.ops.summary_ops_v2 import all_v2_summary_ops as all_summary_ops  # noqa: F401

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
