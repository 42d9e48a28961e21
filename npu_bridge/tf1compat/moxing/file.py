"""`mox.file` on local paths: the functions ported scripts call, with moxing's signatures.

A path with a bucket scheme (obs://, s3://) raises RemotePathError: this machine cannot reach ModelArts' storage,
so the script should be given the local folder its data is in (most ports take it as --data_url / --train_url).
Copying follows OBS's habits the scripts rely on: a destination's missing parent folders are created.
"""
import builtins
import glob as _glob
import os
import shutil

REMOTE_SCHEMES = ("obs://", "s3://", "s3a://", "s3n://")


class RemotePathError(OSError):
    """A bucket path given to the local moxing stand-in."""


def _local(url, arg="url"):
    path = os.fspath(url)
    if path.lower().startswith(REMOTE_SCHEMES):
        raise RemotePathError(
            f"moxing (npu_bridge's local stand-in): {arg} {path!r} is an OBS bucket path, and this machine has no "
            "access to ModelArts' storage; copy the data to a local folder and pass that path instead")
    return path


def exists(url):
    """True when the file or folder exists."""
    return os.path.exists(_local(url))


def is_directory(url):
    """True when the path is a folder."""
    return os.path.isdir(_local(url))


def make_dirs(url):
    """Create the folder and its parents (no error if it exists)."""
    os.makedirs(_local(url), exist_ok=True)


def mk_dir(url):
    """Create one folder (its parent must exist)."""
    os.mkdir(_local(url))


def list_directory(url, recursive=False):
    """The names in a folder; with recursive=True every file and folder below it, relative to it."""
    path = _local(url)
    if not recursive:
        return sorted(os.listdir(path))
    found = []
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            found.append(os.path.relpath(os.path.join(root, name), path))
    return sorted(found)


def glob(pattern):
    """Paths matching the shell pattern."""
    return sorted(_glob.glob(_local(pattern, "pattern")))


def walk(url, topdown=True, onerror=None):
    """os.walk of the folder."""
    return os.walk(_local(url), topdown=topdown, onerror=onerror)


def _make_parent(path):
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)


def copy(src_url, dst_url):
    """Copy one file to dst_url (a file path; its folder is created if missing)."""
    src, dst = _local(src_url, "src_url"), _local(dst_url, "dst_url")
    if os.path.isdir(src):
        raise IsADirectoryError(f"mox.file.copy copies one file, and {src!r} is a folder; use copy_parallel")
    _make_parent(dst)
    shutil.copyfile(src, dst)


def copy_parallel(src_url, dst_url, file_list=None, threads=16, is_processing=True, use_queue=True):
    """Copy a folder's contents into dst_url (merging with what is there), or one file; file_list limits the copy
    to those paths relative to src_url. threads / is_processing / use_queue tune OBS transfers and change nothing."""
    src, dst = _local(src_url, "src_url"), _local(dst_url, "dst_url")
    if not os.path.isdir(src):
        copy(src, dst)
        return
    if file_list is None:
        shutil.copytree(src, dst, dirs_exist_ok=True)
        return
    for relative in file_list:
        copy(os.path.join(src, relative), os.path.join(dst, relative))


def remove(url, recursive=False):
    """Delete a file, or a folder with recursive=True."""
    path = _local(url)
    if os.path.isdir(path):
        if not recursive:
            raise IsADirectoryError(f"mox.file.remove: {path!r} is a folder; pass recursive=True to delete it")
        shutil.rmtree(path)
    else:
        os.remove(path)


def rename(src_url, dst_url):
    """Move a file or folder."""
    src, dst = _local(src_url, "src_url"), _local(dst_url, "dst_url")
    _make_parent(dst)
    shutil.move(src, dst)


def get_size(url, recursive=False):
    """Size in bytes of a file, or with recursive=True of everything in a folder."""
    path = _local(url)
    if recursive and os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(root, name)) for root, _, files in os.walk(path) for name in files)
    return os.path.getsize(path)


def stat(url):
    """os.stat of the path."""
    return os.stat(_local(url))


def File(url, mode="r", **kwargs):  # noqa: N802  (moxing's name)
    """Open a file (a context manager, as moxing's File object is)."""
    path = _local(url)
    if any(flag in mode for flag in "wa"):
        _make_parent(path)
    return builtins.open(path, mode, **kwargs)


Open = File


def read(url, binary=False):
    """The file's contents (bytes with binary=True)."""
    with File(url, "rb" if binary else "r") as handle:
        return handle.read()


def write(url, content, binary=False):
    """Replace the file's contents."""
    with File(url, "wb" if binary else "w") as handle:
        handle.write(content)


def append(url, content, binary=False):
    """Add to the end of the file."""
    with File(url, "ab" if binary else "a") as handle:
        handle.write(content)


def shift(src, dst):
    """moxing's shift('os', 'mox') routes os / open through OBS; with local paths only there is nothing to route."""


def set_auth(**kwargs):
    """OBS credentials and client options: there is no OBS client here."""
