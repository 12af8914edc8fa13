"""Type stubs for tracegate's extension module."""

import os
from typing import Any, Literal, Sequence, TypedDict, Union

SpecArg = Union[str, os.PathLike[str], tuple[Union[str, os.PathLike[str]], str]]
"""A spec file or directory (a str without a newline, or an os.PathLike), spec text (a
str holding a newline), or a (path, text) pair: text compiled as if read from path."""

Specs = Union[SpecArg, Sequence[SpecArg]]
Paths = Union[str, os.PathLike[str], Sequence[Union[str, os.PathLike[str]]]]

Row = dict[str, Any]
"""A row of the JSON Lines contract (README "JSON output"): a violation, an error, or
the summary; the keys of ``tracegate check --output json``."""

Record = dict[str, Any]
"""A native record: ``kind`` ("call", "result", "message"), ``tool``, ``call_id``,
``status``, ``args``, ``output``, ``error``, ... (DESIGN.md section 2)."""

class Allowance(TypedDict):
    allowed: bool
    code: Union[str, None]
    message: Union[str, None]
    allowed_events: list[str]

class SpecError(Exception):
    """A spec did not compile, or no spec was found."""

    diagnostics: list[Row]
    """Every error, as rows of the JSON Lines contract (``"type": "error"``)."""

class Monitor:
    """Checks one conversation's records as they happen. A monitor belongs to the
    thread that made it; the rows it returns name their file ``<runtime>`` and number
    records from 1 in the order they were fed (their ``line``)."""

    def __init__(self, specs: Specs, *, trace_by: Union[str, None] = None) -> None:
        """Compiles ``specs``; raises :class:`SpecError` with every error."""
    def feed(self, record: Record) -> list[Row]:
        """Checks the next record; returns the verdicts it makes final now (empty when
        allowed). A dict that is not a valid record gives a ``malformed-record`` row."""
    def allows(self, record: Record) -> Allowance:
        """Whether ``record`` may come next, and why not. Changes nothing:
        ``allows(r)["allowed"] == (feed(r) == [])``."""
    def finish(self) -> list[Row]:
        """Ends the conversation; returns the verdicts only its end can give (calls never
        answered, a state that may not end a trace). The monitor cannot be used after."""
    @property
    def records(self) -> int:
        """How many records were fed."""

class Checker:
    """Compiled specs and reading options, for checking many traces' content."""

    def __init__(
        self,
        specs: Specs,
        *,
        trace_by: Union[str, None] = None,
        format: Union[str, None] = None,
        select: Union[str, None] = None,
        max_line_bytes: Union[int, None] = None,
    ) -> None: ...
    def check_bytes(
        self, file: Union[str, os.PathLike[str]], data: bytes
    ) -> tuple[list[Row], int, int, int]:
        """Checks one trace file's content as ``tracegate check`` checks the file named
        ``file``: its rows (no summary), records read, traces found, and the ``missing``
        results synthesized for calls no record answered."""
    @property
    def sources(self) -> list[tuple[str, str]]:
        """The specs, in checking order, as (path, text) pairs: ``Checker(c.sources)``
        builds the same checker elsewhere (a Ray task)."""

def check(
    specs: Union[str, os.PathLike[str], Sequence[Union[str, os.PathLike[str]]]],
    traces: Paths,
    *,
    trace_by: Union[str, None] = None,
    format: Union[
        Literal["auto", "native", "openai", "openai-responses", "anthropic", "mcp", "otel", "atif", "toolbench"],
        None,
    ] = None,
    select: Union[str, None] = None,
    max_line_bytes: Union[int, None] = None,
) -> list[Row]:
    """The rows of ``tracegate check SPECS TRACES --output json``, the summary last.
    Raises :class:`SpecError` when a spec does not compile or none is found."""

def openai_tool_call(call: dict[str, Any]) -> Record: ...
def openai_tool_result(message: dict[str, Any]) -> Record: ...
def anthropic_tool_use(block: dict[str, Any]) -> Record: ...
def anthropic_tool_result(block: dict[str, Any]) -> Record: ...
def mcp_request(request: dict[str, Any]) -> Record: ...
def mcp_result(request: dict[str, Any], reply: dict[str, Any]) -> Record: ...
