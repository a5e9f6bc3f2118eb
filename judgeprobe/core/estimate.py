"""A figure with its 95% interval: the one record of value and interval every layer passes on.

The metrics table's figures (``metrics.lookup.Figure``), the observed and calibrated figures,
the paired differences and the card's rows each hold their value and interval as one
``Estimate`` instead of parallel ``x``, ``x_lo`` and ``x_hi`` fields, so a bound never travels
without the value it bounds.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from judgeprobe.core.cells import MISSING, interval


class Estimate(BaseModel):
    """A figure with its 95% interval (bounds None where the interval is undefined)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    value: float | None
    """The point estimate (None: undefined, e.g. no unit contributed)."""
    lo: float | None = None
    """The interval's lower bound."""
    hi: float | None = None
    """The interval's upper bound."""
    method: str | None = None
    """How the interval was computed where it is not its document's own method (card.json:
    ``intervals.method``): e.g. ``PPI++`` for a calibrated figure; None: that method."""

    @property
    def shown(self) -> str:
        """As the card prints it: ``value [lo, hi]``, "–" where undefined."""
        return interval(self.value, self.lo, self.hi)

    @property
    def bounds(self) -> tuple[float | None, float | None]:
        """``(lo, hi)``."""
        return self.lo, self.hi

    @classmethod
    def of(cls, value: float | None, lo: float | None, hi: float | None) -> Estimate | None:
        """The estimate, or None where there is no figure at all."""
        return (
            None if value is None and lo is None and hi is None else cls(value=value, lo=lo, hi=hi)
        )


def shown(got: Estimate | None) -> str:
    """An estimate as a table prints it; "–" for none."""
    return MISSING if got is None else got.shown


def value_of(got: Estimate | None) -> float | None:
    """The estimate's value; None for none."""
    return None if got is None else got.value
