"""Security headers on every response, in one ASGI middleware.

The dashboard and the API docs load scripts and styles from this origin only (no inline
code), so the Content-Security-Policy can forbid everything else. A route that answers a
self-contained document (the HTML report) sets its own Content-Security-Policy; this
middleware keeps a header a route already set and adds only the missing ones.
"""

from __future__ import annotations

#: The headers every response carries unless its route set them.
HEADERS = {
    b"content-security-policy": (b"default-src 'self'; script-src 'self'; style-src 'self'; "
                                 b"img-src 'self' data:; connect-src 'self'; font-src 'self'; "
                                 b"frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"),
    b"x-content-type-options": b"nosniff",
    b"referrer-policy": b"no-referrer",
    b"x-frame-options": b"DENY",
    b"cross-origin-opener-policy": b"same-origin",
}


class SecurityHeaders:
    """Adds :data:`HEADERS` to every HTTP response that lacks them."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers.extend((name, value) for name, value in HEADERS.items() if name not in present)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
