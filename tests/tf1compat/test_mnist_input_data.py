"""TF 1.15's tensorflow.examples.tutorials.mnist.input_data: MNIST read from its four idx files as TF 1.15 read them.

The test writes tiny MNIST-format files (5 training and 3 test images of 2 x 3 pixels) and checks the arrays,
the validation split and next_batch's epoch handling against TF 1.15's documented behaviour."""
import gzip
import struct

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge import tf1compat

TRAIN_LABELS = [3, 1, 4, 1, 5]
TEST_LABELS = [9, 2, 6]
ROWS, COLS = 2, 3


def _images(count, offset):
    return (np.arange(count * ROWS * COLS, dtype=np.int64).reshape(count, ROWS, COLS) * 7 + offset) % 256


def _write_images(path, images, magic=2051):
    header = struct.pack(">IIII", magic, images.shape[0], ROWS, COLS)
    with gzip.open(path, "wb") as stream:
        stream.write(header + images.astype(np.uint8).tobytes())


def _write_labels(path, labels):
    with gzip.open(path, "wb") as stream:
        stream.write(struct.pack(">II", 2049, len(labels)) + bytes(labels))


@pytest.fixture
def mnist_dir(tmp_path):
    _write_images(tmp_path / "train-images-idx3-ubyte.gz", _images(5, 0))
    _write_labels(tmp_path / "train-labels-idx1-ubyte.gz", TRAIN_LABELS)
    _write_images(tmp_path / "t10k-images-idx3-ubyte.gz", _images(3, 100))
    _write_labels(tmp_path / "t10k-labels-idx1-ubyte.gz", TEST_LABELS)
    return tmp_path


@pytest.fixture(scope="module")
def input_data():
    tf1compat.install()
    from tensorflow.examples.tutorials.mnist import input_data

    return input_data


def test_read_data_sets_splits_and_scales_as_tf_1_15(input_data, mnist_dir):
    mnist = input_data.read_data_sets(str(mnist_dir), one_hot=True, validation_size=2)
    assert (mnist.train.num_examples, mnist.validation.num_examples, mnist.test.num_examples) == (3, 2, 3)
    assert mnist.train.images.shape == (3, ROWS * COLS) and mnist.train.images.dtype == np.float32
    np.testing.assert_array_equal(mnist.validation.images,
                                  _images(5, 0)[:2].reshape(2, -1).astype(np.float32) * np.float32(1 / 255))
    np.testing.assert_array_equal(mnist.test.images,
                                  _images(3, 100).reshape(3, -1).astype(np.float32) * np.float32(1 / 255))
    assert mnist.train.labels.dtype == np.float64
    np.testing.assert_array_equal(mnist.train.labels, np.eye(10)[TRAIN_LABELS[2:]])
    np.testing.assert_array_equal(mnist.test.labels.argmax(1), TEST_LABELS)


def test_uint8_images_unreshaped_and_dense_labels(input_data, mnist_dir):
    mnist = input_data.read_data_sets(str(mnist_dir), dtype=tf.uint8, reshape=False, validation_size=0)
    assert mnist.train.images.dtype == np.uint8 and mnist.train.images.shape == (5, ROWS, COLS, 1)
    np.testing.assert_array_equal(mnist.train.images[..., 0], _images(5, 0))
    np.testing.assert_array_equal(mnist.train.labels, TRAIN_LABELS)
    assert mnist.validation.num_examples == 0


def test_next_batch_shuffles_each_epoch_and_completes_the_last_batch_from_the_next(input_data, mnist_dir):
    train = input_data.read_data_sets(str(mnist_dir), validation_size=0, seed=7).train
    seen = [train.next_batch(2, shuffle=True)[1] for _ in range(2)]
    assert train.epochs_completed == 0
    wrap_images, wrap_labels = train.next_batch(2)           # 1 left in epoch 1, 1 from epoch 2
    assert train.epochs_completed == 1 and len(wrap_labels) == 2 and len(wrap_images) == 2
    first_epoch = np.concatenate([*seen, wrap_labels[:1]])
    assert sorted(first_epoch) == sorted(TRAIN_LABELS)       # every example exactly once per epoch

    ordered = input_data.read_data_sets(str(mnist_dir), validation_size=0, dtype=tf.uint8).train
    batches = [ordered.next_batch(2, shuffle=False)[1].tolist() for _ in range(3)]
    assert batches == [[3, 1], [4, 1], [5, 3]]


def test_the_same_seed_gives_the_same_batches(input_data, mnist_dir):
    def first_batch():
        return input_data.read_data_sets(str(mnist_dir), validation_size=0, seed=3).train.next_batch(5)[1]

    np.testing.assert_array_equal(first_batch(), first_batch())


def test_missing_files_name_the_folder_and_nothing_is_downloaded(input_data, tmp_path):
    with pytest.raises(FileNotFoundError, match=r"train-images-idx3-ubyte\.gz not found in '.*empty'.*does not"):
        input_data.read_data_sets(str(tmp_path / "empty"), one_hot=True)


def test_bad_files_and_sizes_are_refused_with_tf_1_15s_messages(input_data, mnist_dir):
    with pytest.raises(ValueError, match=r"Validation size should be between 0 and 5\. Received: 6\."):
        input_data.read_data_sets(str(mnist_dir), validation_size=6)
    _write_images(mnist_dir / "train-images-idx3-ubyte.gz", _images(5, 0), magic=1234)
    with pytest.raises(ValueError, match="Invalid magic number 1234 in MNIST image file: train-images"):
        input_data.read_data_sets(str(mnist_dir))


def test_uncompressed_files_are_read_too(input_data, mnist_dir):
    for name in ("train-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        packed = mnist_dir / f"{name}.gz"
        (mnist_dir / name).write_bytes(gzip.decompress(packed.read_bytes()))
        packed.unlink()
    mnist = input_data.read_data_sets(str(mnist_dir), validation_size=1)
    assert mnist.train.num_examples == 4 and mnist.test.labels.tolist() == TEST_LABELS
