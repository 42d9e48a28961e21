"""tf.contrib.distribute: the strategies TF 2 keeps as tf.distribute, under TF 1.15's names (CrossTowerOps was
renamed CrossDeviceOps)."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed

_DISTRIBUTE = tf.distribute
AllReduceCrossDeviceOps = _DISTRIBUTE.experimental.CollectiveCommunication
AllReduceCrossTowerOps = _DISTRIBUTE.HierarchicalCopyAllReduce
CrossDeviceOps = CrossTowerOps = _DISTRIBUTE.CrossDeviceOps
HierarchicalCopyAllReduce = _DISTRIBUTE.HierarchicalCopyAllReduce
MirroredStrategy = tf.compat.v1.distribute.MirroredStrategy
NcclAllReduce = _DISTRIBUTE.NcclAllReduce
OneDeviceStrategy = tf.compat.v1.distribute.OneDeviceStrategy
ReductionToOneDevice = ReductionToOneDeviceCrossDeviceOps = _DISTRIBUTE.ReductionToOneDevice

__getattr__ = removed.module_getattr(__name__)
