"""Every TOML file a user gives fails in one line naming the file and the problem."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from judgeprobe import JudgeprobeError
from judgeprobe.core.tomlfile import packaged_toml, read_toml


class _Limits(BaseModel):
    min_n: int = Field(ge=1)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (None, r"^limits .*x\.toml: no such file$"),
        ("folder", r"^limits .*x\.toml: is a directory, not a TOML file$"),
        (b"min_n = [", r"^limits .*x\.toml: not valid TOML: "),
        (b"\xff\xfe", r"^limits .*x\.toml: not valid TOML: "),
        (b"min_n = 0", r"^limits .*x\.toml: min_n: .*greater than or equal to 1 \(got 0\)$"),
        (b"other = 1", r"^limits .*x\.toml: min_n: Field required$"),
    ],
)
def test_a_bad_file_is_one_line(tmp_path: Path, content: bytes | str | None, said: str) -> None:
    path = tmp_path / "x.toml"
    if content == "folder":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    with pytest.raises(JudgeprobeError, match=said):
        read_toml(path, "limits").validated(_Limits)


def test_a_good_file_keeps_its_bytes_and_origin(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_bytes(b"min_n = 3\n")
    found = read_toml(path, "limits")
    assert found.validated(_Limits).min_n == 3
    assert (found.raw, found.origin) == (b"min_n = 3\n", str(path))


def test_a_packaged_file_names_itself_builtin() -> None:
    found = packaged_toml("judgeprobe.card", "thresholds_v1.toml", "thresholds")
    assert found.origin == "builtin thresholds_v1.toml"
    assert found.data
