"""The rubric probe.

Can a judge's rubric verdict be predicted from the criterion text alone, and does the judge flip
when the response or the criterion is reversed?

Python API (the CLI is ``python -m judgeprobe.rubric``)::

    import asyncio
    from pathlib import Path
    from rich.console import Console
    from judgeprobe.rubric import RubricConfig, analyse, judge_all, labels_from, load_rubric_items

    cfg = RubricConfig(limit=20)
    items = load_rubric_items(cfg.items, cfg.limit)
    folder = Path("runs/mine/rubric")
    judgments, _ = asyncio.run(judge_all(cfg, items, folder, Console(), progress=False))
    tables = analyse(folder, judgments, labels_from(judgments), cfg, notes=[])

or, on labels you already have: ``run_probe(labels)`` and ``transition_table(pairs)``.
"""

from judgeprobe.rubric.classify import run_probe
from judgeprobe.rubric.config import RubricConfig
from judgeprobe.rubric.data import RubricItem, load_rubric_items
from judgeprobe.rubric.perturb import negate_rule
from judgeprobe.rubric.sweep import analyse, judge_all, labels_from, pairs_from
from judgeprobe.rubric.transitions import transition_table

__all__ = [
    "RubricConfig",
    "RubricItem",
    "analyse",
    "judge_all",
    "labels_from",
    "load_rubric_items",
    "negate_rule",
    "pairs_from",
    "run_probe",
    "transition_table",
]
