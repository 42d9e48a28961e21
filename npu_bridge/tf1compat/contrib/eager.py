"""tf.contrib.eager (`import tensorflow.contrib.eager as tfe`): the names ported scripts use. A TF1 script runs as a
graph, so its eager-only branches (`if tfe.in_eager_mode(): ...`, `tfe.Iterator(dataset)`) stay off as they did under
TF 1.15's graph mode; any other name raises the contrib error naming TensorFlow 2's eager execution."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed

executing_eagerly = tf.executing_eagerly
in_eager_mode = tf.executing_eagerly        # TF 1.x's older name of executing_eagerly


def Iterator(dataset):
    """TF 1.15's eager iterator over `dataset` (iter(dataset) in TensorFlow 2); like TF 1.15's, only when executing
    eagerly."""
    if not tf.executing_eagerly():
        raise RuntimeError("tf.contrib.eager.Iterator(dataset) works only when executing eagerly, as in TF 1.15; in a "
                           "graph iterate with tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()")
    return iter(dataset)


__getattr__ = removed.module_getattr(__name__)
