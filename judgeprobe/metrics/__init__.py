"""Metrics over a judgments table, as Polars expressions (definitions: docs/metrics.md)."""
