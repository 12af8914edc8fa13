"""The guarded agent loop blocks the forbidden call before it runs."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys

import tracegate
from conftest import RECONCILE, ROOT


def load_example():
    path = ROOT / "python" / "examples" / "guarded_mcp_agent.py"
    spec = importlib.util.spec_from_file_location("guarded_mcp_agent", path)
    module = importlib.util.module_from_spec(spec)
    # Dataclasses look their module up by name.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_blind_retry_never_reaches_the_server_and_the_agent_recovers() -> None:
    example = load_example()
    server = example.RecordsServer()
    session = example.GuardedSession(server, tracegate.Monitor(RECONCILE))
    messages = asyncio.run(example.run_agent(example.ScriptedModel(), session))

    # The server ran the first create (which timed out) and the lookup, never the retry.
    assert [name for name, _ in server.executed] == ["create_record", "lookup_by_request_id"]
    assert list(server.records.values()) == ["rec_1"]
    tool_replies = [m["content"] for m in messages if m["role"] == "tool"]
    assert tool_replies[0].startswith("error: upstream timed out")
    assert tool_replies[1] == (
        "not run: blind re-create: the first create may have committed; "
        "look it up by request id first (allowed now: retry, lookup)")
    assert json.loads(tool_replies[2]) == {"id": "rec_1"}
    assert messages[-1] == {"role": "assistant", "content": "The record exists."}
    # Nothing it did broke the spec, and it ended where a trace may end.
    assert session.violations == []
    assert session.monitor.finish() == []


def test_without_the_guard_the_retry_runs_and_is_a_violation() -> None:
    example = load_example()
    server = example.RecordsServer()
    monitor = tracegate.Monitor(RECONCILE)

    session = example.GuardedSession(server, monitor)
    session.monitor = _AlwaysAllow(monitor)
    asyncio.run(example.run_agent(example.ScriptedModel(), session))
    assert [name for name, _ in server.executed][:2] == ["create_record", "create_record"]
    assert [v["code"] for v in session.violations] == ["forbidden-transition"]


class _AlwaysAllow:
    """A monitor whose answers are ignored: what the guard prevents."""

    def __init__(self, monitor: tracegate.Monitor) -> None:
        self.monitor = monitor

    def allows(self, record):
        return {"allowed": True, "code": None, "message": None, "allowed_events": []}

    def feed(self, record):
        return self.monitor.feed(record)

    def finish(self):
        return self.monitor.finish()


def test_the_example_runs_as_a_script(capsys) -> None:
    load_example().main()
    out = capsys.readouterr().out
    assert "executed: [('create_record'" in out
    assert "end of conversation: []" in out
