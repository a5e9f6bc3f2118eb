"""``python -m judgeprobe.run``: the cue sweep (``judgeprobe run``), under its first name.

``make serve-gemma && python -m judgeprobe.run`` keeps working; the code is in
``judgeprobe.cue``.
"""

import sys

from judgeprobe import callable_command
from judgeprobe.cue.run import cli

if __name__ == "__main__":
    sys.exit(cli())
else:  # imported: ``judgeprobe.run(...)`` still calls the API's run
    callable_command(__name__)
