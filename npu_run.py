"""The `npu-run` console script: npu_bridge.launcher.main.

Its arguments are read before TensorFlow is imported (--help, --version and a mistyped script name answer at
once): importing npu_bridge's own modules patches nothing; the launcher activates the emulation just before it
runs the script. It lives outside the package because installed console scripts name it.
"""
import sys


def main(argv=None):
    from npu_bridge.launcher import main as launcher_main     # not `from npu_bridge import`: that activates

    return launcher_main(argv)


if __name__ == "__main__":
    sys.exit(main())
