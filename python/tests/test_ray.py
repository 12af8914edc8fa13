"""Corpus checks on a local Ray cluster give the command line's verdicts, row for row."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import tracegate
from conftest import ROOT

ray = pytest.importorskip("ray")
from tracegate import ray as tracegate_ray  # noqa: E402


def native_trace(rng: random.Random) -> list[dict]:
    """A create_record conversation: some reconcile, some retry blindly, some never end."""
    records: list[dict] = [{"kind": "message", "role": "user", "text": "open a record"}]
    calls = 0

    def call(tool: str, **args) -> str:
        nonlocal calls
        calls += 1
        call_id = f"call_{calls}"
        records.append({"kind": "call", "tool": tool, "call_id": call_id, "args": args})
        return call_id

    def result(call_id: str, **fields) -> None:
        records.append({"kind": "result", "call_id": call_id, **fields})

    for _ in range(rng.randint(1, 4)):
        created = call("create_record", request_id=f"r{rng.randint(1, 9)}")
        outcome = rng.choice(["ok", "ok", "unknown", "failed", "missing"])
        if outcome == "ok":
            result(created, status="ok", output={"id": f"rec_{rng.randint(1, 99)}"})
        elif outcome == "failed":
            result(created, status="error", error={"category": "validation"})
        elif outcome == "unknown":
            result(created, status="error", error={"category": "outcome_unknown"})
            move = rng.choice(["lookup", "retry", "stop"])
            if move == "lookup":
                looked = call("lookup_by_request_id", request_id="r1")
                result(looked, status="ok", output={"id": "rec_1"})
            elif move == "retry":
                retried = call("create_record", request_id="r1")
                result(retried, status="ok", output={"id": "rec_2"})
            else:
                break
        else:
            break  # the call is never answered
        if rng.random() < 0.2:
            noted = call("attach_note", text="done")
            result(noted, status="ok")
    return records


def write_corpus(base: Path, count: int) -> None:
    rng = random.Random(15)
    # `x` and `x-y`: a walk goes into `x/` before `x-y/`, whatever the bytes say.
    folders = [base / "x", base / "x-y", base / "x" / "deep", base]
    for i in range(count):
        folder = folders[i % len(folders)]
        folder.mkdir(parents=True, exist_ok=True)
        records = native_trace(rng)
        if i % 10 == 3:
            # Chat Completions messages: read by the OpenAI adapter.
            messages = [{"role": "user", "content": "open a record"}]
            for n, record in enumerate(r for r in records if r["kind"] == "call"):
                messages.append({"role": "assistant", "content": None, "tool_calls": [{
                    "id": record["call_id"], "type": "function",
                    "function": {"name": record["tool"], "arguments": json.dumps(record["args"])}}]})
                messages.append({"role": "tool", "tool_call_id": record["call_id"],
                                 "content": json.dumps({"id": f"rec_{n}"})})
            (folder / f"run-{i:04}.json").write_text(json.dumps({"messages": messages}))
            continue
        lines = [json.dumps(record) for record in records]
        if i % 17 == 5:
            lines.insert(1, "{not json")
        (folder / f"run-{i:04}.jsonl").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    yield
    ray.shutdown()


def test_ray_verdicts_equal_the_command_lines(cluster, cli, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, 300)
    specs = ROOT / "specs"
    want = cli.check_json([specs], [corpus])
    have = tracegate_ray.check_files(corpus, specs, batch_size=16)
    assert have == want
    summary = have[-1]
    assert summary["traces"] == 300
    assert summary["violations"] > 20 and summary["errors"] > 5
    codes = {row.get("code") for row in have}
    assert {"forbidden-transition", "unaccepted-end", "malformed-record"} <= codes
    # Deterministic: the same corpus gives the same rows in the same order.
    assert tracegate_ray.check_files(corpus, specs, batch_size=7) == have


def test_spec_errors_surface_on_the_driver(cluster, tmp_path: Path) -> None:
    bad = tmp_path / "bad.tg"
    bad.write_text("event a = call a\npath a -> b\n")
    dataset = ray.data.from_items([{"path": "x.jsonl", "bytes": b"{}\n"}])
    with pytest.raises(tracegate.SpecError):
        tracegate_ray.check_dataset(dataset, bad)


def test_merge_sorts_files_as_a_directory_walk_does() -> None:
    rows = lambda name: json.dumps([{"type": "error", "file": name}])  # noqa: E731
    checked = [
        {"file": "c/x-y/a.jsonl", "rows": rows("c/x-y/a.jsonl"), "records": 1, "traces": 1},
        {"file": "c/x/b.jsonl", "rows": rows("c/x/b.jsonl"), "records": 2, "traces": 1},
        {"file": "c/a.jsonl", "rows": "[]", "records": 3, "traces": 2},
    ]
    merged = tracegate_ray.merge(checked, specs=1)
    assert [row.get("file") for row in merged] == ["c/x/b.jsonl", "c/x-y/a.jsonl", None]
    assert merged[-1] == {"type": "summary", "specs": 1, "traces": 4, "records": 6,
                          "synthesized": 0, "violations": 0, "errors": 2}
