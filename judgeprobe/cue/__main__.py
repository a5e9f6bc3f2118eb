"""``python -m judgeprobe.cue``: the cue sweep, also ``judgeprobe run``."""

import sys

from judgeprobe.cue.run import cli

sys.exit(cli())
