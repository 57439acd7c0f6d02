"""The pipeline's settings and the judge variable shared with the queue's admission."""

from analysis.settings import PipelineSettings, QueueSettings


def test_admission_budget_and_the_judge_read_the_same_variable():
    assert QueueSettings.from_env({"CITEQ_JUDGE": "openai"}).judge_provider == "openai"
    assert QueueSettings.from_env({}).judge_provider == "offline"


def test_upload_caps_default_to_the_design_and_read_the_environment():
    defaults = PipelineSettings.from_env({})
    assert (defaults.max_active_parse_jobs, defaults.max_staged_bytes) == (3, 120 * 1024 * 1024)
    assert defaults.blob_ttl_seconds == 6 * 3600
    tuned = PipelineSettings.from_env({"CITEQ_MAX_ACTIVE_PARSE_JOBS": "5", "CITEQ_MAX_FILE_BYTES": "1000"})
    assert (tuned.max_active_parse_jobs, tuned.max_file_bytes) == (5, 1000)


def test_the_analyze_actor_runs_the_pipeline_by_default():
    assert QueueSettings.from_env({}).analyze_work == "pipeline"


def test_a_bad_value_is_a_typed_error_naming_its_variable():
    import pydantic
    import pytest

    from broker.settings import BrokerSettings

    with pytest.raises(pydantic.ValidationError, match=r"CITEQ_POOL_SIZE\n.*greater than or equal to 1"):
        BrokerSettings.from_env({"CITEQ_POOL_SIZE": "0"})
    with pytest.raises(pydantic.ValidationError, match=r"CITEQ_JUDGE\n"):
        QueueSettings.from_env({"CITEQ_JUDGE": "oracle"})


def test_empty_variables_are_unset_keywords_win_and_direct_construction_reads_no_environment(monkeypatch):
    from broker.settings import BrokerSettings

    monkeypatch.setenv("CITEQ_POOL_SIZE", "3")
    assert BrokerSettings.from_env().pool_size == 3
    assert BrokerSettings.from_env(pool_size=5).pool_size == 5
    assert BrokerSettings.from_env({"CITEQ_POOL_SIZE": ""}).pool_size == 8
    assert BrokerSettings().pool_size == 8


def test_every_variable_is_declared_once():
    from analysis.settings import EmbeddingsSettings, JudgeSettings
    from analysis.surface.accounts import TokenSettings
    from broker.settings import BrokerSettings
    from citeq.demo import DemoSettings
    from citeq.devdb import DevDbSettings
    from web.settings import WebSettings

    # CITEQ_JUDGE is one field (JudgeChoice) that the queue and the judge both inherit.
    from analysis.settings import JudgeChoice

    assert issubclass(QueueSettings, JudgeChoice) and issubclass(JudgeSettings, JudgeChoice)
    assert JudgeSettings.from_env({"CITEQ_JUDGE": " OpenAI "}).kind == "openai"
    declared = [var for cls in (BrokerSettings, QueueSettings, PipelineSettings, WebSettings, TokenSettings,
                                DevDbSettings, DemoSettings, EmbeddingsSettings)
                for var in cls.variables().values()]
    declared += [v for k, v in JudgeSettings.variables().items() if k != "judge_provider"]
    assert len(declared) == len(set(declared)), sorted(v for v in declared if declared.count(v) > 1)
