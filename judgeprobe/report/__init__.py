"""The report: what a reader of the paper's tables needs from one run.

Metrics with intervals, plots and count tables as self-contained HTML and Markdown, in the paper's
structure (``python -m judgeprobe.report RUN_DIR``).
"""
