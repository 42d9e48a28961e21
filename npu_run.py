"""The `npu-run` console script: npu_bridge.launcher.main, entered without activating the emulation first.

Importing any npu_bridge module activates the emulated NPU, which imports TensorFlow: seconds that `--help`,
`--version` and a mistyped script name should not cost. While this module is starting, npu_bridge/__init__.py
leaves activation to the launcher, which activates once the arguments are read and a script is about to run.
It lives outside the package because importing any module inside it runs the package's __init__ first.
"""
import sys

STARTING = True


def main(argv=None):
    from npu_bridge import launcher

    return launcher.main(argv)


if __name__ == "__main__":
    sys.exit(main())
