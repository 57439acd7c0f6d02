"""The provider endpoint's settings (``CITEQ_JUDGE_*``), read at the process edge.
"""

from __future__ import annotations


from broker.settings import env_field
from analysis.settings import JudgeChoice

#: Answers of one citation the judge reads before it gives up and says `uncertain`.
DEFAULT_ATTEMPTS = 3


class JudgeSettings(JudgeChoice):
    """Judge configuration: ``CITEQ_JUDGE`` (:class:`analysis.settings.JudgeChoice`) and
    the ``CITEQ_JUDGE_*`` variables of the openai judge."""

    base_url: str | None = env_field(None, "CITEQ_JUDGE_BASE_URL", "openai judge: endpoint base URL")
    model: str | None = env_field(None, "CITEQ_JUDGE_MODEL", "openai judge: model")
    api_key: str | None = env_field(None, "CITEQ_JUDGE_API_KEY",
                                    "openai judge: API key (redacted from every log and error)")
    timeout: float = env_field(30.0, "CITEQ_JUDGE_TIMEOUT", "openai judge: request timeout, seconds", gt=0)
    attempts: int = env_field(DEFAULT_ATTEMPTS, "CITEQ_JUDGE_ATTEMPTS",
                              "openai judge: answers read per citation before uncertain", ge=1, le=10)

    @property
    def kind(self) -> str:
        return self.judge_provider
