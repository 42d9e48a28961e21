"""tensorflow.contrib.saved_model.python.saved_model.reader: TF 1.15's two functions reading a SavedModel folder's
protocol buffer (saved_model.pb, or saved_model.pbtxt), which only TensorFlow's internal tools keep now."""
import os

import tensorflow as tf
from google.protobuf import text_format
from tensorflow.core.protobuf import saved_model_pb2


def read_saved_model(saved_model_dir):
    """The SavedModel proto stored in `saved_model_dir`; IOError naming the folder if it holds none."""
    binary = os.path.join(saved_model_dir, "saved_model.pb")
    text = os.path.join(saved_model_dir, "saved_model.pbtxt")
    saved_model = saved_model_pb2.SavedModel()
    if tf.io.gfile.exists(binary):
        with tf.io.gfile.GFile(binary, "rb") as stream:
            saved_model.ParseFromString(stream.read())
    elif tf.io.gfile.exists(text):
        with tf.io.gfile.GFile(text, "r") as stream:
            text_format.Merge(stream.read(), saved_model)
    else:
        raise IOError(f"SavedModel file does not exist at: {saved_model_dir}")
    return saved_model


def get_saved_model_tag_sets(saved_model_dir):
    """The tags of each MetaGraphDef in the SavedModel of `saved_model_dir`, one list per MetaGraphDef."""
    return [list(meta_graph.meta_info_def.tags) for meta_graph in read_saved_model(saved_model_dir).meta_graphs]
