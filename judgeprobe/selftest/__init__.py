"""Known-answer self-test.

A simulated judge with planted biases, a real sweep against it, and a check that the pipeline
recovers every planted effect (``python -m judgeprobe.selftest``).
"""
