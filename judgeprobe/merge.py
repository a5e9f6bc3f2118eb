"""``python -m judgeprobe.merge``: unite the shards of a sweep (``judgeprobe.cue.merge``)."""

import sys

from judgeprobe.cue.merge import cli

if __name__ == "__main__":
    sys.exit(cli())
