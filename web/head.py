"""HEAD answered as GET without the body (RFC 9110, section 9.3.2), in one ASGI middleware.

Every general-purpose server must support HEAD wherever it supports GET; FastAPI's routes
answer only the methods they declare, so ``HEAD /healthz`` was a 405. This middleware runs
a HEAD request as the GET it stands for — the same authentication, limits and status — and
sends the response's head with an empty body: the ``Content-Length`` GET would send stays.
"""

from __future__ import annotations


class HeadAsGet:
    """Runs HEAD requests as GET and drops the body of their answer."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        ended = False

        async def send_head(message) -> None:
            nonlocal ended
            if message["type"] == "http.response.body":
                if ended:
                    return  # the rest of a streamed body: not sent
                ended = True
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_head)
