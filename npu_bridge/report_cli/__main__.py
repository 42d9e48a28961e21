"""`python -m npu_bridge.report_cli GRAPH [options]`: the same as `npu-report GRAPH [options]`."""
import sys

from npu_bridge.report_cli import main

sys.exit(main())
