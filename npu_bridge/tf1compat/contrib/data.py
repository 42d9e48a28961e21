"""tf.contrib.data: TF 1.15's dataset transformations, which TF 2 keeps as tf.compat.v1.data.experimental.

The same functions over the same dataset ops (MapAndBatchDataset, ParallelInterleaveDataset, ...), so a pipeline
yields what it yielded on TF 1.15; the few TF 1.15 names TF 2 dropped are rebuilt from Dataset methods.
"""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed

_EXPERIMENTAL = tf.compat.v1.data.experimental
_KEPT = (
    "AUTOTUNE", "Counter", "CsvDataset", "Optional", "RandomDataset", "Reducer", "SqlDataset", "TFRecordWriter",
    "bucket_by_sequence_length", "choose_from_datasets", "copy_to_device", "dense_to_sparse_batch",
    "enumerate_dataset", "get_next_as_optional", "get_single_element", "group_by_reducer", "group_by_window",
    "ignore_errors", "make_batched_features_dataset", "make_csv_dataset", "make_saveable_from_iterator",
    "map_and_batch", "parallel_interleave", "parse_example_dataset", "prefetch_to_device", "rejection_resample",
    "sample_from_datasets", "scan", "shuffle_and_repeat", "unbatch", "unique",
)
globals().update({name: getattr(_EXPERIMENTAL, name) for name in _KEPT})
if hasattr(_EXPERIMENTAL, "CheckpointInputPipelineHook"):     # TF <= 2.15 only (it needs Estimator)
    CheckpointInputPipelineHook = _EXPERIMENTAL.CheckpointInputPipelineHook


def batch_and_drop_remainder(batch_size):
    """A transformation batching by `batch_size` and dropping the last, smaller batch (TF 2: batch(...,
    drop_remainder=True))."""
    return lambda dataset: dataset.batch(batch_size, drop_remainder=True)


def padded_batch_and_drop_remainder(batch_size, padded_shapes, padding_values=None):
    """padded_batch without the last, smaller batch."""
    return lambda dataset: dataset.padded_batch(batch_size, padded_shapes, padding_values, drop_remainder=True)


def sloppy_interleave(map_func, cycle_length, block_length=1):
    """parallel_interleave that may yield out of order for speed, as TF 1.15's was."""
    return _EXPERIMENTAL.parallel_interleave(map_func, cycle_length, block_length, sloppy=True)


def sliding_window_batch(window_size, stride=1, window_shift=None, window_stride=1):
    """Batches of `window_size` consecutive elements, each window `window_shift` (or `stride`) after the last."""
    shift = stride if window_shift is None else window_shift

    def transform(dataset):
        windows = dataset.window(window_size, shift, window_stride, drop_remainder=True)
        return windows.flat_map(lambda *window: tf.data.Dataset.zip(window).batch(window_size)
                                if len(window) > 1 else window[0].batch(window_size))

    return transform


__getattr__ = removed.module_getattr(__name__)
