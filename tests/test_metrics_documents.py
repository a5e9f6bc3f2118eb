"""Judgments know their document: the items reader fills ``document_id`` and every planned
judgment row carries it (with the domain and the generators) into judgments.parquet."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import orjson
import polars as pl

from judgeprobe.conditions import builtin_conditions
from judgeprobe.core.corpus import load_items
from judgeprobe.core.records import JUDGMENT_SCHEMA, document_hash
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.judgments import judgment_rows
from judgeprobe.cue.stream import cue_jobs, protocols_for
from judgeprobe.engine.store import Store


def _items(path: Path, rows: Sequence[Mapping[str, object]]) -> str:
    base = {"document": "One document.", "candidate_1": "first", "candidate_2": "second",
            "source_1": "LLM", "source_2": "TradML"}  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps({**base, **r}) + b"\n" for r in rows))
    return str(path)


def test_document_id_from_the_file_from_doc_id_or_the_text_hash(tmp_path: Path) -> None:
    items = load_items(
        _items(
            tmp_path / "items.jsonl",
            [
                {"item_id": "a", "document_id": "doc-7"},
                {"item_id": "b", "doc_id": "doc-8"},  # the candidate set's column name
                {"item_id": "c"},
                {"item_id": "d", "document_id": None, "generator_2": None},
                {"item_id": "e", "document": "Another document."},
            ],
        )
    )
    ids = [i.document_id for i in items]
    assert ids[:2] == ["doc-7", "doc-8"]
    # No id: the text's hash, so items of one document share it and others do not.
    assert ids[2] == ids[3] == document_hash("One document.") != ids[4]
    assert items[3].generator_2 == ""


def test_bundled_candidate_set_groups_its_items_by_document() -> None:
    items = load_items("bundled:candidates")
    per_doc = pl.DataFrame(
        {"doc": [i.document_id for i in items], "subset": [i.subset for i in items]}
    ).filter(pl.col("subset") == "llm_vs_extractive")
    assert per_doc.group_by("doc").len()["len"].max() == 4  # four extractive methods
    generators = {i.generator_2 for i in items if i.subset == "llm_vs_extractive"}
    assert len(generators) == 4


def test_judgment_rows_carry_document_domain_and_generators(tmp_path: Path) -> None:
    rows = [
        {"item_id": "a", "document_id": "D1", "domain": "science", "generator_2": "sumy:kl"},
        {"item_id": "b", "document_id": "D1", "domain": "science", "generator_2": "sumy:lsa"},
    ]
    items = load_items(_items(tmp_path / "items.jsonl", rows))
    cfg = SweepConfig(conditions=["Blind", "True"], swap=0.0)
    jobs = cue_jobs(
        cfg, protocols_for(cfg), items, builtin_conditions(), {j.name: "f" for j in cfg.judges}
    )
    store = Store(tmp_path / "store.sqlite")
    try:
        frame = pl.DataFrame(list(judgment_rows("r", jobs, store)), schema=JUDGMENT_SCHEMA)
    finally:
        store.close()
    assert frame.height == 4
    assert set(frame["document_id"]) == {"D1"}
    assert set(frame["domain"]) == {"science"}
    assert frame.filter(pl.col("item_id") == "b")["generator_2"].to_list() == ["sumy:lsa"] * 2
