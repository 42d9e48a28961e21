"""tf.estimator.inputs: input_fns over in-memory numpy arrays and pandas DataFrames, as tf.data pipelines (TF 1.15
used queue runners; the batches are the same: batch_size rows, the last one possibly smaller)."""
import numpy as np
import tensorflow.compat.v1 as tf


def _dataset_input_fn(features, target, batch_size, num_epochs, shuffle, queue_capacity, what):
    if not isinstance(shuffle, bool):
        raise ValueError(f"{what}: shuffle must be given explicitly as True or False, got {shuffle!r}")
    if num_epochs is not None and num_epochs <= 0:
        raise ValueError(f"{what}: num_epochs must be > 0 or None, got {num_epochs}")
    lengths = {len(value) for value in (features.values() if isinstance(features, dict) else [features])}
    if target is not None:
        lengths |= {len(value) for value in (target.values() if isinstance(target, dict) else [target])}
    if len(lengths) != 1:
        raise ValueError(f"{what}: x and y must all have the same number of rows, got lengths {sorted(lengths)}")

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(features if target is None else (features, target))
        if shuffle:
            dataset = dataset.shuffle(queue_capacity)
        return dataset.repeat(num_epochs).batch(batch_size)
    return input_fn


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    """An input_fn yielding (features, target) batches from `x` (an array or a dict of arrays) and `y`."""
    if not isinstance(x, dict):
        x = np.asarray(x)
    return _dataset_input_fn(x, y, batch_size, num_epochs, shuffle, queue_capacity, "numpy_input_fn")


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1,
                    target_column="target"):
    """An input_fn yielding (features, target) batches from the DataFrame `x` (one feature per column) and the
    Series `y`."""
    features = {str(column): x[column].to_numpy() for column in x.columns}
    target = None if y is None else y.to_numpy()
    return _dataset_input_fn(features, target, batch_size, num_epochs, shuffle, queue_capacity, "pandas_input_fn")
