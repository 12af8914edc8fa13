"""Corpus checks on Ray Data: each task checks whole trace files, the rows come back in
the shape of ``tracegate check --output json``, and the merged result is deterministic.

A trace file is never split: a task reads a file's bytes (from local disk, or from
object storage through Ray's readers) and checks all of its traces, exactly as the
command line checks that file. The specs are compiled once on the driver, where every
spec error is raised as :class:`tracegate.SpecError`; tasks receive the specs' text and
compile them again, so workers need no access to the spec files.

The merged rows are sorted by file, comparing paths component by component (the order
in which ``tracegate check DIR`` walks a directory); within a file they keep the
checker's order (records in file order, end-of-trace findings after their trace). The
summary row comes last. Given the same files, named the same way, the rows equal the
command line's, line for line.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Sequence, Union

from ._native import Checker

Row = dict[str, Any]
PathLike = Union[str, "os.PathLike[str]"]

TRACE_EXTENSIONS = ["jsonl", "json"]


def _file_key(path: str) -> list[str]:
    # Component by component: `a/x/f` sorts before `a/x-y`, as a directory walk does.
    return path.split("/")


def check_dataset(
    dataset: Any,
    specs: Any,
    *,
    trace_by: str | None = None,
    format: str | None = None,
    select: str | None = None,
    max_line_bytes: int | None = None,
    batch_size: int = 32,
) -> list[Row]:
    """Checks every trace file in ``dataset``, a Ray Dataset with a ``path`` (str) and a
    ``bytes`` column (what ``ray.data.read_binary_files(..., include_paths=True)``
    gives). Returns the rows, sorted as the module says, then the summary row."""
    options = dict(
        trace_by=trace_by, format=format, select=select, max_line_bytes=max_line_bytes
    )
    # Compiled here first: spec errors surface on the driver, before any task runs.
    driver = Checker(specs, **options)
    sources = driver.sources

    def check_batch(batch: dict[str, Any]) -> dict[str, list[Any]]:
        checker = Checker(sources, **options)
        out: dict[str, list[Any]] = {
            "file": [],
            "rows": [],
            "records": [],
            "traces": [],
            "synthesized": [],
        }
        for path, data in zip(batch["path"], batch["bytes"]):
            rows, records, traces, synthesized = checker.check_bytes(str(path), bytes(data))
            out["file"].append(str(path))
            # Rows of different types have different keys: kept as JSON text, one
            # column for all.
            out["rows"].append(json.dumps(rows))
            out["records"].append(records)
            out["traces"].append(traces)
            out["synthesized"].append(synthesized)
        return out

    checked = dataset.map_batches(check_batch, batch_size=batch_size).take_all()
    return merge(checked, specs=len(sources))


def merge(checked: Iterable[dict[str, Any]], *, specs: int) -> list[Row]:
    """Merges per-file results (``file``, ``rows`` as JSON text, ``records``,
    ``traces``, ``synthesized``) into the sorted rows and their summary."""
    ordered = sorted(checked, key=lambda item: _file_key(str(item["file"])))
    rows: list[Row] = []
    records = traces = synthesized = 0
    for item in ordered:
        rows.extend(json.loads(item["rows"]))
        records += int(item["records"])
        traces += int(item["traces"])
        synthesized += int(item.get("synthesized", 0))
    summary = {
        "type": "summary",
        "specs": specs,
        "traces": traces,
        "records": records,
        "synthesized": synthesized,
        "violations": sum(1 for row in rows if row.get("type") == "violation"),
        "errors": sum(1 for row in rows if row.get("type") == "error"),
    }
    return rows + [summary]


def check_files(
    paths: Union[PathLike, Sequence[PathLike]],
    specs: Any,
    *,
    trace_by: str | None = None,
    format: str | None = None,
    select: str | None = None,
    max_line_bytes: int | None = None,
    batch_size: int = 32,
) -> list[Row]:
    """Checks the trace files at ``paths`` (files, directories walked for ``*.jsonl``
    and ``*.json``, or any URI Ray's file readers take, such as ``s3://bucket/runs/``)
    on the current Ray cluster. Rows name files as Ray's reader names them."""
    import ray.data

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    dataset = ray.data.read_binary_files(
        [os.fspath(p) for p in paths],
        include_paths=True,
        file_extensions=TRACE_EXTENSIONS,
    )
    return check_dataset(
        dataset,
        specs,
        trace_by=trace_by,
        format=format,
        select=select,
        max_line_bytes=max_line_bytes,
        batch_size=batch_size,
    )
