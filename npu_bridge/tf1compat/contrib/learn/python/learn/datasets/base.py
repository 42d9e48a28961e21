"""TF 1.15's contrib.learn datasets.base: the Dataset / Datasets tuples ported input pipelines build (the MNIST
reader's Datasets is the same tuple), and maybe_download for a file the script fetches once."""
import collections
import os
import urllib.request

from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.examples.tutorials.mnist.input_data import Datasets  # noqa: F401

Dataset = collections.namedtuple("Dataset", ["data", "target"])


def maybe_download(filename, work_directory, source_url):
    """The path of work_directory/filename, downloading it from source_url first when it is not there yet."""
    os.makedirs(work_directory, exist_ok=True)
    filepath = os.path.join(work_directory, filename)
    if not os.path.exists(filepath):
        partial = filepath + ".part"
        try:
            urllib.request.urlretrieve(source_url, partial)
        except OSError as exc:
            raise OSError(f"datasets.base.maybe_download: could not fetch {filename} from {source_url}: {exc}. "
                          f"Put the file at {filepath} to skip the download.") from exc
        os.replace(partial, filepath)
    return filepath


__getattr__ = removed.module_getattr(__name__)
