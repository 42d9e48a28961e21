"""tf.contrib.cloud: the module imports, and BigtableClient raises one clear error when a script creates it.

TF 1.15's BigtableClient read Google Cloud Bigtable tables through kernels linked against the Bigtable C++ client,
over the network, with Google Cloud credentials; TensorFlow 2 dropped those kernels and an Ascend training job
reads its data from local or OBS storage. The ported ImageNet and MiniGo input pipelines import the class at the
top and create it only when a Bigtable source is configured, so the import works and the constructor (the first
use) raises ContribRemovedError naming the symbol and the google-cloud-bigtable client.
"""
from npu_bridge.tf1compat.contrib import removed


class BigtableClient:
    """BigtableClient(project_id, instance_id, ...): raises ContribRemovedError (see the module)."""

    def __init__(self, project_id, instance_id, connection_pool_size=None, max_receive_message_size=None):
        raise removed.error("contrib.cloud.BigtableClient")


__getattr__ = removed.module_getattr(__name__)
