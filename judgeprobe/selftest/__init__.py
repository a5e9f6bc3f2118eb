"""Known-answer self-test.

A simulated judge with planted biases, a real sweep against it, and a check that the pipeline
recovers every planted effect (``python -m judgeprobe.selftest``).
"""

from judgeprobe import callable_command

callable_command(__name__)  # ``judgeprobe.selftest(...)`` calls the API's selftest
