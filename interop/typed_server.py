"""Typed tools written with the official MCP Python SDK's `MCPServer`, over stdio: each return
type becomes the tool's `outputSchema` (a list is wrapped as `{"result": [...]}` and sent as a
text per item; a model, a `TypedDict` or a dataclass as one text of its JSON; a `str` as
`{"result": "..."}`), as the SDK ships them. Every list holds `count` rows, the row `failing`
among them failed.

    python typed_server.py
"""

from dataclasses import dataclass
from typing import Optional, TypedDict

from pydantic import BaseModel

from mcp.server.mcpserver import MCPServer

app = MCPServer("typed-results")


class Row(BaseModel):
    id: int
    name: str
    status: str


def rows(count: int, failing: int) -> list[Row]:
    return [
        Row(id=i, name=f"row number {i}", status="failed" if i == failing else "ok")
        for i in range(count)
    ]


@app.tool()
def list_rows(count: int = 2000, failing: int = 1234) -> list[Row]:
    """The rows, as a list of models."""
    return rows(count, failing)


class Listing(TypedDict):
    rows: list[Row]
    total: int


@app.tool()
def listing(count: int = 2000, failing: int = 1234) -> Listing:
    """The rows in a TypedDict, with their total."""
    return {"rows": rows(count, failing), "total": count}


@dataclass
class Point:
    x: int
    y: int
    label: str


@dataclass
class Track:
    name: str
    points: list[Point]


@app.tool()
def track(count: int = 2000) -> Track:
    """A dataclass holding a list of dataclasses."""
    return Track(name="a track", points=[Point(x=i, y=i * 2, label=f"point {i}") for i in range(count)])


class Report(BaseModel):
    title: str
    rows: list[Row]
    note: Optional[str] = None
    owner: Optional[str] = None


@app.tool()
def report(count: int = 2000, failing: int = 1234) -> Report:
    """A model with a nested list and optional fields."""
    return Report(title="nightly", rows=rows(count, failing), note="x" * 3000, owner=None)


@app.tool()
def by_name(count: int = 2000, failing: int = 1234) -> dict[str, Row]:
    """The rows by their names."""
    return {row.name: row for row in rows(count, failing)}


@app.tool()
def hello(name: str, times: int = 1) -> str:
    """Greets `name`, `times` times, one greeting a line."""
    return "".join(f"hello, {name} ({i})\n" for i in range(1, times + 1))


if __name__ == "__main__":
    app.run()
