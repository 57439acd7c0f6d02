"""Plain-text tables for a terminal, laid out by rich: the CLI's listings and the verdict
tables of ``citeq job`` and the demo.

Columns are measured in terminal cells (a wide or combining character does not push a row
out of line). On a terminal the table fits its width (long cells wrap) and the header is
bold; elsewhere (a pipe, a file, a captured test) it is plain text at its natural width,
one line per row, so ``grep`` and ``cut`` keep working.
"""

from __future__ import annotations

import io
import shutil
import sys
from collections.abc import Sequence

from rich import box
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

#: The width a table may take where there is no terminal: rows are never wrapped there.
UNLIMITED = 10_000


def grid(rows: Sequence[Sequence[object]], headers: Sequence[str]) -> Table:
    """The rows under their headers as a rich table: a rule under the header, no borders,
    two spaces between columns."""
    found = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0),
                  header_style="bold")
    for header in headers:
        found.add_column(header)
    for row in rows:
        found.add_row(*(cell(c) for c in row))
    return found


def cell(value: object) -> RenderableType:
    """A cell as given: None is empty, text is shown as it is (never read as rich markup, so
    a claim's "[1]" stays), anything rich can render is rendered."""
    if value is None:
        return Text("")
    if isinstance(value, str):
        return Text(value)
    return value if hasattr(value, "__rich_console__") or hasattr(value, "__rich__") else Text(str(value))


def render(renderable: RenderableType, *, file=None) -> str:
    """``renderable`` as the text printed to ``file`` (default stdout): styled and fitted
    to it when it is a terminal, plain and unwrapped otherwise; no trailing blanks."""
    file = sys.stdout if file is None else file
    tty = bool(getattr(file, "isatty", lambda: False)())
    console = Console(file=io.StringIO(), force_terminal=tty, no_color=not tty, highlight=False,
                      width=shutil.get_terminal_size().columns if tty else UNLIMITED)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.file.getvalue().splitlines())


def table(rows: Sequence[Sequence[object]], headers: Sequence[str]) -> str:
    """The rows under their headers, as :func:`render` writes them for stdout."""
    return render(grid(rows, headers))
