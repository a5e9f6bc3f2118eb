"""The rubric probe: can a judge's rubric verdict be predicted from the criterion text alone,
and does the judge flip when the response or the criterion is reversed?

Python API (the CLI is ``python -m judgeprobe.rubric``)::

    from judgeprobe.rubric import load_rubric_items, run_probe, transition_table
"""

from judgeprobe.rubric.classify import run_probe
from judgeprobe.rubric.data import RubricItem, load_rubric_items
from judgeprobe.rubric.perturb import negate_rule
from judgeprobe.rubric.transitions import transition_table

__all__ = ["RubricItem", "load_rubric_items", "negate_rule", "run_probe", "transition_table"]
