"""Token routes: list your tokens, revoke one of yours; operators revoke any.

A revoked token is refused from the next request on (authentication reads the database
every time). Minting stays with the CLI (``citeq users token``): a token that could mint
tokens would outlive its own revocation.
"""

from __future__ import annotations

from fastapi import Depends, FastAPI, Request

from analysis.surface import accounts

from .deps import PathId, operator, user


def install(app: FastAPI) -> None:
    @app.get("/api/tokens", tags=["users"], response_model=list[accounts.TokenInfo])
    def my_tokens(request: Request, user_id: int = Depends(user)):
        """Your tokens: id, label, created, expires, last used, revoked (never the token itself)."""
        return accounts.tokens(request.app.state.broker, user_id)

    @app.post("/api/tokens/{token_id}/revoke", tags=["users"], response_model=accounts.TokenInfo)
    def revoke_mine(request: Request, token_id: PathId, user_id: int = Depends(user)):
        """Revoke one of your tokens (this one too): refused from the next request on."""
        return accounts.revoke(request.app.state.broker, token_id, user_id=user_id)

    @app.post("/api/ops/tokens/{token_id}/revoke", tags=["ops"], response_model=accounts.TokenInfo)
    def revoke_any(request: Request, token_id: PathId, _=Depends(operator)):
        """Revoke any token by id."""
        return accounts.revoke(request.app.state.broker, token_id)
