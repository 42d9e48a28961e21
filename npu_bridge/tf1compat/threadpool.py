"""TF 1.15's `tensorflow.python.data.experimental.ops.threadpool`: a tf.data pipeline on a private thread pool.

Input pipelines of the ported ResNet / AlexNet family call
`threadpool.override_threadpool(dataset, threadpool.PrivateThreadPool(128, display_name=...))`. TensorFlow 2.x
dropped the module and expresses the same thing as dataset options (`options.threading.private_threadpool_size`
and `max_intra_op_parallelism`), which is what this builds: the dataset's elements are unchanged.
"""
import tensorflow as tf


class PrivateThreadPool:
    """A thread pool of `num_threads` threads for one dataset (TF 1.15 signature)."""

    def __init__(self, num_threads, display_name=None, max_intra_op_parallelism=1):
        if num_threads < 1:
            raise ValueError(f"PrivateThreadPool: num_threads must be at least 1, got {num_threads}")
        self.num_threads = num_threads
        self.display_name = display_name or "private_thread_pool"
        self.max_intra_op_parallelism = max_intra_op_parallelism


def override_threadpool(dataset, thread_pool):
    """`dataset`, its ops run on `thread_pool` (a PrivateThreadPool)."""
    if not isinstance(thread_pool, PrivateThreadPool):
        raise TypeError(f"override_threadpool: expected a threadpool.PrivateThreadPool, got {type(thread_pool)!r}")
    options = tf.data.Options()
    options.threading.private_threadpool_size = thread_pool.num_threads
    options.threading.max_intra_op_parallelism = thread_pool.max_intra_op_parallelism
    return dataset.with_options(options)
