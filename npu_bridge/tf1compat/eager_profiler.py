"""tensorflow.python.eager.profiler, which TensorFlow 2.16 removed: TF 1.15's start / stop / save on the profiler
TensorFlow 2 keeps (tf.profiler.experimental), for scripts whose Keras callbacks import it (the official models'
keras_utils, ported to the NPU).

TF 1.15's stop() returned the trace as bytes for save() to write; TensorFlow 2's profiler writes its own files.
Here start() profiles into a fresh temporary folder, stop() returns that folder (the "result", opaque to the
script as before) and save(logdir, result) copies its `plugins/profile` runs into logdir, where TensorBoard's
profile plugin reads them, as it read TF 1.15's.
"""
import os
import shutil
import tempfile

import tensorflow as tf


class ProfilerAlreadyRunningError(Exception):
    """start() while a profile is being taken."""


class ProfilerNotRunningError(Exception):
    """stop() with no profile being taken."""


_running = []       # the folder the profile being taken is written to, while one is


def start():
    """Start profiling this process (ProfilerAlreadyRunningError if it is already)."""
    folder = tempfile.mkdtemp(prefix="npu_bridge-profile-")
    try:
        tf.profiler.experimental.start(folder)
    except tf.errors.AlreadyExistsError as error:
        shutil.rmtree(folder, ignore_errors=True)
        raise ProfilerAlreadyRunningError(f"Another profiler is running: {error.message}") from None
    _running.append(folder)


def stop():
    """Stop profiling; the result to hand to save() (ProfilerNotRunningError if no profile is being taken)."""
    if not _running:
        raise ProfilerNotRunningError("Cannot stop profiling: no profiler is running (call start() first)")
    tf.profiler.experimental.stop()
    return _running.pop()


def save(logdir, result):
    """Write the profile stop() returned under `logdir`/plugins/profile, one run folder per profile."""
    source = os.path.join(result, "plugins", "profile")
    target = os.path.join(logdir, "plugins", "profile")
    os.makedirs(target, exist_ok=True)
    for run in os.listdir(source):
        shutil.copytree(os.path.join(source, run), os.path.join(target, run), dirs_exist_ok=True)


def start_profiler_server(port):
    """Serve profiles on `port` (TensorBoard's capture button connects to it)."""
    tf.profiler.experimental.server.start(port)
