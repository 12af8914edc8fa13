"""The runtime monitor: feed, allows, finish; spec errors; records from SDK shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tracegate
from conftest import RECONCILE, ROOT

BLIND = "blind re-create: the first create may have committed; look it up by request id first"

CREATE = {"kind": "call", "tool": "create_record", "call_id": "1", "args": {"request_id": "r1"}}
TIMEOUT = {"kind": "result", "call_id": "1", "status": "error",
           "error": {"category": "outcome_unknown"}}
RETRY = {"kind": "call", "tool": "create_record", "call_id": "2", "args": {"request_id": "r2"}}
LOOKUP = {"kind": "call", "tool": "lookup_by_request_id", "call_id": "3"}


def test_a_forbidden_call_is_denied_by_allows_and_reported_by_feed_at_once() -> None:
    monitor = tracegate.Monitor(str(RECONCILE))
    assert monitor.feed(CREATE) == []
    assert monitor.feed(TIMEOUT) == []
    want = {"allowed": False, "code": "forbidden-transition", "message": BLIND,
            "allowed_events": ["retry", "lookup"]}
    assert monitor.allows(RETRY) == want
    # Asking changed nothing: the same answer, and the way forward is still open.
    assert monitor.allows(RETRY) == want
    assert monitor.allows(LOOKUP) == {"allowed": True, "code": None, "message": None,
                                      "allowed_events": []}
    rows = monitor.feed(RETRY)
    assert len(rows) == 1
    row = rows[0]
    assert (row["type"], row["code"], row["message"]) == ("violation", "forbidden-transition", BLIND)
    assert (row["state"], row["event"], row["line"]) == ("unknown", "create", 3)
    assert row["path"] == [{"state": "idle", "event": "create", "line": 1},
                           {"state": "pending", "event": "outcome_unknown", "line": 2}]
    assert row["rule"] == {"file": str(RECONCILE), "line": 84, "column": 1}
    assert monitor.records == 3
    # The violation was handed out by feed; the end adds nothing.
    assert monitor.finish() == []


def test_finish_gives_the_end_of_trace_verdicts_only() -> None:
    monitor = tracegate.Monitor(RECONCILE)  # an os.PathLike
    monitor.feed(CREATE)
    # The call never gets a result: at the end it is missing, its outcome unknown, and
    # the trace may not end there.
    rows = monitor.finish()
    assert [(r["code"], r["state"]) for r in rows] == [("unaccepted-end", "unknown")]
    with pytest.raises(RuntimeError, match="finished"):
        monitor.feed(CREATE)
    with pytest.raises(RuntimeError, match="finished"):
        monitor.allows(CREATE)


def test_allows_agrees_with_feed_on_every_native_example_trace() -> None:
    checked = denied = 0
    for spec in sorted((ROOT / "specs").glob("*.tg")):
        for trace in sorted((ROOT / "traces" / spec.stem).glob("*/*.jsonl")):
            lines = [line for line in trace.read_text().splitlines() if line.strip()]
            records = [json.loads(line) for line in lines]
            if not all(isinstance(r, dict) and "trace" not in r for r in records):
                continue
            monitor = tracegate.Monitor(spec)
            for record in records:
                answer = monitor.allows(record)
                rows = monitor.feed(record)
                assert answer["allowed"] == (rows == []), (trace, record)
                if rows:
                    denied += 1
                    assert answer["code"] == rows[0]["code"]
                    assert answer["message"] == rows[0]["message"]
                    assert answer["allowed_events"] == rows[0].get("allowed", [])
            monitor.finish()
            checked += 1
    assert checked >= 20
    assert denied >= 10


def test_spec_text_compiles_and_spec_errors_carry_every_diagnostic() -> None:
    text = 'event a = call a\nevent b = call b\npath a -> b\nforbid a on a: "no a twice"\n'
    monitor = tracegate.Monitor(text)
    assert monitor.feed({"kind": "call", "tool": "a"}) == []
    assert monitor.allows({"kind": "call", "tool": "b"})["allowed"]
    assert monitor.allows({"kind": "call", "tool": "a"})["message"] == "no a twice"

    bad = "event a = call a\npath a -> nowhere_event\nforbid zzz on a: \"x\"\n"
    with pytest.raises(tracegate.SpecError) as raised:
        tracegate.Monitor(bad)
    diagnostics = raised.value.diagnostics
    assert len(diagnostics) >= 1
    assert all(d["type"] == "error" and d["file"] == "<spec 1>" for d in diagnostics)
    assert diagnostics[0]["line"] == 2
    assert "nowhere_event" in str(raised.value)

    with pytest.raises(tracegate.SpecError) as raised:
        tracegate.Monitor("no/such/spec.tg")
    assert [d["code"] for d in raised.value.diagnostics] == ["unreadable-input"]


def test_a_dict_that_is_not_a_record_is_malformed_and_checks_nothing() -> None:
    monitor = tracegate.Monitor(RECONCILE)
    bad = {"kind": "step", "tool": "create_record"}
    answer = monitor.allows(bad)
    assert answer == {"allowed": False, "code": "malformed-record",
                      "message": 'field `kind` is "step", expected "call", "result" or "message"',
                      "allowed_events": []}
    rows = monitor.feed(bad)
    assert [(r["code"], r["line"]) for r in rows] == [("malformed-record", 1)]
    with pytest.raises(TypeError):
        monitor.feed({"kind": "call", "args": {1: 2}})
    with pytest.raises(TypeError):
        monitor.feed({"kind": "call", "args": object()})
    assert monitor.finish() == []


def test_trace_by_keeps_conversations_apart() -> None:
    monitor = tracegate.Monitor(RECONCILE, trace_by="conversation")
    monitor.feed({**CREATE, "conversation": "a"})
    monitor.feed({**TIMEOUT, "conversation": "a"})
    assert not monitor.allows({**RETRY, "conversation": "a"})["allowed"]
    assert monitor.allows({**RETRY, "conversation": "b"})["allowed"]
    answer = monitor.allows(RETRY)
    assert answer["code"] == "malformed-record"
    assert "conversation" in answer["message"]


def test_records_from_sdk_shapes() -> None:
    call = tracegate.openai_tool_call({"id": "c1", "type": "function", "function": {
        "name": "create_record", "arguments": "{\"request_id\": \"r1\"}"}})
    assert call == {"kind": "call", "tool": "create_record", "call_id": "c1",
                    "args": {"request_id": "r1"}}
    result = tracegate.openai_tool_result({"role": "tool", "tool_call_id": "c1",
                                           "content": "{\"id\": \"rec_1\"}"})
    assert (result["kind"], result["status"], result["output"]) == ("result", "ok", {"id": "rec_1"})
    use = tracegate.anthropic_tool_use({"type": "tool_use", "id": "t1", "name": "pay",
                                        "input": {"amount": 3}})
    assert use == {"kind": "call", "tool": "pay", "call_id": "t1", "args": {"amount": 3}}
    failed = tracegate.anthropic_tool_result({"type": "tool_result", "tool_use_id": "t1",
                                              "is_error": True, "content": "declined"})
    assert (failed["status"], failed["call_id"]) == ("error", "t1")
    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": "search", "arguments": {"q": "x"}}}
    assert tracegate.mcp_request(request)["tool"] == "search"
    reply = {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "hit"}]}}
    got = tracegate.mcp_result(request, reply)
    assert (got["kind"], got["tool"], got["status"], got["call_id"]) == ("result", "search", "ok", "7")
    with pytest.raises(ValueError, match="tool call has no `function`"):
        tracegate.openai_tool_call({"id": "c2"})


def test_the_same_retry_is_denied_whatever_sdk_shape_it_comes_in() -> None:
    shapes = [
        tracegate.openai_tool_call({"id": "c2", "type": "function", "function": {
            "name": "create_record", "arguments": "{}"}}),
        tracegate.anthropic_tool_use({"type": "tool_use", "id": "c2", "name": "create_record",
                                      "input": {}}),
        tracegate.mcp_request({"jsonrpc": "2.0", "id": "c2", "method": "tools/call",
                               "params": {"name": "create_record", "arguments": {}}}),
    ]
    monitor = tracegate.Monitor(RECONCILE)
    monitor.feed(CREATE)
    monitor.feed(TIMEOUT)
    for shape in shapes:
        assert monitor.allows(shape)["code"] == "forbidden-transition"
