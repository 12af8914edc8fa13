"""tracegate: verify what AI agents do after a tool fails.

A spec says which sequences of tool calls and results are allowed. At run time a
:class:`Monitor` answers, before each tool call, whether the agent may make it
(:meth:`Monitor.allows`), and reports what the call and its result break
(:meth:`Monitor.feed`, :meth:`Monitor.finish`). On stored transcripts, :func:`check`
returns exactly the rows of ``tracegate check --output json``; :mod:`tracegate.ray`
spreads such checks over a Ray cluster.

Records are dicts in tracegate's native shape
(``{"kind": "call", "tool": "create_record", "call_id": "1", "args": {...}}``); the
``openai_*``, ``anthropic_*`` and ``mcp_*`` functions build them from the shapes the
SDKs use, through the same adapters that read stored transcripts.
"""

from ._native import (
    Checker,
    Monitor,
    SpecError,
    anthropic_tool_result,
    anthropic_tool_use,
    check,
    mcp_request,
    mcp_result,
    openai_tool_call,
    openai_tool_result,
)

__all__ = [
    "Checker",
    "Monitor",
    "SpecError",
    "anthropic_tool_result",
    "anthropic_tool_use",
    "check",
    "mcp_request",
    "mcp_result",
    "openai_tool_call",
    "openai_tool_result",
]
