"""tf.contrib.sparsemax: sparsemax and its loss (Martins & Astudillo 2016), as TF 1.15 computed them.

TF 2 has no sparsemax; this is TF 1.15's formula on ordinary ops: sort the logits, find the support size k(z), and
clip z - tau(z) at zero."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed


def sparsemax(logits, name=None):
    """The Euclidean projection of each row of `logits` ([batch, classes]) onto the probability simplex."""
    with tf.compat.v1.name_scope(name, "sparsemax", [logits]):
        logits = tf.convert_to_tensor(logits, name="logits")
        obs = tf.shape(logits)[0]
        dims = tf.shape(logits)[1]
        z = logits
        z_sorted, _ = tf.nn.top_k(z, k=dims)
        z_cumsum = tf.cumsum(z_sorted, axis=1)
        k = tf.range(1, tf.cast(dims, logits.dtype) + 1, dtype=logits.dtype)
        z_check = 1 + k * z_sorted > z_cumsum
        k_z = tf.reduce_sum(tf.cast(z_check, tf.int32), axis=1)
        indices = tf.stack([tf.range(0, obs), k_z - 1], axis=1)
        tau_sum = tf.gather_nd(z_cumsum, indices)
        tau_z = (tau_sum - 1) / tf.cast(k_z, logits.dtype)
        return tf.maximum(tf.cast(0, logits.dtype), z - tau_z[:, tf.newaxis])


def sparsemax_loss(logits, sparsemax, labels, name=None):
    """The sparsemax loss per row, given the logits, their sparsemax and the (one-hot or soft) labels."""
    with tf.compat.v1.name_scope(name, "sparsemax_loss", [logits, sparsemax, labels]):
        logits = tf.convert_to_tensor(logits, name="logits")
        sparsemax = tf.convert_to_tensor(sparsemax, name="sparsemax")
        labels = tf.convert_to_tensor(labels, name="labels")
        z = logits
        sum_s = tf.where(sparsemax > 0, sparsemax * (z - 0.5 * sparsemax), tf.zeros_like(sparsemax))
        q_part = labels * (0.5 * labels - z)
        return tf.reduce_sum(sum_s + q_part, axis=1)


__getattr__ = removed.module_getattr(__name__)
