"""The judge card.

Effects with paired intervals, exact tests with Benjamini–Hochberg q-values, minimum detectable
effects and a CLEAR/BIASED/UNDERPOWERED verdict per row (``python -m judgeprobe.card RUN_DIR``).
"""
