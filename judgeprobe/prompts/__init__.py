"""Prompt templates, versioned and hashed (``template.py``), and the task they are worded for.

The task's nouns and criteria live in ``task.py``; a judge's own prompt in ``judge.py``.
"""

from judgeprobe.prompts.template import (
    Style,
    Template,
    has_template,
    load_prompt_file,
    load_template,
)

__all__ = ["Style", "Template", "has_template", "load_prompt_file", "load_template"]
