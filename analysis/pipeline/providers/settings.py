"""The provider endpoint's settings (``CITEQ_JUDGE_*``): declared with the pipeline's in
analysis/settings.py, which carries them inside ``PipelineSettings``; named here too."""

from __future__ import annotations

from analysis.settings import DEFAULT_ATTEMPTS, JudgeSettings

__all__ = ["DEFAULT_ATTEMPTS", "JudgeSettings"]
