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
