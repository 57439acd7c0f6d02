"""Typed errors of a judge or embeddings provider; each names the failure reason a job records.
"""

from __future__ import annotations


class ProviderError(Exception):
    """The judge provider failed."""

    #: the failure reason a job records when this error fails it
    code = "provider_error"


class ProviderUnavailable(ProviderError):
    """The judge provider cannot be reached or failed on its side (5xx); retry later."""


class ProviderRateLimited(ProviderError):
    """The judge provider asked us to slow down (HTTP 429)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        #: seconds to wait, from the Retry-After header, if the provider sent one
        self.retry_after = retry_after


class ProviderBadResponse(ProviderError):
    """The provider answered, but not in the wire format (an embeddings call; the judge
    retries a bad chat answer itself and ends `uncertain`)."""


class ProviderRejected(ProviderError):
    """The provider refused this request (a 4xx other than 429): no retry will change that."""


class ProviderPermanentError(ProviderRejected):
    """The provider refuses every request of this configuration: the job fails at once."""


class ProviderAuthFailed(ProviderPermanentError):
    """The provider refused the API key (HTTP 401 or 403)."""

    code = "provider_auth_failed"


class ProviderModelNotFound(ProviderPermanentError):
    """The provider does not know the model, or the endpoint (HTTP 404, or 400 "model not found")."""

    code = "provider_model_not_found"
