"""Errors of the analysis queue: one base class, a flat hierarchy, the docstring is the message.

Every admission error carries a machine-readable ``code`` (what HTTP answers and the CLI
prints) and ``context`` (the values that made it fail). Raising one inside ``admit`` rolls
the whole admission back: no job, no held run, no charge.
"""

from __future__ import annotations


class AnalysisError(Exception):
    """The analysis queue refused or failed an operation."""

    code = "analysis_error"

    def __init__(self, message: str | None = None, **context: object) -> None:
        self.context = context
        super().__init__(message or (self.__doc__ or "").strip())

    def as_dict(self) -> dict:
        return {"code": self.code, "message": str(self), **{k: v for k, v in self.context.items()}}


class AdmissionError(AnalysisError):
    """The analysis could not be admitted."""

    code = "admission_error"


class InvalidInput(AdmissionError):
    """The input does not match what this entry point accepts (see analysis/inputs.py)."""

    code = "invalid_request"


class UnknownUser(AdmissionError):
    """No account exists for this user."""

    code = "unknown_user"


class InsufficientCredits(AdmissionError):
    """The account has fewer credits than the analysis costs."""

    code = "insufficient_credits"


class UnknownDocument(AdmissionError):
    """A thesis or source is not a document of this user."""

    code = "unknown_document"


class NoSources(AdmissionError):
    """An analysis needs at least one source document."""

    code = "no_sources"


class DocumentNotReady(AdmissionError):
    """A thesis or source has not been parsed yet (or its parsing failed)."""

    code = "document_not_ready"


class InvalidDoi(AdmissionError):
    """A source's DOI is not shaped like a DOI (10.<registrant>/<suffix>)."""

    code = "invalid_doi"


class BudgetExhausted(AdmissionError):
    """The judge provider's daily budget is spent; try again tomorrow."""

    code = "budget_exhausted"


class QueueFull(AdmissionError):
    """The user has as many analyses waiting or running as allowed."""

    code = "queue_full"


class PayloadTooLarge(AdmissionError):
    """The analysis options are larger than allowed."""

    code = "payload_too_large"


class UnknownJob(AnalysisError):
    """No such analysis job for this user."""

    code = "unknown_job"


class NotCancelable(AnalysisError):
    """Only a queued or pending analysis can be canceled; this one already started or ended."""

    code = "not_cancelable"


class TransientReleaseError(AnalysisError):
    """Releasing a held run failed for now (provider unreachable, database blip); retry later."""

    code = "release_unavailable"
