"""Cue conditions as data: the label or badge each candidate wears, and which one it favours."""

from judgeprobe.conditions.cue import *  # noqa: F403
from judgeprobe.conditions.cue import __doc__ as _doc

__doc__ = _doc
