"""TF 1.15's `tensorflow.examples.tutorials.mnist.input_data`: MNIST from its four idx files, as TF 1.15 read them.

`read_data_sets(folder, one_hot=True)` is how dozens of ported scripts load MNIST. It reads the four files
TF 1.15 reads (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz,
t10k-labels-idx1-ubyte.gz) from the folder, and returns the same Datasets(train, validation, test) with the same
arrays: images uint8 -> float32 scaled to [0, 1] (or kept uint8), reshaped to [N, rows*cols] unless
reshape=False, labels uint8 or one-hot float64, the first `validation_size` training examples split off as the
validation set; DataSet.next_batch shuffles and wraps across epochs as TF 1.15's did, with numpy's global
generator seeded the same way.

Two differences, both on purpose: nothing is downloaded (a missing file is a FileNotFoundError naming the folder
and the file, where TF 1.15 fetched it from the internet), and a file stored uncompressed (without .gz) is read
too.
"""
import collections
import gzip
import os

import numpy
import tensorflow as tf

TRAIN_IMAGES = "train-images-idx3-ubyte.gz"
TRAIN_LABELS = "train-labels-idx1-ubyte.gz"
TEST_IMAGES = "t10k-images-idx3-ubyte.gz"
TEST_LABELS = "t10k-labels-idx1-ubyte.gz"
_IMAGES_MAGIC = 2051
_LABELS_MAGIC = 2049

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def _open(folder, filename):
    """The idx file `filename` of `folder` (or its uncompressed twin), opened for binary reading."""
    path = os.path.join(folder, filename)
    if os.path.isfile(path):
        return gzip.open(path, "rb")
    if os.path.isfile(path[:-len(".gz")]):
        return open(path[:-len(".gz")], "rb")
    raise FileNotFoundError(
        f"read_data_sets: MNIST file {filename} not found in {os.path.abspath(folder)!r}. TF 1.15 downloaded "
        f"missing files; this emulation does not: put the four MNIST files ({TRAIN_IMAGES}, {TRAIN_LABELS}, "
        f"{TEST_IMAGES}, {TEST_LABELS}) in that folder")


def _read_int32(stream):
    return int(numpy.frombuffer(stream.read(4), dtype=">u4")[0])


def _check_magic(stream, expected, filename):
    magic = _read_int32(stream)
    if magic != expected:
        kind = "image" if expected == _IMAGES_MAGIC else "label"
        raise ValueError(f"Invalid magic number {magic} in MNIST {kind} file: {filename}")


def extract_images(folder, filename):
    """The images of an idx3 file as uint8 [N, rows, cols, 1]."""
    with _open(folder, filename) as stream:
        _check_magic(stream, _IMAGES_MAGIC, filename)
        count, rows, cols = (_read_int32(stream) for _ in range(3))
        pixels = numpy.frombuffer(stream.read(count * rows * cols), dtype=numpy.uint8)
    return pixels.reshape(count, rows, cols, 1)


def extract_labels(folder, filename, one_hot=False, num_classes=10):
    """The labels of an idx1 file: uint8 [N], or float64 one-hot [N, num_classes]."""
    with _open(folder, filename) as stream:
        _check_magic(stream, _LABELS_MAGIC, filename)
        count = _read_int32(stream)
        labels = numpy.frombuffer(stream.read(count), dtype=numpy.uint8)
    return dense_to_one_hot(labels, num_classes) if one_hot else labels


def dense_to_one_hot(labels_dense, num_classes):
    """Class indices [N] -> one-hot float64 rows [N, num_classes]."""
    one_hot = numpy.zeros((labels_dense.shape[0], num_classes))
    one_hot[numpy.arange(labels_dense.shape[0]), labels_dense] = 1
    return one_hot


class DataSet:
    """One split of MNIST with TF 1.15's next_batch (shuffled per epoch, the last batch of an epoch completed
    from the next one)."""

    def __init__(self, images, labels, fake_data=False, one_hot=False, dtype=tf.float32, reshape=True, seed=None):
        seed1, seed2 = tf.compat.v1.get_seed(seed)
        numpy.random.seed(seed1 if seed is None else seed2)
        dtype = tf.as_dtype(dtype).base_dtype
        if dtype not in (tf.uint8, tf.float32):
            raise TypeError(f"Invalid image dtype {dtype!r}, expected uint8 or float32")
        if fake_data:
            self._num_examples = 10000
            self.one_hot = one_hot
        else:
            if images.shape[0] != labels.shape[0]:
                raise ValueError(f"images.shape: {images.shape} labels.shape: {labels.shape}")
            self._num_examples = images.shape[0]
            if reshape:
                images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
            if dtype == tf.float32:
                images = images.astype(numpy.float32) * numpy.float32(1.0 / 255.0)
        self._images = images
        self._labels = labels
        self._epochs_completed = 0
        self._index_in_epoch = 0

    images = property(lambda self: self._images)
    labels = property(lambda self: self._labels)
    num_examples = property(lambda self: self._num_examples)
    epochs_completed = property(lambda self: self._epochs_completed)

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """The next `batch_size` examples (images, labels)."""
        if fake_data:
            image = [1] * 784
            label = [1] + [0] * 9 if self.one_hot else 0
            return [image] * batch_size, [label] * batch_size
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size <= self._num_examples:
            self._index_in_epoch = start + batch_size
            return self._images[start:self._index_in_epoch], self._labels[start:self._index_in_epoch]
        self._epochs_completed += 1
        images_rest, labels_rest = self._images[start:], self._labels[start:]
        if shuffle:
            self._shuffle()
        self._index_in_epoch = batch_size - (self._num_examples - start)
        end = self._index_in_epoch
        return (numpy.concatenate((images_rest, self._images[:end]), axis=0),
                numpy.concatenate((labels_rest, self._labels[:end]), axis=0))

    def _shuffle(self):
        order = numpy.arange(self._num_examples)
        numpy.random.shuffle(order)
        self._images = self._images[order]
        self._labels = self._labels[order]


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=tf.float32, reshape=True, validation_size=5000,
                   seed=None, source_url=None):
    """MNIST's train / validation / test DataSets from the four idx files in `train_dir` (TF 1.15 signature;
    `source_url` is accepted and unused: nothing is downloaded)."""
    if fake_data:
        def fake():
            return DataSet([], [], fake_data=True, one_hot=one_hot, dtype=dtype, seed=seed)

        return Datasets(train=fake(), validation=fake(), test=fake())
    train_images = extract_images(train_dir, TRAIN_IMAGES)
    train_labels = extract_labels(train_dir, TRAIN_LABELS, one_hot=one_hot)
    test_images = extract_images(train_dir, TEST_IMAGES)
    test_labels = extract_labels(train_dir, TEST_LABELS, one_hot=one_hot)
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(f"Validation size should be between 0 and {len(train_images)}. Received: "
                         f"{validation_size}.")
    options = {"dtype": dtype, "reshape": reshape, "seed": seed}
    return Datasets(train=DataSet(train_images[validation_size:], train_labels[validation_size:], **options),
                    validation=DataSet(train_images[:validation_size], train_labels[:validation_size], **options),
                    test=DataSet(test_images, test_labels, **options))


def load_mnist(train_dir="MNIST-data"):
    """TF 1.15's shorthand: read_data_sets(train_dir)."""
    return read_data_sets(train_dir)
