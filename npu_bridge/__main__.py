"""`python -m npu_bridge script.py [args ...]`: the same as `npu-run script.py [args ...]`."""
import sys

from npu_bridge.launcher import main

sys.exit(main())
