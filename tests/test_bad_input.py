"""Bad input gets one clear line on stderr, a non-zero exit, and nothing half-written."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import orjson
import polars as pl
import pytest

from judgeprobe.core.records import JUDGMENT_SCHEMA
from tests.conftest import ROOT, make_items, run_cli, write_config
from tests.fakeserver import FakeJudge


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _assert_one_line_error(proc_stderr: str, returncode: int, *needles: str) -> None:
    lines = [line for line in proc_stderr.strip().splitlines() if line.strip()]
    assert returncode == 2, proc_stderr
    assert len(lines) == 1, proc_stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in proc_stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_unknown_condition(tmp_path: Path, fake_judge: FakeJudge) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    cfg = write_config(tmp_path / "c.toml", fake_judge.url, items, conditions=["Blind", "Bogus"])
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, "Bogus", "Placebo")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("items = [unclosed", "not valid TOML"),
        ('order = "sideways"', "order"),
        ("seeds = []", "seeds"),
        ("surprise = 1", "surprise"),
        ('[[judges]]\nname = "x"\nurl = "ftp://nope"', "url"),
        ('[cues.Odd]\nlabel_1 = "{nope}"', "placeholders"),
    ],
)
def test_malformed_config(tmp_path: Path, text: str, needle: str) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(text + "\n")
    if "cues.Odd" in text:
        cfg.write_text('conditions = ["Blind", "Odd"]\n' + text + "\n")
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, needle)
    assert not (tmp_path / "run").exists()


def test_missing_items_file(tmp_path: Path, fake_judge: FakeJudge) -> None:
    cfg = write_config(tmp_path / "c.toml", fake_judge.url, tmp_path / "absent.jsonl")
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, "absent.jsonl")


def test_malformed_items_row(tmp_path: Path, fake_judge: FakeJudge) -> None:
    items = tmp_path / "i.jsonl"
    items.write_text('{"item_id": "a", "document": "d", "candidate_1": "x"}\n')
    cfg = write_config(tmp_path / "c.toml", fake_judge.url, items)
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, "line 1", "candidate_2")


@pytest.mark.parametrize(
    ("serve", "hint"),
    [("make serve-gemma", "start it with `make serve-gemma`"), ("", "is its server running?")],
)
def test_unreachable_url_names_url_and_the_configured_serve_command(
    tmp_path: Path, serve: str, hint: str
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    cfg = write_config(tmp_path / "c.toml", url, make_items(tmp_path / "i.jsonl", 1))
    if serve:  # the judge's table is the file's last
        cfg.write_text(cfg.read_text() + f'serve = "{serve}"\n')
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, "judge fake", url, hint)
    assert not (tmp_path / "run").exists()


def test_bad_judge_flag(tmp_path: Path) -> None:
    proc = run_cli("--judge", "no-equals-sign", "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, "NAME=URL")


@pytest.mark.parametrize(
    ("fault", "word"),
    [
        ("nonconforming", "schema"),
        ("follow_instructions", "enforce"),  # copies what the prompt spells out
    ],
)
def test_a_server_without_structured_output_is_refused(
    tmp_path: Path, fault: str, word: str
) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    with FakeJudge(
        nonconforming=fault == "nonconforming", follow_instructions=fault == "follow_instructions"
    ) as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items)
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, "structured-output check", word)
    assert not (tmp_path / "run").exists()


def test_existing_run_needs_resume_and_same_config(tmp_path: Path, fake_judge: FakeJudge) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    cfg = write_config(tmp_path / "c.toml", fake_judge.url, items)
    out = tmp_path / "run"
    assert run_cli("--config", str(cfg), "--out", str(out)).returncode == 0
    again = run_cli("--config", str(cfg), "--out", str(out))
    _assert_one_line_error(again.stderr, again.returncode, "--resume")
    other = write_config(tmp_path / "c2.toml", fake_judge.url, items, seeds=[1])
    changed = run_cli("--config", str(other), "--out", str(out), "--resume")
    _assert_one_line_error(changed.stderr, changed.returncode, "different config")
    resumed = run_cli("--config", str(cfg), "--out", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "reused 8" in resumed.stderr


def test_metrics_cli_bad_file(tmp_path: Path) -> None:
    import subprocess
    import sys

    bad = tmp_path / "x.parquet"
    bad.write_text("not parquet")
    proc = subprocess.run(
        [sys.executable, "-m", "judgeprobe.metrics", str(bad)], capture_output=True, text=True
    )
    _assert_one_line_error(proc.stderr, proc.returncode, "Parquet")


def _metrics_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judgeprobe.metrics", *args],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip


def test_url_without_v1_says_what_is_wrong(tmp_path: Path, fake_judge: FakeJudge) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    root = fake_judge.url.removesuffix("/v1")
    cfg = write_config(tmp_path / "c.toml", root, items)
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, f"use {fake_judge.url}")
    assert "structured-output" not in proc.stderr
    assert fake_judge.chat_requests == 0


def test_config_naming_a_directory(tmp_path: Path) -> None:
    proc = run_cli("--config", str(tmp_path), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, "is a directory")


@pytest.mark.parametrize("under", [False, True])
def test_out_naming_a_file_is_refused_before_any_request(
    tmp_path: Path, fake_judge: FakeJudge, *, under: bool
) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    cfg = write_config(tmp_path / "c.toml", fake_judge.url, items)
    blocker = tmp_path / "a-file"
    blocker.write_text("keep me\n")
    out = blocker / "run" if under else blocker
    proc = run_cli("--config", str(cfg), "--out", str(out))
    _assert_one_line_error(proc.stderr, proc.returncode, "--out", str(blocker))
    assert fake_judge.auth_seen == []  # no server was asked
    assert blocker.read_text() == "keep me\n"


@pytest.mark.parametrize(
    ("flag", "needles"),
    [
        ("x=ftp://127.0.0.1:9/v1", ("url", "ftp://127.0.0.1:9/v1")),
        ("bad name=http://127.0.0.1:9/v1", ("name", "'bad name'")),
        ("x=http://127.0.0.1:9/v1,http://127.0.0.1:9/v1", ("repeat",)),
        ("x=http://127.0.0.1:9/v1,ftp://h/v1", ("ftp://h/v1",)),
    ],
)
def test_bad_judge_values_are_one_line_naming_field_and_value(
    tmp_path: Path, flag: str, needles: tuple[str, ...]
) -> None:
    proc = run_cli("--judge", flag, "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, *needles)
    assert "errors.pydantic.dev" not in proc.stderr


def test_config_value_errors_name_the_value(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('order = "sideways"\n[engine]\nmax_attempts = 0\n')
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, "order", "'sideways'")


def _judgments(path: Path, conditions: list[str]) -> Path:
    rows = [
        {"judge": "j", "protocol": "baseline", "condition": c, "item_id": f"i{n}",
         "subset": "s", "order": "12", "seed": 0, "verdict": "A", "target": "A"}
        for c in conditions for n in range(3)
    ]  # fmt: skip
    frame = pl.DataFrame(rows, schema={k: JUDGMENT_SCHEMA[k] for k in rows[0]})
    frame.write_parquet(path)
    return path


def test_metrics_out_in_a_missing_directory(tmp_path: Path) -> None:
    table = _judgments(tmp_path / "j.parquet", ["Blind", "True"])
    proc = _metrics_cli(str(table), "--out", str(tmp_path / "missing" / "m.csv"))
    _assert_one_line_error(proc.stderr, proc.returncode, "no such directory")
    assert proc.stdout == ""  # refused before the table was printed


def test_metrics_on_an_empty_table(tmp_path: Path) -> None:
    table = tmp_path / "j.parquet"
    pl.DataFrame(schema=JUDGMENT_SCHEMA).write_parquet(table)
    proc = _metrics_cli(str(table))
    _assert_one_line_error(proc.stderr, proc.returncode, "no judgments")
    assert not (tmp_path / "metrics.csv").exists()


def test_metrics_without_blind(tmp_path: Path) -> None:
    table = _judgments(tmp_path / "j.parquet", ["True", "Flip"])
    proc = _metrics_cli(str(table))
    _assert_one_line_error(proc.stderr, proc.returncode, "no Blind condition", "Flip, True")


def test_metrics_match_blind_in_any_case(tmp_path: Path) -> None:
    table = _judgments(tmp_path / "j.parquet", ["blind", "True"])
    proc = _metrics_cli(str(table))
    assert proc.returncode == 0, proc.stderr
    metrics = pl.read_csv(tmp_path / "metrics.csv")
    blind = metrics.filter(pl.col("condition") == "Blind")
    assert blind.height == 1
    assert blind["EDR"][0] == 0.0  # no Tie among the Blind verdicts


def test_report_on_a_corrupt_judgments_table(tmp_path: Path) -> None:
    (tmp_path / "judgments.parquet").write_bytes(b"PAR1 this is not parquet")
    (tmp_path / "manifest.json").write_text("{}")
    proc = subprocess.run(
        [sys.executable, "-m", "judgeprobe.report", str(tmp_path)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    _assert_one_line_error(proc.stderr, proc.returncode, "judgments.parquet", "Parquet")


@pytest.mark.parametrize("field", ["document", "candidate_2"])
def test_whitespace_only_text_is_refused_like_an_empty_one(
    tmp_path: Path, fake_judge: FakeJudge, field: str
) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    rows = [orjson.loads(line) for line in items.read_bytes().splitlines()]
    rows[1][field] = " \n\t "
    items.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    cfg = write_config(tmp_path / "c.toml", fake_judge.url, items)
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, "line 2", field, "blank")
    assert fake_judge.auth_seen == []
    assert not (tmp_path / "run").exists()


def test_an_over_long_document_is_refused_before_anything_is_sent(
    tmp_path: Path, fake_judge: FakeJudge
) -> None:
    """The fake reports no context window: the item cap refuses it all the same."""
    items = make_items(tmp_path / "i.jsonl", 3)
    rows = [orjson.loads(line) for line in items.read_bytes().splitlines()]
    rows[2]["document"] = "The committee met again and argued at length. " * 200_000  # 9 MB
    items.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    cfg = write_config(tmp_path / "c.toml", fake_judge.url, items)
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(
        proc.stderr, proc.returncode, "1 item(s) over [engine] max_item_tokens 32768", "doc-0002"
    )
    assert fake_judge.auth_seen == []
    assert not (tmp_path / "run").exists()
