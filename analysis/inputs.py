"""What may cross into citeq from outside: bounded ids and checked strings, in one place.

HTTP bodies and paths, the CLI's arguments and the Python API (:func:`analysis.queue.userqueue.admit`,
:func:`analysis.pipeline.intake.uploads.stage_upload`, :func:`analysis.surface.accounts.create`) all validate their
inputs with the types below, so each limit is written once and every entry point refuses
the same input with the same typed error (:class:`InvalidInput`, code ``invalid_request``).

- An id is a PostgreSQL ``bigint`` that a ``bigserial`` can hand out: 1 … 2**63 − 1. Anything
  else would reach the database as an out-of-range error.
- A string is valid UTF-8 without NUL (PostgreSQL ``text`` and ``jsonb`` hold neither a NUL
  nor a lone surrogate; a surrogate also arrives from undecodable bytes in a command line).
- Lengths are capped where the schema or a reader cares (file names 255, DOIs 300,
  idempotency keys 200, user names 100).
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, ValidationError

from analysis.errors import InvalidInput

#: Largest id PostgreSQL's bigint holds (and so every id column of the schema).
ID_MAX = 2**63 - 1
#: Longest upload file name (most file systems' limit).
FILENAME_MAX = 255
#: Longest DOI (the DOI handbook sets no limit; real ones stay far below this).
DOI_MAX = 300
#: A DOI: the directory indicator 10, a registrant code, a slash, a suffix without spaces.
DOI_PATTERN = re.compile(r"^10\.\d{4,9}/\S+$")
#: Longest idempotency key.
IDEMPOTENCY_KEY_MAX = 200
#: Longest user name.
USER_NAME_MAX = 100
#: Most source documents of one analysis.
SOURCES_MAX = 500
#: Deepest nesting of an analysis' options.
OPTIONS_DEPTH_MAX = 16

_ASCII_DIGITS = re.compile(r"[0-9]+")


def check_text(value: str) -> str:
    """``value`` if it is storable text: no NUL, no lone surrogate (valid UTF-8 once encoded)."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid UTF-8 (no lone surrogates)") from None
    return value


def _check_json(value: Any, depth: int = 0) -> Any:
    if depth > OPTIONS_DEPTH_MAX:
        raise ValueError(f"must not nest deeper than {OPTIONS_DEPTH_MAX} levels")
    if isinstance(value, str):
        check_text(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError("keys must be strings")
            check_text(k)
            _check_json(v, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _check_json(v, depth + 1)
    elif isinstance(value, float) and not math.isfinite(value):
        raise ValueError("numbers must be finite")
    elif not isinstance(value, (int, float, bool, type(None))):
        raise ValueError(f"must be JSON, not {type(value).__name__}")
    return value


def _not_all_digits(value: str) -> str:
    if value.isdigit():
        raise ValueError("must not be all digits (an all-digit argument names a user id)")
    return value


Text = Annotated[str, AfterValidator(check_text)]
#: A row id of any table: a positive bigint.
Id = Annotated[int, Field(ge=1, le=ID_MAX)]
IdempotencyKey = Annotated[str, Field(min_length=1, max_length=IDEMPOTENCY_KEY_MAX), AfterValidator(check_text)]
FileName = Annotated[str, Field(min_length=1, max_length=FILENAME_MAX), AfterValidator(check_text)]
Doi = Annotated[str, Field(max_length=DOI_MAX), AfterValidator(check_text)]
UserName = Annotated[str, Field(min_length=1, max_length=USER_NAME_MAX), AfterValidator(check_text),
                     AfterValidator(_not_all_digits)]
Email = Annotated[str, Field(min_length=3, max_length=320), AfterValidator(check_text)]
#: An analysis' options: JSON whose strings are all storable.
Options = Annotated[dict[str, Any], AfterValidator(_check_json)]


class AdmissionInput(BaseModel):
    """An admission as ``admit()`` accepts it (HTTP and the CLI validate the same fields)."""

    user_id: Id
    thesis_id: Id
    source_ids: list[Id] = Field(default_factory=list, max_length=SOURCES_MAX)
    delta_of_job_id: Id | None = None
    idempotency_key: IdempotencyKey | None = None
    options: Options = Field(default_factory=dict)


class AccountInput(BaseModel):
    """A new account's name and email."""

    name: UserName | None = None
    email: Email | None = None


def errors_of(exc: ValidationError) -> list[dict]:
    """A validation error's details without the offending input (which may not be serialisable)."""
    return [{"loc": [str(p) if not isinstance(p, int) else p for p in e["loc"]], "msg": e["msg"], "type": e["type"]}
            for e in exc.errors(include_url=False, include_context=False, include_input=False)]


def invalid(exc: ValidationError) -> InvalidInput:
    """The typed error for a validation error: each bad field and why, never its value."""
    errors = errors_of(exc)
    where = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in errors)
    return InvalidInput(f"invalid input: {where}", errors=errors)


def validated(model: type[BaseModel], **fields) -> BaseModel:
    """``model`` built from ``fields``, or :class:`InvalidInput` naming each bad field."""
    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        raise invalid(exc) from None


def parse_id(text: str) -> int:
    """An id written as ASCII digits (``٣`` and ``²`` are digits to Python, not to us); ValueError otherwise."""
    text = text.strip()
    if not _ASCII_DIGITS.fullmatch(text) or len(text) > 19 or not 1 <= int(text) <= ID_MAX:
        raise ValueError(f"an id is a whole number from 1 to {ID_MAX}")
    return int(text)


def is_id(text: str) -> bool:
    """Whether a reference written by a person is an id (ASCII digits only) rather than a name."""
    return bool(_ASCII_DIGITS.fullmatch(text))


def json_safe(value: Any) -> Any:
    """``value`` made serialisable for an error answer: strings that cannot be encoded are replaced."""
    try:
        json.dumps(value, allow_nan=False).encode("utf-8")
        return value
    except (TypeError, ValueError, UnicodeEncodeError):
        return repr(value).encode("utf-8", "backslashreplace").decode("ascii", "replace")
