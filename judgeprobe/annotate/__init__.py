"""The human check of the paper's appendix A-A.

Export a blind sample of a run's pairs for people to label, and import their labels to measure
agreement (``python -m judgeprobe.annotate``).
"""
