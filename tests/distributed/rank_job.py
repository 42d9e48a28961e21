"""A script the multi-rank tests run through `npu-run --ranks N` (or as N shells): prints `RESULT <json>`.

    rank_job.py collectives      every hccl_ops collective on rank-seeded data
    rank_job.py all              that, then a data-parallel MLP (NPUDistributedOptimizer, broadcast hook) on this
                                 rank's shard, then mixed_float16 loss scaling whose overflows happen on rank 1 only,
                                 then a Keras fit with npu_keras_optimizer and the broadcast callback
    rank_job.py fail kill|raise  rank 1 dies (SIGKILL) or raises after the first all-reduce; rank 0 keeps reducing
    rank_job.py fail hang        every rank keeps reducing until it is stopped
"""
import json
import os
import signal
import sys
import time

import numpy as np

from npu_bridge.npu_init import *  # noqa: F401,F403
from npu_bridge.hccl import hccl_ops
from hccl.manage.api import create_group, get_rank_id, get_rank_size

import mlp_model

rank, size = get_rank_id(), get_rank_size()


def report(**values):
    print("RESULT " + json.dumps(dict(values, rank=rank)), flush=True)


def collectives():
    x = np.random.RandomState(rank).uniform(-2, 2, (2 * size, 3)).astype(np.float32)
    create_group("evens", len(range(0, size, 2)), list(range(0, size, 2)))
    ops = {
        "sum": hccl_ops.allreduce(x, "sum"), "prod": hccl_ops.allreduce(x, "prod"),
        "max": hccl_ops.allreduce(x, "max", fusion=2, fusion_id=3), "min": hccl_ops.allreduce(x, "min", fusion=0),
        "half": hccl_ops.allreduce(x.astype(np.float16), "sum"),
        "gather": hccl_ops.allgather(x, size), "bcast": hccl_ops.broadcast([x], size - 1)[0],
        "scatter": hccl_ops.reduce_scatter(x, "sum", size), "reduce": hccl_ops.reduce(x, "max", 0),
    }
    counts = [rank + 1 + peer for peer in range(size)]          # rank r sends r + 1 + j elements to rank j
    received = [peer + 1 + rank for peer in range(size)]
    ops["alltoallv"] = hccl_ops.all_to_all_v(np.arange(sum(counts), dtype=np.float32) + 100 * rank, counts,
                                             np.cumsum([0] + counts[:-1]), received, np.cumsum([0] + received[:-1]))
    if rank % 2 == 0:
        ops["evens"] = hccl_ops.allreduce(x, "sum", group="evens")
    if rank == 0:
        ops["send"] = hccl_ops.send(x * 10, 7, 1)
    if rank == 1:
        ops["received"] = hccl_ops.receive(x.shape, tf.float32, 7, 0)
    with tf.Session(config=npu_config_proto()) as sess:
        values = sess.run(ops)
    report(dtypes={k: str(v.dtype) for k, v in values.items() if v is not None},
           **{k: v.tolist() for k, v in values.items() if v is not None})


def train():
    images, labels = mlp_model.dataset(size)
    shard = slice(rank * len(images) // size, (rank + 1) * len(images) // size)
    weights = mlp_model.train(images[shard], labels[shard], rank_seed=rank, distributed=True)
    scales, steps = mlp_model.train_loss_scaled(rank)
    report(weights={k: v.tolist() for k, v in weights.items()}, loss_scales=scales, global_steps=steps)


def keras_fit():
    """A Keras model compiled with npu_keras_optimizer, fit with the broadcast callback on this rank's shard."""
    images, labels = mlp_model.dataset(size)
    shard = slice(rank * len(images) // size, (rank + 1) * len(images) // size)
    keras = tf.keras
    sess = set_keras_session_npu_config()
    tf.set_random_seed(rank)                          # ranks start apart: the callback unifies them
    model = keras.Sequential([keras.layers.Dense(4, activation="tanh", input_shape=(6,)), keras.layers.Dense(1)])
    model.compile(optimizer=npu_keras_optimizer(keras.optimizers.SGD(0.1)), loss="mse")
    model.fit(images[shard], labels[shard], batch_size=len(images) // size, epochs=3, verbose=0,
              callbacks=npu_callbacks_append())
    report(keras_weights=[w.tolist() for w in model.get_weights()])
    sess.close()


def fail(how):
    total = hccl_ops.allreduce(tf.constant([1.0]), "sum")
    with tf.Session() as sess:
        report(total=sess.run(total).tolist(), at=time.time(), pid=os.getpid())
        if rank == 1 and how != "hang":
            if how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError("rank 1 fails on purpose")
        while True:
            sess.run(total)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "fail":
        fail(sys.argv[2])
    collectives()
    if mode == "all":
        train()
        keras_fit()
