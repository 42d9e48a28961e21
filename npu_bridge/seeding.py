"""`npu-run --seed N`: the same random draws in every run of a script that seeds nothing itself.

A CI gate compares a run's loss curve with a baseline's, which only works when both runs draw the same initial
weights, dropout masks and shuffles. seed_unseeded seeds Python's `random`, numpy's global generator and the
graph-level seed of the default graph and of every tf.Graph created afterwards (scripts that build their model in
`with tf.Graph().as_default():` included). Op-level seeds then follow from the graph seed as TensorFlow derives
them, so two runs building the same graph draw the same values. A script's own tf.set_random_seed / np.random.seed
calls still win: they run later and replace these.
"""
import random

SEED_ENV = "NPU_BRIDGE_SEED"


def seed_unseeded(seed):
    import numpy as np
    from tensorflow.python.framework import ops

    random.seed(seed)
    np.random.seed(seed)
    if not hasattr(ops.Graph.__init__, "npu_bridge_seed"):
        original_init = ops.Graph.__init__

        def seeded_init(self, *args, **kwargs):
            original_init(self, *args, **kwargs)
            self.seed = seeded_init.npu_bridge_seed

        ops.Graph.__init__ = seeded_init
    ops.Graph.__init__.npu_bridge_seed = seed
    ops.get_default_graph().seed = seed
