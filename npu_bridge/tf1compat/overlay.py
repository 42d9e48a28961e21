"""What `import a.b.c [as x]` binds when a.b.c resolves to a module that is not the attribute path a -> b -> c
(a Keras 2 path, tf1compat.USER_CODE_ALIASES): overlays over the real modules, which are never changed. The
launcher's import hook builds its results with these."""
import types


class Overlay(types.ModuleType):
    """`base` with one attribute replaced: what `import a.b.c` binds to `a` when a.b.c resolves elsewhere."""

    def __init__(self, base, name, value):
        super().__init__(base.__name__, base.__doc__)
        self._base = base
        setattr(self, name, value)

    def __getattr__(self, name):
        return getattr(self._base, name)

    def __dir__(self):
        return sorted(set(dir(self._base)) | set(self.__dict__))


def bind(top, parts, leaf):
    """What `import top.parts[0]...parts[-1]` binds: `top`, whose attribute path `parts` leads to `leaf` (overlaid
    where the real attribute is something else), so `import tensorflow.python.keras as keras` gets the leaf."""
    if not parts:
        return leaf
    child = getattr(top, parts[0], None)
    if not isinstance(child, types.ModuleType):
        child = types.ModuleType(f"{top.__name__}.{parts[0]}")
    inner = bind(child, parts[1:], leaf)
    return top if inner is getattr(top, parts[0], None) else Overlay(top, parts[0], inner)
