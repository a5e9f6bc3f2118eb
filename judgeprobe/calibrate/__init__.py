"""``judgeprobe calibrate``: the number to report, from the judge's verdicts and a few people's.

``labels`` finds a run's human labels, ``draw`` picks the items to label next, ``__main__`` is
the command; the estimator and the label budget are ``metrics.calibrated``'s.
"""

from judgeprobe import callable_command

callable_command(__name__)  # ``judgeprobe.calibrate(...)`` calls the API's calibrate
