"""TensorBoard event files of a run record: each graph's fetched scalar curves, loss scale and skipped steps.

`npu-run --report-dir DIR` writes them to DIR/tensorboard/graph-<n>/ beside run.json, so `tensorboard --logdir
DIR/tensorboard` shows the curves of a CI run (one run per graph) without the script writing summaries. Tags:
the curve's key (`loss:0`), `loss_scale/<key>` (the scale each step used) and `skipped_steps/<key>` (how many
steps loss scaling has skipped so far). The files are written whole with the run record and replaced with it.
"""
import shutil
import socket
import time

FOLDER = "tensorboard"


def remove(folder):
    shutil.rmtree(folder, ignore_errors=True)


def write(folder, graphs):
    """One event file per graph of `graphs` (run.json's "graphs" object) under `folder`, replacing older ones."""
    import tensorflow as tf
    from tensorflow.core.framework import summary_pb2
    from tensorflow.core.util import event_pb2

    remove(folder)
    for name, entry in graphs.items():
        series = _series(entry)
        if not series:
            continue
        run = folder / name
        run.mkdir(parents=True, exist_ok=True)
        now = time.time()
        path = run / f"events.out.tfevents.{int(now)}.{socket.gethostname()}.npu_bridge"
        with tf.io.TFRecordWriter(str(path)) as records:
            records.write(event_pb2.Event(wall_time=now, file_version="brain.Event:2").SerializeToString())
            for tag, points in series.items():
                for step, value in points:
                    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)])
                    records.write(event_pb2.Event(wall_time=now, step=step, summary=summary).SerializeToString())


def _series(entry):
    """{tag: [(step, float)]} of one graph entry: its curves, loss scales and running skipped-step counts."""
    series = {key: [(step, float(value)) for step, value in points] for key, points in entry["curves"].items()}
    for key, points in entry.get("loss_scale", {}).items():
        series[f"loss_scale/{key}"] = [(step, float(value)) for step, value in points]
        skipped = set(entry.get("skipped_steps", {}).get(key, ()))
        count, running = 0, []
        for step, _ in points:
            count += step in skipped
            running.append((step, float(count)))
        series[f"skipped_steps/{key}"] = running
    return series
