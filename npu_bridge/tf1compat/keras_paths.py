"""Keras 2 module paths, as TF 1.15 scripts import them, resolved to the v1 Keras 2 API TensorFlow has now.

Ported scripts import Keras from module paths tf_keras no longer has: standalone Keras 2's internals
(`keras.utils.np_utils`, `keras.engine.topology`, `keras.layers.advanced_activations`,
`keras.backend.tensorflow_backend`), and TF 1.15's own copy (`tensorflow.python.keras.layers`,
`tensorflow.python.keras._impl.keras.models`, `tensorflow_core.python.keras.*`), which in TF 1.15 *was* tf.keras.
TensorFlow 2.x keeps a stripped remnant under tensorflow.python.keras that lacks most of it, and its classes are not
tf_keras's, so a model built from them cannot mix with tf.keras layers.

npu-run's import hook (npu_bridge/launcher.py) hands every such import from the user's code to `keras2_module`:
the module a Keras 2 path names is the public v1 module of that path when tf_keras has one and it holds the
names asked for, else a `Keras2Module` that looks names up, in order, in the public v1 module of the path, the
public v1 module of its first part (`keras.layers.core.Flatten` is `keras.layers.Flatten`), the tf_keras module
that holds the path's contents now (`layers.advanced_activations` is `layers.activation` today), and the few
names TF 1.15's Keras had there that moved elsewhere (`keras.engine.topology.Network`). The v1 API comes first
because TF 1.15 graph-mode scripts got the v1 classes (BatchNormalization's v1 behaviour, for one).
"""
import importlib
import types

# The spellings of the Keras 2 package in TF 1.15 scripts, longest first.
KERAS2_PACKAGES = ("tensorflow_core.python.keras", "tensorflow.python.keras._impl.keras", "tensorflow.python.keras",
                   "keras")

# Keras 2 module path (below the package) -> the tf_keras module (below tf_keras.src) holding its contents now.
MOVED = {
    "layers.advanced_activations": "layers.activation",
    "layers.merge": "layers.merging",
    "layers.recurrent": "layers.rnn",
    "layers.wrappers": "layers.rnn",
    "layers.cudnn_recurrent": "layers.rnn",
    "layers.embeddings": "layers.core.embedding",
    "layers.local": "layers.locally_connected",
    "engine.topology": "engine.functional",
    "engine.network": "engine.functional",
    "backend.tensorflow_backend": "backend",
    "optimizer_v2": "optimizers.legacy",
    "optimizers.adam_v2": "optimizers.legacy.adam",
    "optimizers.gradient_descent_v2": "optimizers.legacy.gradient_descent",
    "optimizers.rmsprop_v2": "optimizers.legacy.rmsprop",
    "testing_utils": "testing_infra.test_utils",
    "keras_parameterized": "testing_infra.test_combinations",
}

# Names TF 1.15's Keras had under a path that now live elsewhere: "v1:X" is in the public v1 API, "src:X" in
# tf_keras's internals.
_ENGINE = {"Layer": "v1:layers.Layer", "InputSpec": "v1:layers.InputSpec", "Input": "v1:Input",
           "InputLayer": "v1:layers.InputLayer", "Model": "v1:Model", "Network": "src:engine.functional.Functional",
           "Node": "src:engine.node.Node", "get_source_inputs": "v1:utils.get_source_inputs"}
MOVED_NAMES = {
    "engine": _ENGINE,
    "engine.topology": _ENGINE,
    "engine.network": {"Network": "src:engine.functional.Functional"},
    "engine.training": {"Model": "v1:Model"},
    "layers": {"Deconvolution2D": "v1:layers.Conv2DTranspose", "Deconvolution3D": "v1:layers.Conv3DTranspose"},
    "utils.layer_utils": {"layer_from_config": "v1:layers.deserialize"},
}

# Names no drop-in can keep: importing them works (a script may import and never call them); calling one says why
# and what to use instead.
REMOVED = {
    ("utils", "multi_gpu_model"): "multi_gpu_model was removed in TensorFlow 2.4 (and needs 2 or more GPUs, which "
                                  "an NPU or CPU run has not): train on one device, or use "
                                  "tf.distribute.MirroredStrategy",
    ("utils.multi_gpu_utils", "multi_gpu_model"): "multi_gpu_model was removed in TensorFlow 2.4 (and needs 2 or more "
                                                  "GPUs, which an NPU or CPU run has not): train on one device, or "
                                                  "use tf.distribute.MirroredStrategy",
    ("layers", "Merge"): "Keras 1's Merge layer is not in Keras 2: use keras.layers.Add, Concatenate, Multiply, ...",
    ("layers", "merge"): "Keras 1's merge() is not in Keras 2: use keras.layers.add, concatenate, multiply, ...",
    ("engine", "merge"): "Keras 1's merge() is not in Keras 2: use keras.layers.add, concatenate, multiply, ...",
}
_REMOVED_MODULES = {"utils.multi_gpu_utils"}

# Keras 2 module paths whose TF 1.15 module held more than tf_keras's public v1 module of that path: TF 1.15's
# tensorflow.python.keras.backend was the implementation module (get_graph, which the official models' detection
# heads call, is not in the public backend). Imports of these always get the Keras2Module, which finds those names
# in tf_keras's implementation after the public ones.
WIDER_THAN_PUBLIC = frozenset({"backend"})


def _join(path, name):
    return f"{path}.{name}" if path else name


def needs_keras2_module(path, fromlist):
    """Whether importing the Keras 2 path `path` (with `fromlist`, as `__import__` gets it) must give the
    Keras2Module rather than the public v1 module: the path, or a submodule the import names, is wider than its
    public module."""
    return path in WIDER_THAN_PUBLIC or any(_join(path, item) in WIDER_THAN_PUBLIC for item in fromlist or ())


def keras2_path(name):
    """The Keras 2 module path below the package ("" for the package, "layers.core", ...) if `name` is a Keras 2
    module name, else None."""
    for package in KERAS2_PACKAGES:
        if name == package:
            return ""
        if name.startswith(package + "."):
            return name[len(package) + 1:]
    return None


def _import(name):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is not None and name.startswith(error.name):
            return None     # the module itself is missing (not a module it imports)
        raise


def _internals(keras_v1):
    """tf_keras.src for tf_keras's v1 API, keras.src for Keras 2's own."""
    return keras_v1.split(".")[0] + ".src"


class Keras2Module(types.ModuleType):
    """A Keras 2 module path as TF 1.15 scripts import it, its names looked up where they are now (see the module
    docstring). Lookups are cached on the module."""

    def __init__(self, path, keras_v1, sources):
        super().__init__(f"keras.{path}" if path else "keras", f"TF 1.15's keras.{path}, resolved by npu_bridge")
        self._path = path
        self._keras_v1 = keras_v1
        self._sources = sources

    def __getattr__(self, name):
        if name.startswith("__") and name != "__version__":
            raise AttributeError(name)
        value = self._find(name)
        setattr(self, name, value)
        return value

    def _find(self, name):
        if (self._path, name) in REMOVED:
            return _removed(f"keras.{self._path}.{name}", REMOVED[self._path, name])
        if _join(self._path, name) in WIDER_THAN_PUBLIC:
            return keras2_module(self._keras_v1, _join(self._path, name))
        for source in self._sources:
            if hasattr(source, name):
                return getattr(source, name)
        moved = MOVED_NAMES.get(self._path, {}).get(name)
        if moved is not None:
            return _resolve(moved, self._keras_v1)
        try:
            return keras2_module(self._keras_v1, _join(self._path, name))
        except ModuleNotFoundError:
            pass
        raise AttributeError(f"keras.{self._path} has no {name!r}: neither TF 1.15's Keras 2 API as tf_keras keeps "
                             f"it nor tf_keras's internals define it")

    def __dir__(self):
        names = set(self.__dict__)
        for source in self._sources:
            names.update(dir(source))
        return sorted(names | set(MOVED_NAMES.get(self._path, {})))


def _resolve(where, keras_v1):
    """The object a MOVED_NAMES entry ("v1:layers.Layer", "src:engine.node.Node") names."""
    space, _, dotted = where.partition(":")
    module_path, _, attribute = dotted.rpartition(".")
    root = keras_v1 if space == "v1" else _internals(keras_v1)
    return getattr(importlib.import_module(f"{root}.{module_path}" if module_path else root), attribute)


def _removed(qualified_name, why):
    def removed(*args, **kwargs):
        raise NotImplementedError(f"{qualified_name}: {why}")

    removed.__name__ = removed.__qualname__ = qualified_name.rsplit(".", 1)[-1]
    removed.__doc__ = why
    return removed


_MODULES = {}


def keras2_module(keras_v1, path):
    """The module the Keras 2 path `path` ("layers.core", "" for the package) names, on the v1 Keras API whose
    module is `keras_v1` ("tf_keras.api._v1.keras"); ModuleNotFoundError naming the path if nothing provides it."""
    key = (keras_v1, path)
    if key not in _MODULES:
        _MODULES[key] = _build(keras_v1, path)
    return _MODULES[key]


def _build(keras_v1, path):
    public = _import(f"{keras_v1}.{path}" if path else keras_v1)
    first = path.split(".")[0]
    parent = _import(f"{keras_v1}.{first}") if "." in path else None
    internal = _import(f"{_internals(keras_v1)}.{MOVED.get(path, path)}") if path else None
    sources = [module for module in (public, parent, internal) if module is not None]
    if path == "":
        sources.append(types.SimpleNamespace(__version__=importlib.import_module(keras_v1.split(".")[0]).__version__))
    if public is None and internal is None and path not in MOVED_NAMES and path not in _REMOVED_MODULES:
        raise ModuleNotFoundError(f"No module named 'keras.{path}': TF 1.15 scripts' Keras 2 module path has no "
                                  f"counterpart in {keras_v1.split('.')[0]} (looked for {keras_v1}.{path} and "
                                  f"{_internals(keras_v1)}.{MOVED.get(path, path)})", name=f"keras.{path}")
    return Keras2Module(path, keras_v1, sources)

