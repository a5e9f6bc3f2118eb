"""The report: metrics with intervals, plots and count tables as self-contained HTML and
Markdown, in the paper's structure (``python -m judgeprobe.report RUN_DIR``)."""
