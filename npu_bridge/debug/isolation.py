"""Every run npu-debug makes of a script starts from the same state: the same seeds, a fresh model_dir.

suggest records a script, then reruns it to prove its files; compare runs it once. Two things would make those
runs start differently, or change what the user's next run sees:
- unseeded random generators (an Estimator draws its initial weights from an unseeded graph): Python's,
  numpy's and every new tf.Graph's seed are set (a script's own seeds still win: it sets them after);
- checkpoints: an Estimator restores from its model_dir, where the recording (or the user's last run) left
  one. Inside `fresh_state` each Estimator gets its own copy of its model_dir as it was before the tool ran
  (empty when there was none), so every run restores the same thing and the user's folder is not written.
"""
import contextlib
import itertools
import os
import random
import shutil
import tempfile

import numpy as np
import tensorflow as tf

from npu_bridge import tf_private


def seed_everything(seed):
    """Seed Python's, numpy's and the default graph's generators."""
    random.seed(seed)
    np.random.seed(seed)
    tf.compat.v1.set_random_seed(seed)


@contextlib.contextmanager
def _seeded_graphs(seed):
    original = tf.Graph.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.seed = seed

    tf.Graph.__init__ = init
    try:
        yield
    finally:
        tf.Graph.__init__ = original


@contextlib.contextmanager
def _fresh_model_dirs(folder, seed):
    from npu_bridge.estimator.npu.estimator_support import ESTIMATOR  # TensorFlow's, or npu_bridge's after 2.15

    base = getattr(ESTIMATOR, "Estimator", None)
    if base is None:
        yield
        return
    original = base.__init__
    numbers = itertools.count()

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        fresh = os.path.join(folder, f"model_dir_{next(numbers)}")
        users = tf_private.estimator_config(self).model_dir
        if users and os.path.isdir(users):
            shutil.copytree(users, fresh)
        else:
            os.makedirs(fresh)
        changes = {"model_dir": fresh}
        if seed is not None and tf_private.estimator_config(self).tf_random_seed is None:
            changes["tf_random_seed"] = seed
        tf_private.set_estimator_config(self, tf_private.estimator_config(self).replace(**changes))

    base.__init__ = init
    try:
        yield
    finally:
        base.__init__ = original


@contextlib.contextmanager
def fresh_state(seed=None):
    """Inside: new graphs seeded with `seed` (None: left unseeded) and Estimators on a fresh model_dir copy."""
    folder = tempfile.mkdtemp(prefix="npu-debug-state-")
    try:
        with contextlib.ExitStack() as stack:
            if seed is not None:
                stack.enter_context(_seeded_graphs(seed))
            stack.enter_context(_fresh_model_dirs(folder, seed))
            yield
    finally:
        shutil.rmtree(folder, ignore_errors=True)
