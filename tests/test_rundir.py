"""The run directory as a typed interface: its manifest read back as written, old ones too.

And its file names written in one module only, so no stage depends on a name another spells.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.core.files import write_json
from judgeprobe.runs.rundir import RETIRED, Manifest, RunDir
from tests.reportdata import rows, run_dir, table

PACKAGE = Path(__file__).resolve().parent.parent / "judgeprobe"
HOME = PACKAGE / "runs" / "rundir.py"
NAMES = {
    "judgments.parquet", "manifest.json", "plan.json", "store.sqlite", "metrics.csv",
    "metrics_ci.csv", "controlled.csv", "report.md", "report.html", "plots", "card.md",
    "card.html", "card.csv", "card_silent.csv", "attack_checks.csv", "degrade_checks.csv",
    "labels.parquet", "notes.txt", "annotation", "pairs.csv", "key.csv", "form.html",
    "agreement.csv",
}  # fmt: skip

#: A manifest as an early run wrote it: a key since retired (``RETIRED``), none of the newer ones.
OLD = {
    "run_id": "old-1",
    "created_at": "2025-06-01T00:00:00Z",
    "config_digest": "abc",
    "judges": [{"name": "j", "model": "m", "backend": "fake"}],
    "seeds": [0],
    "determinism": "greedy",
    "shard": "1/2",
}


def test_a_manifest_round_trips_byte_for_byte(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    run.write_manifest(OLD)
    written = run.manifest_file.read_bytes()
    write_json(tmp_path / "plain.json", OLD)  # what the sweep wrote before RunDir
    assert written == (tmp_path / "plain.json").read_bytes()
    manifest = run.manifest()
    assert manifest.run_id == "old-1"
    assert manifest.seeds == [0]
    assert "shard" not in manifest.model_dump()  # a retired key is dropped, and noted
    assert manifest.retired == ("shard",)
    assert manifest.kind == "cue"
    assert manifest.conditions == {}
    assert manifest.items_source is None


def test_an_old_manifest_loads(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_bytes(orjson.dumps(OLD))
    assert RunDir(tmp_path).manifest().config_digest == "abc"


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"{not json", "malformed manifest"),
        (orjson.dumps({**OLD, "seeds": "0"}), "seeds"),
        (orjson.dumps({k: v for k, v in OLD.items() if k != "run_id"}), "run_id"),
        (orjson.dumps([1, 2]), "malformed manifest"),
    ],
)
def test_a_malformed_manifest_is_one_line(tmp_path: Path, content: bytes, needle: str) -> None:
    (tmp_path / "manifest.json").write_bytes(content)
    with pytest.raises(JudgeprobeError, match=needle) as caught:
        RunDir(tmp_path).manifest()
    assert "\n" not in str(caught.value)
    assert RunDir(tmp_path).manifest_or_none() is None


def test_a_missing_manifest_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(JudgeprobeError, match=r"no manifest\.json"):
        RunDir(tmp_path).manifest()


def test_every_retired_key_is_documented() -> None:
    text = (PACKAGE.parent / "docs" / "outputs.md").read_text(encoding="utf-8")
    assert all(f"`{key}`" in text for key in RETIRED)


def test_an_undeclared_key_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_bytes(orjson.dumps({**OLD, "surprise": 1}))
    with pytest.raises(JudgeprobeError, match="unknown key surprise") as caught:
        RunDir(tmp_path).manifest()
    assert "\n" not in str(caught.value)
    with pytest.raises(ValueError, match="surprise"):
        RunDir(tmp_path).write_manifest({**OLD, "surprise": 1})  # nothing undeclared written


def test_the_model_is_strict_on_the_types_it_reads() -> None:
    with pytest.raises(ValueError, match="judges"):
        Manifest.model_validate_json(orjson.dumps({**OLD, "judges": "j"}))


@pytest.mark.parametrize(
    "broken",
    [b"{not json", orjson.dumps({**OLD, "judges": 3}), orjson.dumps({**OLD, "surprise": 1})],
)
def test_report_on_a_malformed_manifest_exits_2_with_one_line(
    tmp_path: Path, broken: bytes
) -> None:
    run = run_dir(tmp_path / "run", table(rows(["A", "B"] * 5)))
    (run / "manifest.json").write_bytes(broken)
    done = subprocess.run(
        [sys.executable, "-m", "judgeprobe", "report", str(run), "--resamples", "0"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("error: ")
    assert done.stderr.count("\n") == 1
    assert "manifest" in done.stderr


def test_report_rebuilds_an_old_run(tmp_path: Path) -> None:
    """An old run's directory (its manifest as then written) still gets its report."""
    from judgeprobe.metrics.load import load_run
    from judgeprobe.report.run import run_report
    from judgeprobe.text.lexicons import load_lexicons

    run = run_dir(tmp_path / "run", table(rows(["A", "B"] * 5)))
    manifest = orjson.loads((run / "manifest.json").read_bytes())
    (run / "manifest.json").write_bytes(orjson.dumps({**manifest, "shard": "1/2"}))
    html = run_report(load_run(run), load_lexicons(None), resamples=0)
    assert html == RunDir(run).report_html
    assert RunDir(run).report_md.is_file()
    shutil.rmtree(run / "plots", ignore_errors=True)


def _literals(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in NAMES}


def test_the_run_directory_names_its_files_in_one_module_only() -> None:
    found = {p: _literals(p) for p in PACKAGE.rglob("*.py")}
    elsewhere = {
        str(p.relative_to(PACKAGE)): sorted(n) for p, n in found.items() if n and p != HOME
    }
    assert elsewhere == {}
    assert found[HOME] == NAMES


def test_the_judgments_read_back_are_the_ones_written(tmp_path: Path) -> None:
    frame = table(rows(["A", "B"]))
    run = RunDir(tmp_path)
    frame.write_parquet(run.judgments)
    assert pl.read_parquet(run.judgments).equals(frame)
