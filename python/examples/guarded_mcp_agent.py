"""An agent loop whose MCP tool calls are checked by tracegate before they run.

The model speaks OpenAI Chat Completions (assistant messages with ``tool_calls``); the
tools live behind an MCP server, reached through a client session with MCP's
``call_tool(name, arguments)``. :class:`GuardedSession` wraps that session: before each
``tools/call`` request goes out it asks the monitor whether the call is allowed, and a
forbidden call is not sent at all. The model gets a tool error saying why and what it
may do instead, and the loop goes on.

Everything here runs offline: :class:`ScriptedModel` replays a fixed script (the model
a test needs) and :class:`RecordsServer` is an in-process MCP server whose first
``create_record`` times out after dispatch. With the real thing, pass an
``mcp.ClientSession`` to :class:`GuardedSession` and call your model instead.

Run it from the repository root: ``python python/examples/guarded_mcp_agent.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from typing import Any

import tracegate

SPEC = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "specs", "reconcile_before_retry.tg"
)


class Blocked(Exception):
    """The monitor forbade a tool call; it was not sent."""

    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__(answer["message"])
        self.answer = answer


@dataclass
class ToolResult:
    """What MCP's ``tools/call`` returns: ``content`` parts and ``isError``."""

    content: list[dict[str, Any]]
    isError: bool = False
    structuredContent: dict[str, Any] | None = None


class GuardedSession:
    """An MCP client session whose tool calls are checked before they run.

    ``session`` is anything with MCP's ``async call_tool(name, arguments)`` (an
    ``mcp.ClientSession``). Each call is built as the JSON-RPC request it is, asked
    about (:meth:`tracegate.Monitor.allows`), sent only if allowed, and its reply fed to
    the monitor, so the next question knows what happened.
    """

    def __init__(self, session: Any, monitor: tracegate.Monitor) -> None:
        self.session = session
        self.monitor = monitor
        self.next_id = 1
        self.violations: list[dict[str, Any]] = []

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        request = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        self.next_id += 1
        call = tracegate.mcp_request(request)
        answer = self.monitor.allows(call)
        if not answer["allowed"]:
            raise Blocked(answer)
        self.violations += self.monitor.feed(call)
        try:
            result = await self.session.call_tool(name, arguments)
        except TimeoutError:
            # No reply will come: the call's result is missing, and whether it ran is
            # unknown.
            missing = {"kind": "result", "tool": name, "call_id": call["call_id"],
                       "status": "missing"}
            self.violations += self.monitor.feed(missing)
            raise
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": {
            "content": result.content, "isError": result.isError,
            **({"structuredContent": result.structuredContent}
               if result.structuredContent is not None else {}),
        }}
        self.violations += self.monitor.feed(tracegate.mcp_result(request, reply))
        return result


class RecordsServer:
    """An in-process MCP server: ``create_record`` (whose first call commits and then
    times out), ``lookup_by_request_id``."""

    def __init__(self) -> None:
        self.records: dict[str, str] = {}
        self.executed: list[tuple[str, dict[str, Any]]] = []

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        self.executed.append((name, arguments))
        request_id = arguments["request_id"]
        if name == "create_record":
            record_id = f"rec_{len(self.records) + 1}"
            self.records[request_id] = record_id
            if len(self.executed) == 1:
                raise TimeoutError("upstream timed out after the request was dispatched")
            return ToolResult([{"type": "text", "text": record_id}], structuredContent={"id": record_id})
        if name == "lookup_by_request_id":
            if request_id in self.records:
                found = {"id": self.records[request_id]}
                return ToolResult([{"type": "text", "text": json.dumps(found)}], structuredContent=found)
            return ToolResult([{"type": "text", "text": "not found"}], isError=True)
        return ToolResult([{"type": "text", "text": f"unknown tool {name}"}], isError=True)


@dataclass
class ScriptedModel:
    """A model that answers from a script: each turn, the next assistant message. It
    retries the create blindly after the timeout, and looks the record up when told it
    may not."""

    seen: list[dict[str, Any]] = field(default_factory=list)
    turn: int = 0

    def complete(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        self.seen = messages
        self.turn += 1
        create = {"request_id": "req_1", "title": "Expired TLS certificate"}

        def call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
            return {"role": "assistant", "content": None, "tool_calls": [{
                "id": call_id, "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}]}

        script = {
            1: call("call_1", "create_record", create),
            # The blind re-create: a new request id, as if the first call never happened
            # (the same id would be an idempotent retry, which the spec allows).
            2: call("call_2", "create_record", {**create, "request_id": "req_2"}),
            3: call("call_3", "lookup_by_request_id", {"request_id": "req_1"}),
        }
        return script.get(self.turn, {"role": "assistant", "content": "The record exists."})


async def run_agent(model: ScriptedModel, session: GuardedSession) -> list[dict[str, Any]]:
    """The agent loop: ask the model, run the tools it calls, hand back the results."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Open a record for the expired TLS cert."}]
    for _ in range(10):
        message = model.complete(messages)
        messages.append(message)
        if not message.get("tool_calls"):
            break
        for tool_call in message["tool_calls"]:
            name = tool_call["function"]["name"]
            arguments = json.loads(tool_call["function"]["arguments"])
            try:
                result = await session.call_tool(name, arguments)
                content = json.dumps(result.structuredContent) if result.structuredContent \
                    else result.content[0]["text"]
            except Blocked as blocked:
                content = (f"not run: {blocked.answer['message']} "
                           f"(allowed now: {', '.join(blocked.answer['allowed_events'])})")
            except TimeoutError as err:
                content = f"error: {err}"
            messages.append({"role": "tool", "tool_call_id": tool_call["id"], "content": content})
    return messages


def main() -> None:
    server = RecordsServer()
    session = GuardedSession(server, tracegate.Monitor(SPEC))
    messages = asyncio.run(run_agent(ScriptedModel(), session))
    for message in messages:
        print(json.dumps(message))
    print("executed:", server.executed)
    print("end of conversation:", session.monitor.finish())


if __name__ == "__main__":
    main()
