"""`tracegate.check` returns exactly the rows of `tracegate check --output json`."""

from __future__ import annotations

from pathlib import Path

import pytest

import tracegate
from conftest import ROOT


def test_check_rows_equal_the_command_lines_on_the_examples(cli, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    have = tracegate.check("specs", "traces")
    want = cli.check_json(["specs"], ["traces"])
    assert have == want
    assert have[-1]["type"] == "summary" and have[-1]["violations"] > 0


def test_check_takes_lists_paths_and_options(cli, tmp_path: Path) -> None:
    trace = tmp_path / "split.jsonl"
    trace.write_text(
        '{"case":"a","kind":"call","tool":"create_record","call_id":"1"}\n'
        '{"case":"b","kind":"call","tool":"create_record","call_id":"1"}\n'
        '{"case":"a","kind":"result","call_id":"1","status":"missing"}\n'
        '{"case":"a","kind":"call","tool":"create_record","call_id":"2"}\n'
        "not json\n"
    )
    spec = ROOT / "specs" / "reconcile_before_retry.tg"
    have = tracegate.check([spec], [trace], trace_by="case")
    want = cli.check_json([spec], [trace], "--trace-by", "case")
    assert have == want
    assert [r.get("code") for r in have] == [
        "forbidden-transition", "malformed-record", "unaccepted-end", None]


def test_spec_errors_raise_with_the_rows_the_command_line_prints(cli, tmp_path: Path) -> None:
    spec = tmp_path / "bad.tg"
    spec.write_text("event a = call a\npath a -> b\n")
    with pytest.raises(tracegate.SpecError) as raised:
        tracegate.check(spec, ROOT / "traces")
    want = [row for row in cli.check_json([spec], [ROOT / "traces"]) if row["type"] == "error"]
    assert raised.value.diagnostics == want
    with pytest.raises(tracegate.SpecError) as raised:
        tracegate.check(tmp_path / "none", ROOT / "traces")
    assert raised.value.diagnostics[0]["code"] == "unreadable-input"


def test_checker_checks_content_as_the_file_would_be(tmp_path: Path) -> None:
    checker = tracegate.Checker(ROOT / "specs")
    # Sources in the order `check` loads them: the directory walked in sorted order.
    names = [Path(p).name for p, _ in checker.sources]
    assert names == sorted(p.name for p in (ROOT / "specs").glob("*.tg"))
    again = tracegate.Checker(checker.sources)
    path = ROOT / "traces" / "reconcile_before_retry" / "fail" / "forbidden-transition.jsonl"
    rows, records, traces, synthesized = again.check_bytes(str(path), path.read_bytes())
    want = tracegate.check(ROOT / "specs", path)
    assert rows == want[:-1]
    summary = want[-1]
    assert (records, traces, synthesized) == (
        summary["records"],
        summary["traces"],
        summary["synthesized"],
    )
    with pytest.raises(ValueError, match="unknown format"):
        tracegate.Checker(ROOT / "specs", format="yaml")
