"""The API docs (Swagger UI at ``/docs``) served from this process.

FastAPI's own pages load their scripts from a CDN and start them with an inline script,
which a strict Content-Security-Policy forbids (and which leaks every reader's visit to a
third party). The assets here come from the ``fastapi-offline`` package (current Swagger
UI builds, kept up to date on PyPI); the page and its start-up script are files of this
package (``static/apidocs/``), so ``script-src 'self'`` is all they need.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, HTMLResponse

from .deps import ApiError

HERE = Path(__file__).with_name("static") / "apidocs"
#: Files under /docs/assets/, each from the vendor package or from here, with its type.
_ASSETS = {
    "swagger-ui-bundle.js": ("vendor", "text/javascript; charset=utf-8"),
    "swagger-ui.css": ("vendor", "text/css; charset=utf-8"),
    "favicon.png": ("vendor", "image/png"),
    "swagger-init.js": ("here", "text/javascript; charset=utf-8"),
}


def _vendor() -> Path:
    return Path(str(files("fastapi_offline") / "static"))


def install(app: FastAPI) -> None:
    """Serve /docs and its assets (create the app with ``docs_url=None, redoc_url=None``)."""

    @app.get("/docs", include_in_schema=False)
    def swagger():
        return HTMLResponse((HERE / "swagger.html").read_text(encoding="utf-8"))

    @app.get("/docs/assets/{name}", include_in_schema=False)
    def asset(name: str):
        found = _ASSETS.get(name)
        if found is None:
            raise ApiError(404, "not_found", f"no docs asset {name}")
        where, media = found
        return FileResponse((_vendor() if where == "vendor" else HERE) / name, media_type=media,
                            headers={"Cache-Control": "public, max-age=86400"})
