"""A multipart/form-data body read as it streams in: file parts to temporary files, caps as they grow.

Starlette's ``request.form()`` reads the whole body before anyone can look at the parts.
Here each file part is written to a temporary file (hashed on the way) in the chunks the
server hands over, and the caller's limits are checked after every chunk: a file over the
per-file cap, or an upload over the user's staged-bytes room, is refused the moment its
bytes say so, and the rest of the body is never read. The process holds one chunk at a
time, whatever the files' sizes.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

#: Bytes of a body that are not file contents (boundaries, part headers, form fields): an
#: upload's files are at least its Content-Length minus this, which is what lets the caps be
#: checked from the headers alone.
FORM_OVERHEAD_BYTES = 64 * 1024
#: Longest value of a form field (a DOI, a kind, a session id).
FIELD_MAX_BYTES = 4096


class FormError(Exception):
    """The body is not a form this route can read: ``code`` and ``status`` say how."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


@dataclass
class FilePart:
    filename: str | None
    path: Path
    size: int = 0
    sha256: str = ""


@dataclass
class Form:
    fields: dict[str, list[str]] = field(default_factory=dict)
    files: list[FilePart] = field(default_factory=list)


@dataclass
class Limits:
    """Checked while the body streams in: ``on_file_bytes(filename, size)`` after every chunk of a
    file, ``on_total(bytes of all files)``; both raise to refuse. ``max_files`` file parts at most."""

    max_files: int
    on_file_bytes: Callable[[str, int], None]
    on_total: Callable[[int], None]
    file_field: str = "files"


class _Reader:
    def __init__(self, directory: Path, limits: Limits) -> None:
        self.dir, self.limits, self.form = directory, limits, Form()
        self.header_field = b""
        self.header_value = b""
        self.headers: dict[bytes, bytes] = {}
        self.name: str | None = None
        self.current: FilePart | None = None
        self.fh = None
        self.digest = None
        self.value = b""
        self.skip = False
        self.files_total = 0
        self.overhead = 0

    # python-multipart callbacks ----------------------------------------------------------

    def on_part_begin(self) -> None:
        self.headers, self.name, self.current, self.value, self.skip = {}, None, None, b"", False

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self.header_field += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self.header_value += data[start:end]

    def on_header_end(self) -> None:
        self.headers[self.header_field.lower()] = self.header_value
        self.header_field = self.header_value = b""

    def on_headers_finished(self) -> None:
        disposition, options = parse_options_header(self.headers.get(b"content-disposition", b"").decode("latin-1"))
        if disposition != b"form-data" or b"name" not in options:
            raise FormError(400, "malformed_multipart", "a part has no Content-Disposition: form-data; name=...")
        self.name = _decode(options[b"name"], "a field name")
        if b"filename" not in options:
            return
        if self.name != self.limits.file_field:  # a file in another field is not read
            self.skip = True
            return
        if len(self.form.files) >= self.limits.max_files:
            raise FormError(413, "files_per_upload_limit", f"an upload carries at most {self.limits.max_files} files")
        filename = _decode(options[b"filename"], "a file name") or None
        self.current = FilePart(filename=filename, path=self.dir / f"part{len(self.form.files)}")
        self.fh, self.digest = self.current.path.open("wb"), hashlib.sha256()
        self.form.files.append(self.current)

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        chunk = data[start:end]
        if self.skip:
            return
        if self.current is None:
            self.value += chunk
            if len(self.value) > FIELD_MAX_BYTES:
                raise FormError(413, "payload_too_large", f"a form field is longer than {FIELD_MAX_BYTES} bytes")
            return
        self.fh.write(chunk)
        self.digest.update(chunk)
        self.current.size += len(chunk)
        self.files_total += len(chunk)
        self.limits.on_file_bytes(self.current.filename or "upload", self.current.size)
        self.limits.on_total(self.files_total)

    def on_part_end(self) -> None:
        if self.current is None:
            if self.name is not None and not self.skip:
                self.form.fields.setdefault(self.name, []).append(_decode(self.value, f"the field {self.name!r}"))
            return
        self.fh.close()
        self.current.sha256 = self.digest.hexdigest()
        self.fh = self.current = None

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()


def _decode(raw: bytes, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FormError(422, "invalid_request", f"{what} is not valid UTF-8") from None


async def read_form(content_type: str, stream: AsyncIterator[bytes], directory: Path, limits: Limits) -> Form:
    """Parse a multipart body from ``stream`` into ``directory``; raises FormError or what the limits raise."""
    _, params = parse_options_header(content_type)
    boundary = params.get(b"boundary")
    if not boundary:
        raise FormError(400, "malformed_multipart", "the Content-Type names no multipart boundary")
    reader = _Reader(directory, limits)
    callbacks = {name: getattr(reader, name) for name in (
        "on_part_begin", "on_part_data", "on_part_end", "on_header_field", "on_header_value", "on_header_end",
        "on_headers_finished")}
    parser = MultipartParser(boundary, callbacks)
    received = 0
    try:
        async for chunk in stream:
            received += len(chunk)
            parser.write(chunk)
            if received - reader.files_total > FORM_OVERHEAD_BYTES:
                raise FormError(413, "payload_too_large",
                                f"the form's fields and headers take more than {FORM_OVERHEAD_BYTES} bytes")
        parser.finalize()
    except MultipartParseError as exc:
        raise FormError(400, "malformed_multipart", f"the multipart body could not be read: {exc}") from None
    finally:
        reader.close()
    return reader.form


def temporary_directory() -> tempfile.TemporaryDirectory:
    """Where one request's parts are spooled (removed when the request is done)."""
    return tempfile.TemporaryDirectory(prefix="citeq-upload-")
