"""The local moxing stand-in: `import moxing` finds it only when no real moxing is importable; mox.file works on
local paths as ModelArts' does, and an OBS path fails with an error naming it."""
import importlib
import sys

import pytest

from npu_bridge import tf1compat


@pytest.fixture
def mox():
    tf1compat.install()
    return importlib.import_module("moxing")


def test_moxing_is_the_stand_in_when_no_real_one_is_installed(mox):
    assert mox is importlib.import_module("npu_bridge.tf1compat.moxing")
    import moxing.file

    assert moxing.file is mox.file
    assert moxing.file.__name__ == "npu_bridge.tf1compat.moxing.file"


def test_a_real_moxing_earlier_on_the_path_wins(tmp_path, monkeypatch):
    tf1compat.install()
    fake = tmp_path / "moxing"
    fake.mkdir()
    (fake / "__init__.py").write_text("REAL = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    saved = {name: sys.modules.pop(name) for name in list(sys.modules) if name.split(".")[0] == "moxing"}
    try:
        assert importlib.import_module("moxing").REAL
    finally:
        for name in [n for n in sys.modules if n.split(".")[0] == "moxing"]:
            del sys.modules[name]
        sys.modules.update(saved)


def test_file_functions_work_on_local_paths(mox, tmp_path):
    src = tmp_path / "data"
    mox.file.make_dirs(str(src / "train"))
    mox.file.write(str(src / "train" / "a.txt"), "alpha")
    mox.file.append(str(src / "train" / "a.txt"), "beta")
    with mox.file.File(str(src / "b.bin"), "wb") as handle:
        handle.write(b"\x00\x01")
    assert mox.file.exists(str(src / "b.bin")) and mox.file.is_directory(str(src / "train"))
    assert mox.file.list_directory(str(src)) == ["b.bin", "train"]
    assert mox.file.list_directory(str(src), recursive=True) == ["b.bin", "train", "train/a.txt"]
    assert mox.file.glob(str(src / "*" / "*.txt")) == [str(src / "train" / "a.txt")]
    dst = tmp_path / "cache" / "data"
    mox.file.copy_parallel(str(src), str(dst))
    assert mox.file.read(str(dst / "train" / "a.txt")) == "alphabeta"
    assert mox.file.read(str(dst / "b.bin"), binary=True) == b"\x00\x01"
    mox.file.copy(str(src / "b.bin"), str(tmp_path / "new" / "dir" / "b.bin"))
    assert mox.file.get_size(str(tmp_path / "new"), recursive=True) == 2
    mox.file.rename(str(tmp_path / "new"), str(tmp_path / "moved"))
    assert [walked[0] for walked in mox.file.walk(str(tmp_path / "moved"))][-1] == str(tmp_path / "moved" / "dir")
    with pytest.raises(IsADirectoryError, match="pass recursive=True"):
        mox.file.remove(str(tmp_path / "moved"))
    mox.file.remove(str(tmp_path / "moved"), recursive=True)
    assert not mox.file.exists(str(tmp_path / "moved"))
    mox.file.shift("os", "mox")
    mox.file.set_auth(obs_client_log=False)
    mox.set_flag("session_timeout", 0)
    assert mox.get_flag("session_timeout") == 0


@pytest.mark.parametrize("call", [
    lambda mox: mox.file.copy_parallel("obs://bucket/dataset", "/tmp/dataset"),
    lambda mox: mox.file.exists("s3://bucket/dataset"),
    lambda mox: mox.file.File("obs://bucket/dataset/a.txt", "r"),
])
def test_an_obs_path_fails_naming_the_path(mox, call):
    with pytest.raises(mox.RemotePathError, match=r"'(obs|s3)://bucket/dataset[^']*' is an OBS bucket path"):
        call(mox)


def test_moxing_tensorflow_says_it_is_not_provided(mox):
    with pytest.raises(ImportError, match="moxing.tensorflow is ModelArts' training framework"):
        importlib.import_module("moxing.tensorflow")
