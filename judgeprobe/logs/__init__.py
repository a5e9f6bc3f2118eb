"""Judge logs: what a judge already said, read into the judgments table (``judgeprobe logs``).

One module per log format (``mtbench``, ``alpaca``, ``arena_hard``, ``inspect``, ``promptfoo``,
``generic``), each registering its detector and reader in ``formats`` and yielding the typed
rows of ``rows``; ``read`` reads the files, ``table`` turns the rows into the judgments table
and the human labels, and ``__main__`` writes the run directory every later command reads
unchanged.
"""
