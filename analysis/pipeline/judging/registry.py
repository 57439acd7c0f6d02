"""Which judge a process uses: `judge_from_settings` (``CITEQ_JUDGE``, read at the process's edge)
and the named factories a test or the demo registers (``CITEQ_JUDGE_FACTORY``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from analysis.pipeline.judging.llm import OpenAIJudge
from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.judging.verdicts import Judge
from analysis.settings import JudgeSettings

def judge_from_env(env: Mapping[str, str]) -> Judge:
    """Build the judge the mapping ``env`` configures (an entry point hands it the environment):
    CITEQ_JUDGE (offline|openai), CITEQ_JUDGE_BASE_URL, CITEQ_JUDGE_MODEL, CITEQ_JUDGE_API_KEY,
    CITEQ_JUDGE_TIMEOUT (seconds) and CITEQ_JUDGE_ATTEMPTS (answers read per citation before it
    is `uncertain`).

    Raises ValueError naming the variable when the configuration is incomplete or a value
    is not valid (pydantic's ValidationError is one).
    """
    return judge_from_settings(JudgeSettings.from_env(env))


def judge_from_settings(settings: JudgeSettings) -> Judge:
    """Build the judge these settings configure (:func:`judge_from_env` says which)."""
    if settings.kind == "offline":
        return OfflineJudge()
    for name, value in (("CITEQ_JUDGE_BASE_URL", settings.base_url), ("CITEQ_JUDGE_MODEL", settings.model)):
        if not value:
            raise ValueError(f"CITEQ_JUDGE=openai needs {name}")
    return OpenAIJudge(
        base_url=settings.base_url, model=settings.model, api_key=settings.api_key, timeout=settings.timeout,
        attempts=settings.attempts,
    )


#: Judge factories by name; ``CITEQ_JUDGE_FACTORY`` chooses one (empty: :func:`judge_from_env`).
#: A test or the demo registers its own in a module the worker loads next to the actors
#: (``dramatiq actors tests.e2e.hooks``).
JUDGE_FACTORIES: dict[str, Callable[[], Judge]] = {}


def register_judge_factory(name: str, factory: Callable[[], Judge]) -> Callable[[], Judge]:
    """Make ``factory`` the judge factory named ``name`` in this process."""
    JUDGE_FACTORIES[name] = factory
    return factory


def judge_factory(name: str) -> Callable[[], Judge]:
    """The judge factory registered as ``name``; ValueError (a misconfiguration) if none is."""
    try:
        return JUDGE_FACTORIES[name]
    except KeyError:
        raise ValueError(f"CITEQ_JUDGE_FACTORY={name!r}: no judge factory is registered under that name in this "
                         f"process (registered: {', '.join(sorted(JUDGE_FACTORIES)) or 'none'})") from None
