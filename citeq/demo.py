"""``citeq demo``: a lecturer's batch of five analyses, live, on real processes.

On the embedded PostgreSQL when DATABASE_URL is unset. It migrates, starts one worker
process (``dramatiq actors``) and one scheduler (``periodiq actors``), creates a user,
brings in the sample corpus (``sample_data/``), admits five analyses back to back (one
starts, four queue), shows which runs and which wait, with a progress bar of the citations
judged, and ends with a verdict table per thesis and one job's HTML report written next to
its logs (the path is printed). The processes it started are stopped on exit, on Ctrl-C
and on SIGTERM.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from rich.columns import Columns
from rich.console import Console
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from broker.settings import EnvSettings, env_field

from analysis.pipeline.judging.registry import judge_from_env, register_judge_factory
from analysis.queue.jobs import ACTIVE, TERMINAL, JobStatus
from analysis.surface import terminal

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_data"
#: The two sample theses and the sources each cites (sample_data/expected.json).
THESES = {
    "thesis_retrieval_practice.pdf": ["okafor_lindqvist_2019.pdf", "hartmann_2020_feedback.pdf",
                                      "mueller_2021_spaced_homework.txt"],
    "thesis_urban_heat.pdf": ["castillo_2018_green_roofs.pdf", "nakamura_heat_notes.txt"],
}
#: Five analyses back to back, alternating the two theses.
BATCH = ["thesis_retrieval_practice.pdf", "thesis_urban_heat.pdf", "thesis_retrieval_practice.pdf",
         "thesis_urban_heat.pdf", "thesis_retrieval_practice.pdf"]
TIMEOUT_SECONDS = 150.0


class DemoSettings(EnvSettings):
    #: The offline judge answers in microseconds; the demo paces it so the progress is watchable.
    judge_seconds: float = env_field(0.3, "CITEQ_DEMO_JUDGE_SECONDS",
                                     "demo: seconds the judge takes per citation (0: full speed)", ge=0)


JUDGE_SECONDS = DemoSettings.from_env().judge_seconds
BAR_WIDTH = 24


class DemoFailed(RuntimeError):
    """The demo could not finish."""


class Processes:
    """The worker and scheduler processes the demo runs; stopped whatever happens."""

    def __init__(self, env: dict[str, str], log_dir: Path) -> None:
        self.env, self.log_dir = env, log_dir
        self.started: list[tuple[str, subprocess.Popen]] = []

    def start(self, name: str, argv: list[str]) -> None:
        log = (self.log_dir / f"{name}.log").open("w")
        proc = subprocess.Popen(argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        self.started.append((name, proc))

    def check(self) -> None:
        for name, proc in self.started:
            if proc.poll() is not None:
                tail = (self.log_dir / f"{name}.log").read_text()[-2000:]
                raise DemoFailed(f"the {name} process exited with status {proc.returncode}:\n{tail}")

    def stop(self) -> None:
        for _, proc in self.started:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for _, proc in self.started:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _executable(name: str) -> str:
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else (shutil.which(name) or name)


def run(*, workers: int = 4, keep_going: bool = False, out=None) -> int:
    out = out or sys.stdout
    from broker.migrate import migrate
    from citeq.devdb import database_url, default_home

    url = database_url()
    os.environ["DATABASE_URL"] = url
    say = lambda text="": print(text, file=out, flush=True)  # noqa: E731
    say(f"citeq demo on {_redact(url)}")
    migrate(url)
    import actors

    broker = actors.broker
    env = dict(os.environ, DATABASE_URL=url, PYTHONUNBUFFERED="1")
    if JUDGE_SECONDS > 0 and not os.environ.get("CITEQ_JUDGE_FACTORY"):
        env["CITEQ_JUDGE_FACTORY"] = PACED_JUDGE
    log_dir = default_home() / "demo"
    log_dir.mkdir(parents=True, exist_ok=True)
    procs = Processes(env, log_dir)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        # citeq.demo registers the paced judge in the worker (CITEQ_JUDGE_FACTORY=paced).
        procs.start("worker", [_executable("dramatiq"), "actors", "citeq.demo", "--processes", "1",
                               "--threads", str(workers), "--path", str(ROOT)])
        procs.start("scheduler", [_executable("periodiq"), "actors", "--path", str(ROOT)])
        say(f"started a worker and a scheduler (logs in {log_dir})")
        if env.get("CITEQ_JUDGE_FACTORY") == PACED_JUDGE:
            say(f"the offline judge is paced at {JUDGE_SECONDS:g} s per citation so you can watch "
                "(CITEQ_DEMO_JUDGE_SECONDS=0 for full speed)")
        user_id, documents = _prepare(broker, say)
        job_ids = _admit_batch(broker, user_id, documents, say)
        _watch(broker, procs, user_id, job_ids, out)
        _report(broker, job_ids, say, log_dir)
        return 0
    except KeyboardInterrupt:
        say("\ninterrupted: stopping the demo's processes")
        return 130
    except BrokenPipeError:  # its output was piped into `head` or the like, which quit
        return 141
    except DemoFailed as exc:
        say(f"\ndemo failed: {exc}")
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
        procs.stop()


class _PacedJudge:
    """The configured judge, slowed down to a watchable pace (demo only)."""

    def __init__(self, inner, seconds: float) -> None:
        self.inner, self.seconds = inner, seconds

    def judge(self, claim, passages):
        time.sleep(self.seconds)
        return self.inner.judge(claim, passages)


def paced_judge():
    """``CITEQ_JUDGE_FACTORY=paced`` of the demo's worker: the environment's judge, paced."""
    return _PacedJudge(judge_from_env(os.environ), JUDGE_SECONDS)


#: The name the demo's worker (which loads this module next to the actors) knows it by.
PACED_JUDGE = "paced"
register_judge_factory(PACED_JUDGE, paced_judge)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def _redact(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password:
        parts = parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@"))
    return urlunsplit(parts)


def _prepare(broker, say) -> tuple[int, dict[str, int]]:
    """A fresh demo user with credits, and the sample documents: {filename: document id}."""
    from actors import config
    from analysis.surface import accounts
    from citeq import uploading

    name = "demo-" + datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    user_id = accounts.create(broker, name, credits=10)
    say(f"created user {name} (id {user_id}) with 10 credits")
    files = sorted({f for thesis, sources in THESES.items() for f in [thesis, *sources]})
    say(f"uploading {len(files)} files from sample_data/ and waiting for them to be parsed ...")
    try:
        documents = uploading.upload_samples(broker, user_id, [SAMPLES / f for f in files], theses=set(THESES),
                                             settings=config.current().pipeline)
    except uploading.UploadFailed as exc:
        raise DemoFailed(str(exc)) from None
    say(f"parsed {len(documents)} documents")
    return user_id, documents


def _admit_batch(broker, user_id: int, documents: dict[str, int], say) -> list[int]:
    from actors import config
    from analysis.queue import userqueue

    say("admitting five analyses back to back ...")
    job_ids = []
    for thesis in BATCH:
        admission = userqueue.admit(user_id, documents[thesis], [documents[s] for s in THESES[thesis]],
                                    broker=broker, settings=config.current().queue)
        job_ids.append(admission.job_id)
        say(f"  job {admission.job_id}: {thesis} -> {admission.status.value}")
    return job_ids


def _bar(judged: int, total: int) -> str:
    filled = round(BAR_WIDTH * judged / total) if total else 0
    return "[" + "#" * filled + "." * (BAR_WIDTH - filled) + f"] {judged}/{total} citations judged"


def _row(job, *, tty: bool) -> list:
    """One job's cells: "job N", its thesis, and its state. On a terminal a running job's
    progress is rich's bar; elsewhere a text bar that reads the same in a log."""
    head = [f"job {job.id}", job.thesis_filename or ""]
    if job.status == JobStatus.QUEUED:
        return head + [f"queued, position {job.position}"]
    if job.status in ACTIVE:
        if not (job.progress and job.progress.total):
            return head + [job.status]
        judged, total = job.progress.judged, job.progress.total
        if tty:
            return head + [Columns([Text(f"{job.status:<9}"), ProgressBar(total=total, completed=judged,
                                    width=BAR_WIDTH), Text(f"{judged}/{total} citations judged")])]
        return head + [f"{job.status:<9} {_bar(judged, total)}"]
    if job.status == JobStatus.SUCCEEDED:
        counts = ", ".join(f"{n} {k}" for k, n in sorted((job.verdict_counts or {}).items()))
        return head + ["succeeded" + (f" ({counts})" if counts else "")]
    return head + [job.status + (f": {job.error}" if job.error else "")]


def _batch(jobs, *, tty: bool) -> Table:
    found = Table.grid(padding=(0, 2), pad_edge=True)
    for job in jobs:
        found.add_row(*map(terminal.cell, _row(job, tty=tty)))
    return found


def _watch(broker, procs: Processes, user_id: int, job_ids: list[int], out) -> None:
    """Show the batch until every job is terminal: redrawn in place on a terminal (rich's
    Live display), a new timestamped block on each change otherwise (a log reads in order)."""
    from analysis.surface import views

    tty = out.isatty()
    live = Live(console=Console(file=out), auto_refresh=False) if tty else None
    deadline = time.monotonic() + TIMEOUT_SECONDS
    last = None
    with live or contextlib.nullcontext():
        while True:
            jobs = sorted(views.jobs(broker, ids=job_ids, limit=len(job_ids)), key=lambda j: j.id)
            state = [_row(j, tty=False) for j in jobs]
            if state != last:
                if live is not None:
                    live.update(_batch(jobs, tty=True), refresh=True)
                else:
                    out.write(f"-- {time.strftime('%H:%M:%S')}\n{terminal.render(_batch(jobs, tty=False), file=out)}\n")
                    out.flush()
                last = state
            if all(j.status in TERMINAL for j in jobs):
                return
            procs.check()
            if time.monotonic() > deadline:
                raise DemoFailed(f"the batch did not finish within {TIMEOUT_SECONDS:.0f} s")
            time.sleep(0.25)


def _report(broker, job_ids: list[int], say, out_dir: Path) -> None:
    from analysis.surface import report, views

    jobs = [views.job(broker, j) for j in job_ids]
    failed = [j for j in jobs if j.status != JobStatus.SUCCEEDED]
    say()
    latest: dict[str, object] = {}
    for job in jobs:
        if job.status == JobStatus.SUCCEEDED:
            latest[job.thesis_filename] = job
    reports = {thesis: report.build(broker, job.id, user_id=job.user_id) for thesis, job in latest.items()}
    for thesis, found in reports.items():
        say(f"verdicts for {thesis} (job {found.job.id}; retrieval {found.job.retrieval_mode}, judge {found.job.judge}):")
        say(report.verdict_table(found))
        say()
    if failed:
        raise DemoFailed("; ".join(f"job {j.id} {j.status}: {j.error}" for j in failed))
    spans = sorted((j.started_at, j.finished_at) for j in jobs)
    overlaps = sum(1 for a, b in zip(spans, spans[1:]) if a[1] > b[0])
    if overlaps:
        raise DemoFailed(f"{overlaps} analyses of one user overlapped")
    say(f"done: {len(jobs)} analyses ran one after another, none overlapping.")
    if reports:
        last = max(reports.values(), key=lambda r: r.job.id)
        path = out_dir / f"report-job-{last.job.id}.html"
        path.write_text(report.render_html(last), encoding="utf-8")
        say(f"the report of job {last.job.id} ({last.thesis.filename}), to open in a browser or print: {path.resolve()}")
