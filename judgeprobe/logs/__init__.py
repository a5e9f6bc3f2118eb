"""Judge logs: what a judge already said, read into the judgments table (``judgeprobe logs``).

One reader per log format (``mtbench``, ``alpaca``, ``inspect``, ``promptfoo``, ``generic``),
each yielding the typed rows of ``rows``; ``table`` turns them into the judgments table and
the human labels, and ``__main__`` (``judgeprobe logs``) writes the run directory every later
command reads unchanged.
"""
