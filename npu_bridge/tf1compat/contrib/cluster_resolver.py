"""tf.contrib.cluster_resolver: TensorFlow's cluster resolvers, which TF 2 keeps as tf.distribute.cluster_resolver.

BERT-family ports build a TPUClusterResolver only when --use_tpu is set; on this CPU-only path it is TF's own
class, so constructing one fails as it did on TF 1.15 without a TPU."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed

_RESOLVERS = tf.distribute.cluster_resolver
ClusterResolver = _RESOLVERS.ClusterResolver
GCEClusterResolver = _RESOLVERS.GCEClusterResolver
KubernetesClusterResolver = _RESOLVERS.KubernetesClusterResolver
SimpleClusterResolver = _RESOLVERS.SimpleClusterResolver
SlurmClusterResolver = _RESOLVERS.SlurmClusterResolver
TFConfigClusterResolver = _RESOLVERS.TFConfigClusterResolver
TPUClusterResolver = _RESOLVERS.TPUClusterResolver
UnionClusterResolver = _RESOLVERS.UnionResolver

__getattr__ = removed.module_getattr(__name__)
