"""``python -m judgeprobe.run``: the cue sweep (``judgeprobe run``), under its first name.

``make serve-gemma && python -m judgeprobe.run`` keeps working; the code is in
``judgeprobe.cue``.
"""

import sys

from judgeprobe.cue.run import cli

if __name__ == "__main__":
    sys.exit(cli())
