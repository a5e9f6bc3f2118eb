"""Card rows by kind: a tagged union each kind of which is one model, read by type, not by name.

The card tells its rows apart by their model (``card.record.CardRow``), so a comparison of a
row's ``kind`` with a string is a switch a row should answer itself; at most five remain. Every
kind's model sits in the union (adding a kind: one module, one entry), each kind is one model's
alone, and a card's rows read back from card.json as the same typed rows.
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
from pathlib import Path
from typing import get_args

import jsonschema
import pytest
from pydantic import TypeAdapter

import judgeprobe.card.kinds
from judgeprobe.card.from_run import card_for_run
from judgeprobe.card.kinds.base import RowBase
from judgeprobe.card.record import (
    KIND_ORDER,
    ROW_TYPES,
    CardRow,
    Estimate,
    ObservedPositionRow,
    ObservedRow,
)
from judgeprobe.runs.rundir import RunDir
from tests.test_card import _write, biased, reading

PACKAGE = Path(__file__).resolve().parent.parent / "judgeprobe"
MOST = 5


def _is_kind(node: ast.expr) -> bool:
    """``x.kind`` (not a manifest's) or ``x["kind"]``."""
    if isinstance(node, ast.Attribute) and node.attr == "kind":
        owner = node.value
        name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        return "manifest" not in str(name)
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and node.slice.value == "kind"
    )


def _is_text(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return bool(node.elts) and all(_is_text(e) for e in node.elts)
    return isinstance(node, ast.JoinedStr)


def kind_comparisons() -> list[str]:
    """Where a module that reads card rows compares a ``kind`` with a string."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "judgeprobe.card" not in text and "card" not in path.parts:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(_is_kind(s) for s in sides) and any(_is_text(s) for s in sides):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("startswith", "endswith")
                and _is_kind(node.func.value)
            ):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def test_at_most_five_comparisons_of_a_row_kind_with_a_string_remain() -> None:
    found = kind_comparisons()
    assert len(found) <= MOST, found


def test_the_count_sees_a_comparison() -> None:
    """The counter is not blind: the forms it looks for are found in a snippet."""
    snippet = 'a = r.kind == "cue"\nb = row["kind"] in ("x", "y")\nc = m.manifest.kind == "x"\n'
    tree = ast.parse(snippet)
    compares = [n for n in ast.walk(tree) if isinstance(n, ast.Compare)]
    hits = [
        c for c in compares
        if any(_is_kind(s) for s in [c.left, *c.comparators])
        and any(_is_text(s) for s in [c.left, *c.comparators])
    ]  # fmt: skip
    assert len(hits) == 2


def test_every_kind_model_is_in_the_union_once() -> None:
    for info in pkgutil.iter_modules(judgeprobe.card.kinds.__path__):
        importlib.import_module(f"judgeprobe.card.kinds.{info.name}")
    concrete = set()
    stack = [RowBase]
    while stack:
        for sub in stack.pop().__subclasses__():
            stack.append(sub)
            if "kind" in sub.model_fields and get_args(sub.model_fields["kind"].annotation):
                concrete.add(sub)
    assert concrete == set(ROW_TYPES)
    kinds = [k for model in ROW_TYPES for k in get_args(model.model_fields["kind"].annotation)]
    assert len(kinds) == len(set(kinds)) == len(KIND_ORDER)


def test_card_json_rows_read_back_as_the_same_typed_rows(tmp_path: Path) -> None:
    run = _write(tmp_path, biased() + reading(80, intact=70))
    card = card_for_run(run, resamples=200)
    adapter = TypeAdapter(list[CardRow])
    again = adapter.validate_json(adapter.dump_json(list(card.records)))
    assert again == list(card.records)
    assert {type(r).__name__ for r in again} == {"CueRow", "SensitivityRow"}
    assert RunDir(run).card_json.is_file()


def test_observed_rows_validate_against_the_published_schema() -> None:
    """A judge-logs card's rows (not made by the cue card above) fit card.schema.json too."""
    schema = json.loads((PACKAGE.parent / "docs" / "card.schema.json").read_text("utf-8"))
    row_schema = {"$defs": schema["$defs"], **schema["properties"]["rows"]["items"]}
    rows: list[CardRow] = [
        ObservedPositionRow(judge="j", protocol="p", row="position (observed)", n=10,
                            documents=10, effect=Estimate(value=0.2, lo=0.0, hi=0.4), p=0.1,
                            consistency=Estimate(value=0.7), verdict="CLEAR", note="n"),
        ObservedRow(kind="observed-agreement", judge="j", protocol="p", row="agreement",
                    test="", verdict="OBSERVED", note="κ"),
    ]  # fmt: skip
    adapter = TypeAdapter(list[CardRow])
    for row in json.loads(adapter.dump_json(rows)):
        jsonschema.Draft202012Validator(row_schema).validate(row)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(row_schema).validate({**row, "kind": "observed-nothing"})
