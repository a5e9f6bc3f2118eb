"""Document loaders: every format on good files, one clear error line on malformed ones."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import orjson
import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.core.corpus import load_documents
from tests.conftest import ROOT
from tests.test_bad_input import _assert_one_line_error

DOCS = [
    {"id": "a", "text": "Alpha text. It has two sentences.", "domain": "science", "title": "A"},
    {"id": "b", "text": "Beta text, one sentence only."},
]


def _jsonl(path: Path, rows: Sequence[Mapping[str, object]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_bundled_corpus_covers_five_domains() -> None:
    docs = load_documents("bundled:corpus")
    assert len(docs) == 25
    domains = {"business", "literature", "mathematics", "science", "technology"}
    assert {d.domain for d in docs} == domains
    assert all(d.title and len(d.text.split()) > 300 for d in docs)


def test_every_format_loads_the_same_documents(tmp_path: Path) -> None:
    jsonl = _jsonl(tmp_path / "d.jsonl", DOCS)
    frame = pl.DataFrame(
        [{"domain": "", "title": "", **d} for d in DOCS],
        schema={"id": pl.String, "text": pl.String, "domain": pl.String, "title": pl.String},
    )
    frame.write_csv(tmp_path / "d.csv")
    frame.write_parquet(tmp_path / "d.parquet")
    folder = tmp_path / "folder"
    (folder / "science").mkdir(parents=True)
    (folder / "science" / "a.md").write_text("# A\n" + str(DOCS[0]["text"]), encoding="utf-8")
    (folder / "b.txt").write_text(str(DOCS[1]["text"]), encoding="utf-8")
    (folder / "notes.csv").write_text("ignored", encoding="utf-8")

    expected = [(d["id"], d["text"], d.get("domain", ""), d.get("title", "")) for d in DOCS]
    for source in (jsonl, tmp_path / "d.csv", tmp_path / "d.parquet"):
        got = [(d.id, d.text, d.domain, d.title) for d in load_documents(str(source))]
        assert got == expected, source
    by_id = {d.id: d for d in load_documents(str(folder))}
    assert set(by_id) == {"science/a", "b"}
    assert (by_id["science/a"].domain, by_id["science/a"].title) == ("science", "A")
    assert by_id["science/a"].text.strip() == DOCS[0]["text"]
    assert [d.id for d in load_documents(str(jsonl), limit=1)] == ["a"]


@pytest.mark.parametrize(
    ("rows", "needle"),
    [
        ([{"text": "no id"}], "row 1: missing field 'id'"),
        ([{"id": "x"}], "row 1: missing field 'text'"),
        ([{"id": "  ", "text": "t"}], "row 1: empty id"),
        ([{"id": "x", "text": " \n "}], "row 1: document 'x' has empty text"),
        ([{"id": "x", "text": "t"}, {"id": "x", "text": "u"}], "document 2: duplicate id 'x'"),
        ([{"id": 7, "text": "t"}], "row 1: field 'id' must be a string"),
        ([], "no documents"),
    ],
)
def test_malformed_jsonl(tmp_path: Path, rows: list[dict[str, object]], needle: str) -> None:
    path = _jsonl(tmp_path / "d.jsonl", rows)
    with pytest.raises(JudgeprobeError, match=needle):
        load_documents(str(path))


def test_malformed_files(tmp_path: Path) -> None:
    bad_utf8 = tmp_path / "d.jsonl"
    bad_utf8.write_bytes(b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "caf\xe9"}\n')
    with pytest.raises(JudgeprobeError, match="line 2: not valid UTF-8"):
        load_documents(str(bad_utf8))
    csv = tmp_path / "d.csv"
    csv.write_bytes(b"id,text\na,fine\nb,\n")
    with pytest.raises(JudgeprobeError, match="row 2: document 'b' has empty text"):
        load_documents(str(csv))
    csv.write_bytes(b"name,text\na,fine\n")
    with pytest.raises(JudgeprobeError, match="row 1: missing field 'id'"):
        load_documents(str(csv))
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(JudgeprobeError, match=r"no \.txt or \.md files"):
        load_documents(str(folder))
    (folder / "x.txt").write_bytes(b"\xff\xfe broken")
    with pytest.raises(JudgeprobeError, match=r"x\.txt: line 1: not valid UTF-8"):
        load_documents(str(folder))
    (tmp_path / "d.parquet").write_bytes(b"not parquet")
    with pytest.raises(JudgeprobeError, match="cannot read Parquet"):
        load_documents(str(tmp_path / "d.parquet"))
    (tmp_path / "d.xml").write_text("<doc/>")
    with pytest.raises(JudgeprobeError, match=r"expected a \.jsonl, \.csv or \.parquet"):
        load_documents(str(tmp_path / "d.xml"))
    with pytest.raises(JudgeprobeError, match="no such file or folder"):
        load_documents(str(tmp_path / "absent.jsonl"))


@pytest.mark.parametrize(
    ("flag", "needle"),
    [
        ("--corpus", "missing field 'text'"),
        ("--config", "not valid TOML"),
        ("--words", "command line: words"),
    ],
)
def test_candidates_cli_rejects_bad_input_with_one_line(
    tmp_path: Path, flag: str, needle: str
) -> None:
    values = {
        "--corpus": str(_jsonl(tmp_path / "d.jsonl", [{"id": "x"}])),
        "--config": str(tmp_path / "c.toml"),
        "--words": "3",
    }
    (tmp_path / "c.toml").write_text("words = [unclosed\n")
    out = tmp_path / "set"
    proc = subprocess.run(
        [sys.executable, "-m", "judgeprobe.candidates", flag, values[flag], "--out", str(out)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    _assert_one_line_error(proc.stderr, proc.returncode, needle)
    assert not out.exists()
