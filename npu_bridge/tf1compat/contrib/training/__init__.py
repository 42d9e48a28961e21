"""tf.contrib.training: HParams (ours: TF 2 has none) and the evaluation loop helpers (tf-slim's, TF 1.15's)."""
from tensorflow.python.training.checkpoint_utils import (  # noqa: F401
    checkpoints_iterator,
    wait_for_new_checkpoint,
)
from tf_slim.training.evaluation import (  # noqa: F401
    StopAfterNEvalsHook,
    SummaryAtEndHook,
    evaluate_once,
    evaluate_repeatedly,
    get_or_create_eval_step,
)
from tf_slim.training.training import (  # noqa: F401
    add_gradients_summaries,
    clip_gradient_norms,
    clip_gradient_norms_fn,
    create_train_op,
    multiply_gradients,
    train,
)

from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.training import python  # noqa: F401
from npu_bridge.tf1compat.contrib.training.feeding_queue_runner import FeedingQueueRunner  # noqa: F401
from npu_bridge.tf1compat.contrib.training.hparam import HParams  # noqa: F401

__getattr__ = removed.module_getattr(__name__)
