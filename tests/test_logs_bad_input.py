"""``judgeprobe logs`` on bad input: one line and exit 2 with nothing written, or a counted
skipped row, as docs/logs.md says for each case; and item ids that read back one way only."""

from __future__ import annotations

from pathlib import Path

import orjson
import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.__main__ import main as judgeprobe
from judgeprobe.logs.table import item_id
from judgeprobe.runs.rundir import RunDir

QUESTIONS = 12


def _generic(path: Path, *, bom: bool = False, extra: list[str] | None = None) -> Path:
    """A generic pairwise CSV: every question judged in both orders (a clean read)."""
    lines = ["question_id,model_a,model_b,winner,order"]
    for q in range(1, QUESTIONS + 1):
        lines += [f"q{q},alpha,beta,{'A' if q % 3 else 'B'},12", f"q{q},alpha,beta,B,21"]
    lines += extra or []
    body = "\n".join(lines) + "\n"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + body.encode())
    return path


def _logs(tmp_path: Path, *args: str, out: str = "run") -> tuple[int, Path]:
    run = tmp_path / out
    return judgeprobe(["logs", *args, "--out", str(run), "--resamples", "0"]), run


def _one_error(capsys: pytest.CaptureFixture[str], code: int, run: Path, *words: str) -> None:
    """Exit 2, one ``error:`` line holding every word, no run and no staging directory."""
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1
    assert err[0].startswith("error: ")
    assert all(w in err[0] for w in words), err[0]
    assert not run.exists()
    assert not [p for p in run.parent.iterdir() if p.name.startswith(f".{run.name}.")]


def test_csv_with_a_bom_keeps_its_first_column(tmp_path: Path) -> None:
    log = _generic(tmp_path / "bom.csv", bom=True)
    labels = tmp_path / "labels.csv"
    rows = [f"q{q},alpha,beta,1" for q in range(1, QUESTIONS + 1)]
    labels.write_bytes(b"\xef\xbb\xbf" + ("question_id,generator_1,generator_2,preferred\n"
                                          + "\n".join(rows) + "\n").encode())  # fmt: skip
    code, run = _logs(tmp_path, str(log), "--labels", str(labels))
    assert code in (0, 5, 6)
    j = pl.read_parquet(RunDir(run).judgments)
    assert sorted(j["document_id"].unique()) == sorted(f"q{q}" for q in range(1, QUESTIONS + 1))
    labelled = pl.read_parquet(RunDir(run).labels)
    assert set(labelled["item_id"]) <= set(j["item_id"])  # every label matches its item
    assert labelled.height == QUESTIONS


def test_model_paired_with_itself_is_a_skipped_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _generic(tmp_path / "self.csv", extra=["q1,alpha,alpha,A,12"])
    code, run = _logs(tmp_path, str(log))
    out = capsys.readouterr()
    assert f"skipped {log}:{2 * QUESTIONS + 2}: generator_1 and generator_2 are both 'alpha'" in (
        out.err
    )
    manifest = RunDir(run).manifest()
    assert manifest.logs is not None
    assert (manifest.logs.skipped, manifest.logs.rows) == (1, 2 * QUESTIONS + 1)
    assert code == 4  # 1 of 25 rows skipped: above 1 %
    assert "alpha~alpha" not in set(pl.read_parquet(RunDir(run).judgments)["item_id"])


def test_map_to_a_column_the_file_lacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, run = _logs(tmp_path, str(_generic(tmp_path / "log.csv")), "--map", "verdict=nosuchcol")
    _one_error(capsys, code, run, "--map verdict=nosuchcol", "no such column")


def test_labels_matching_no_item_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = tmp_path / "labels.jsonl"
    held = [{"question_id": "q1", "generator_1": "alpha", "generator_2": "beta", "preferred": 1}]
    stray = [{"question_id": f"x{k}", "generator_1": "alpha", "generator_2": "beta",
              "preferred": 2} for k in range(20)]  # fmt: skip
    labels.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in held + stray))
    code, _ = _logs(tmp_path, str(_generic(tmp_path / "log.csv")), "--labels", str(labels))
    assert code in (0, 5, 6)
    out = capsys.readouterr().out
    assert "21 human labels" in out
    assert f"20 of 21 labels in {labels} match no item of the log" in out


def test_item_ids_read_back_one_way_only() -> None:
    assert item_id("1", 1, "a~b", "c") != item_id("1", 1, "a", "b~c")
    assert item_id("1", 1, "a/t1/b", "c") != item_id("1", 1, "a", "t1/b~c")
    assert item_id("1", 1, "a%7Eb", "c") != item_id("1", 1, "a~b", "c")  # the escape escaped
    assert item_id("81", 2, "vicuna-13b", "gpt-4") == "81/t2/gpt-4~vicuna-13b"  # as before


def test_item_ids_escaped_alike_in_the_table(tmp_path: Path) -> None:
    log = tmp_path / "tilde.jsonl"
    rows = [{"question_id": 1, "model_a": "a~b", "model_b": "c", "winner": "A"},
            {"question_id": 1, "model_a": "a", "model_b": "b~c", "winner": "A"}]  # fmt: skip
    log.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    code, run = _logs(tmp_path, str(log))
    assert code in (0, 5, 6)
    ids = pl.read_parquet(RunDir(run).judgments)["item_id"].to_list()
    assert ids == [item_id("1", 1, "a~b", "c"), item_id("1", 1, "a", "b~c")]
    assert len(set(ids)) == 2


def test_corrupt_baseline_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = str(_generic(tmp_path / "log.csv"))
    code, base = _logs(tmp_path, log, out="base")
    assert code in (0, 5, 6)
    RunDir(base).judgments.write_bytes(b"PAR1 not parquet at all")
    capsys.readouterr()
    code, run = _logs(tmp_path, log, "--baseline", str(base), out="new")
    _one_error(capsys, code, run, f"--baseline {base}", "not a readable Parquet file")
    # the same command once the baseline is fixed is not refused as "not empty"
    _logs(tmp_path, log, out="base2")
    for name in ("judgments.parquet", "manifest.json"):
        (base / name).write_bytes((tmp_path / "base2" / name).read_bytes())
    code, run = _logs(tmp_path, log, "--baseline", str(base), out="new")
    assert code in (0, 5, 6)
    assert RunDir(run).card_md.is_file()


def test_a_failure_after_the_read_leaves_out_absent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import judgeprobe.logs.__main__ as logs_main

    def broken(*_: object, **__: object) -> None:
        raise JudgeprobeError("the card could not be written")

    monkeypatch.setattr(logs_main, "card_for_run", broken)
    code, run = _logs(tmp_path, str(_generic(tmp_path / "log.csv")))
    _one_error(capsys, code, run, "the card could not be written")


def test_self_without_a_reference_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, run = _logs(tmp_path, str(_generic(tmp_path / "log.csv")), "--self", "alpha")
    assert code in (0, 5, 6)
    out = capsys.readouterr().out
    why = "--self alpha: no self-preference row: it needs a reference on the same items"
    assert why in out
    assert why in RunDir(run).card_md.read_text()
    rows = pl.read_csv(RunDir(run).card_csv)["row"].to_list()
    assert not [r for r in rows if r.startswith("self-preference")]


def test_jsonl_with_a_bom_reads_its_first_line(tmp_path: Path) -> None:
    log = tmp_path / "bom.jsonl"
    rows = [{"question_id": q, "model_a": "alpha", "model_b": "beta", "winner": "A"}
            for q in range(1, QUESTIONS + 1)]  # fmt: skip
    log.write_bytes(b"\xef\xbb\xbf" + b"".join(orjson.dumps(r) + b"\n" for r in rows))
    code, run = _logs(tmp_path, str(log))
    assert code in (0, 5, 6)  # nothing skipped: the first line is read, not "not a JSON line"
    manifest = RunDir(run).manifest()
    assert manifest.logs is not None
    assert (manifest.logs.skipped, manifest.logs.rows) == (0, QUESTIONS)
    assert pl.read_parquet(RunDir(run).judgments).height == QUESTIONS
