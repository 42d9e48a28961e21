"""Estimator.export_saved_model: the PREDICT graph fed by a serving_input_receiver_fn, with a checkpoint's
weights, written as a SavedModel (tag 'serve', one signature per export output) to a new timestamped folder."""
import os

import tensorflow.compat.v1 as tf
from tensorflow.python.saved_model.model_utils import export_utils

from npu_bridge.tf1compat.estimator.mode_keys import ModeKeys


def export_saved_model(estimator, export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
                       checkpoint_path, mode):
    if mode != ModeKeys.PREDICT:
        raise ValueError(f"export_saved_model: only experimental_mode=ModeKeys.PREDICT is supported, got {mode!r}")
    if serving_input_receiver_fn is None:
        raise ValueError("export_saved_model: serving_input_receiver_fn is required")
    checkpoint = checkpoint_path or estimator.latest_checkpoint()
    if checkpoint is None:
        raise ValueError(f"export_saved_model: couldn't find a trained model at {estimator.model_dir}")
    export_dir = export_utils.get_timestamped_export_dir(os.fsdecode(export_dir_base))
    temp_dir = export_utils.get_temp_export_dir(export_dir)
    with estimator._new_graph().as_default():
        tf.train.get_or_create_global_step()
        receiver = serving_input_receiver_fn()
        spec = estimator._call_model_fn(receiver.features, None, ModeKeys.PREDICT, estimator.config)
        signatures = export_utils.build_all_signature_defs(
            receiver.receiver_tensors, spec.export_outputs, receiver.receiver_tensors_alternatives, serving_only=True)
        local_init_op = spec.scaffold.local_init_op or tf.train.Scaffold.default_local_init_op()
        with tf.Session(config=estimator.config.session_config) as session:
            saver = spec.scaffold.saver or tf.train.Saver(sharded=True)
            saver.restore(session, checkpoint)
            builder = tf.saved_model.Builder(temp_dir)
            builder.add_meta_graph_and_variables(
                session, [tf.saved_model.tag_constants.SERVING], signature_def_map=signatures,
                assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
                main_op=local_init_op, strip_default_attrs=True)
            builder.save(as_text)
    for destination, source in (assets_extra or {}).items():
        target = os.path.join(os.fsdecode(temp_dir), "assets.extra", destination)
        tf.gfile.MakeDirs(os.path.dirname(target))
        tf.gfile.Copy(source, target, overwrite=True)
    tf.gfile.Rename(temp_dir, export_dir)
    tf.logging.info("SavedModel written to: %s", export_dir)
    return export_dir
