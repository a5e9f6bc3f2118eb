"""The cue probe: a sweep of cue conditions × protocols × judges, from config to report.

``config`` (the sweep's TOML), ``plan`` (the judgments it expands to), ``preflight`` (the
first requests the plan-time checks measure), ``job`` (one judgment), ``judgments`` (the public
table), ``outputs`` (tables, card and report), ``manifest``, ``embedded`` (the default sweep's
judge), ``run`` (the command).
"""
