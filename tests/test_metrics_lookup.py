"""The metrics table read by cell and metric: level rows only, a missing figure is empty, and a
name the registry does not define fails at once instead of reading as a missing figure."""

from __future__ import annotations

import polars as pl
import pytest

from judgeprobe.metrics.compute import TIDY_SCHEMA
from judgeprobe.metrics.lookup import MetricsTable


def _tidy() -> pl.DataFrame:
    base = {"n": 10, "documents": 5, "seeds": 1, "seed_sd": None, "p": None, "ci_flag": None}
    rows = [
        {"judge": "j", "protocol": "b", "condition": "True", "metric": "LDS", "value": 0.3,
         "lo": 0.1, "hi": 0.5, "versus": None, **base},
        {"judge": "j", "protocol": "b", "condition": "True", "metric": "LDS", "value": 0.9,
         "lo": 0.8, "hi": 1.0, "versus": "protocol=x", **base},
        {"judge": "j", "protocol": "b", "condition": "Blind", "metric": "LDS",
         "value": float("nan"),
         "lo": None, "hi": None, "versus": None, **base},
    ]  # fmt: skip
    return pl.DataFrame(rows, schema=TIDY_SCHEMA)


def test_a_figure_by_cell_and_metric() -> None:
    table = MetricsTable(_tidy())
    got = table.get(("j", "b", "True"), "LDS")
    assert got.interval == (0.3, 0.1, 0.5)  # the level row, not the difference
    assert (got.n, got.documents) == (10, 5)
    assert table.get(("j", "b", "Placebo"), "LDS").interval == (None, None, None)
    assert table.get(("j", "b", "Blind"), "LDS").value is None  # NaN is undefined
    assert [f.condition for f in table.cells("LDS")] == ["True"]  # only figures with a value


def test_a_name_the_registry_does_not_define_fails() -> None:
    table = MetricsTable(_tidy())
    with pytest.raises(KeyError, match="LSD"):
        table.get(("j", "b", "True"), "LSD")
    with pytest.raises(KeyError):
        table.cells("accuracy")
