"""Control characters out of extracted text, once, where every reader's output passes.

A PDF's text can hold a NUL byte, which PostgreSQL refuses in ``text`` (issue 11: the
item's write failed, it was retried and ended ``worker_crashed`` minutes later), and other
C0 controls or lone surrogates that nothing downstream wants. :func:`clean` drops them,
keeping newlines and tabs (and form feeds are dropped too: page breaks are pages by now);
:func:`clean_tree` applies it to every string inside a reader's result, whatever its shape
(pydantic models, lists, tuples, dicts), so a new reader needs nothing of its own.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

#: C0 controls except tab and newline, DEL, and UTF-16 surrogates (never valid alone in text).
_UNWANTED = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")


def clean(text: str) -> str:
    """``text`` without NUL and other C0 controls (``\\n`` and ``\\t`` stay) or lone surrogates."""
    return _UNWANTED.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def clean_tree(value: Any) -> Any:
    """``value`` with :func:`clean` applied to every string it contains."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, BaseModel):
        return value.model_copy(update={name: clean_tree(getattr(value, name)) for name in type(value).model_fields})
    if isinstance(value, list):
        return [clean_tree(v) for v in value]
    if isinstance(value, tuple):
        return type(value)(*map(clean_tree, value)) if hasattr(value, "_fields") else tuple(map(clean_tree, value))
    if isinstance(value, dict):
        return {clean_tree(k): clean_tree(v) for k, v in value.items()}
    return value
