"""Judge protocols: how the judge is made to reason before its verdict.

``baseline`` (direct verdict), ``scot`` (criterion-guided notes and scores, then verdict) and
``pbp`` (proof-before-preference: lock quoted evidence, score from it, rank by code), and
``own`` (each judge under its own prompt). A protocol is a small class with
``run(presentation, ask) -> Turn``; adding one is one file for the class and one
``register_protocol`` call (``protocols.registry``), which makes its name valid in a sweep
config, builds it for the plan and orders it in comparisons (docs/development.md, "Adding a
protocol").
"""

from judgeprobe.protocols.base import JudgeProtocol, templates_hash
from judgeprobe.protocols.baseline import Baseline
from judgeprobe.protocols.pbp import PBP
from judgeprobe.protocols.scot import SCoT

__all__ = ["PBP", "Baseline", "JudgeProtocol", "SCoT", "templates_hash"]
