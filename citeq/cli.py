"""The ``citeq`` command: set-up, users, analyses, operator views, the demo and the web process.

Every command talks to the database named by ``DATABASE_URL``; when it is unset, the
embedded PostgreSQL (``citeq db start``) is started and its ``citeq`` database used.
Every command migrates the schema first (under the migration lock, a no-op when current).
Exit status: 0 done, 1 refused or failed (the error's code and message on stderr),
2 usage error.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Sequence

from broker.settings import BrokerSettings

USER_HELP = "a user id (ASCII digits) or a user name (names are never all digits)"

class CliError(Exception):
    """A refusal the command reports as ``error: <code>: <message>`` with exit status 1."""

    def __init__(self, code: str, message: str, **context: object) -> None:
        super().__init__(message)
        self.code, self.context = code, context

    def as_dict(self) -> dict:
        return {"code": self.code, "message": str(self), **self.context}


# -- database and broker ----------------------------------------------------------------------


def database_url() -> str:
    """DATABASE_URL, or the embedded server's citeq database (started on demand)."""
    from citeq import devdb

    return devdb.database_url()


def boot():
    """Point the process at the database, migrate, and return the actors' broker."""
    from broker.migrate import migrate

    url = database_url()
    os.environ["DATABASE_URL"] = url
    migrate(url)
    import actors

    return actors.broker


def settings():
    """The process's settings, read from the environment once (by ``boot``'s import of actors)."""
    from actors import config

    return config.current()


def _user_id(broker, ref: str) -> int:
    """A USER argument: all ASCII digits is an id, anything else a name (never both)."""
    from analysis import inputs
    from analysis.surface import accounts

    user_id = accounts.resolve(broker, ref)
    if user_id is None:
        what = "id" if inputs.is_id(ref) else "name"
        raise CliError("unknown_user", f"no account with {what} {inputs.json_safe(ref)!r}", user=inputs.json_safe(ref))
    return user_id


def _id(text: str) -> int:
    """argparse type of every id argument: ASCII digits, 1 … 2**63-1 (PostgreSQL's bigint)."""
    from analysis import inputs

    try:
        return inputs.parse_id(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _count(text: str) -> int:
    """argparse type of --limit: 1 … 10000."""
    try:
        value = int(text) if text.isascii() else -1
    except ValueError:
        value = -1
    if not 1 <= value <= 10_000:
        raise argparse.ArgumentTypeError("a whole number from 1 to 10000")
    return value


def _bounded(kind: type, low: float, high: float, what: str) -> Callable[[str], float]:
    """An argparse type: a finite ``kind`` from ``low`` to ``high`` (nan, inf and out-of-range
    values are usage errors, not a traceback from deeper down)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not math.isfinite(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{what} from {low:g} to {high:g}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


_ttl_days = _bounded(float, 0.001, 36500, "a number of days")
_credits = _bounded(int, 0, 1_000_000, "a whole number of credits")
_seconds = _bounded(float, 0.1, 86400, "a number of seconds")
_threads = _bounded(int, 1, 64, "a whole number of threads")
_port = _bounded(int, 0, 65535, "a port")


# -- output -------------------------------------------------------------------------------------


def emit(args, data, human: Callable[[], str] | str) -> None:
    if args.json:
        print(json.dumps(data, indent=2, default=str))
    else:
        print(human() if callable(human) else human)


def table(rows: Sequence[Sequence[object]], headers: Sequence[str]) -> str:
    from analysis.surface import terminal

    return terminal.table(rows, headers)


def _job_rows(jobs) -> list[list]:
    rows = []
    for j in jobs:
        progress = f"{j.progress.judged}/{j.progress.total}" if j.progress else ""
        verdicts = " ".join(f"{k}={v}" for k, v in sorted((j.verdict_counts or {}).items()))
        rows.append([j.id, j.status, j.position or "", j.thesis_filename, j.delta_of or "", progress,
                     verdicts, j.error or ""])
    return rows


_JOB_HEADERS = ["job", "status", "pos", "thesis", "delta_of", "judged", "verdicts", "error"]


# -- commands -----------------------------------------------------------------------------------


def cmd_migrate(args) -> int:
    from broker.migrate import migrate

    url = database_url()
    applied = migrate(url)
    emit(args, {"applied": applied}, lambda: "applied: " + ", ".join(applied) if applied else "schema is current")
    return 0


def cmd_db(args) -> int:
    from citeq import devdb

    server = devdb.EmbeddedPostgres.for_name("main")
    if args.db_command == "stop":
        server.stop()
        emit(args, {"running": False}, "embedded PostgreSQL stopped")
        return 0
    if args.db_command == "start" or server.is_running():
        admin = server.start()
        devdb.ensure_database(admin, devdb.DB_NAME)
        url = devdb.with_dbname(admin, devdb.DB_NAME)
        emit(args, {"running": True, "url": url, "data_dir": str(server.data_dir)}, url)
        return 0
    raise CliError("not_running", "the embedded PostgreSQL is not running: `citeq db start`")


def cmd_users(args) -> int:
    from analysis.surface import accounts
    from analysis.surface.accounts import TokenSettings
    from analysis.errors import AnalysisError

    broker = boot()
    if args.users_command == "create":
        try:
            user_id = accounts.create(broker, args.name, credits=args.credits, email=args.email)
        except AnalysisError as exc:
            raise CliError(exc.code, str(exc), **exc.context) from None
        account = accounts.view(broker, user_id)
        emit(args, account.model_dump(mode="json"),
             f"created user {account.user_id} ({account.name}) with {account.credits} credits")
    elif args.users_command == "show":
        account = accounts.view(broker, _user_id(broker, args.user))
        emit(args, account.model_dump(mode="json"), lambda: "\n".join(
            [f"user {account.user_id} ({account.name or '-'}), {account.credits} credits",
             "jobs: " + (", ".join(f"{k} {v}" for k, v in sorted(account.jobs.items())) or "none")]))
    elif args.users_command == "tokens":
        if args.user is None and not args.operator:
            raise CliError("usage", "name a USER, or pass --operator for the operator tokens without a user")
        found = accounts.tokens(broker, _user_id(broker, args.user) if args.user is not None else None)
        emit(args, [t.model_dump(mode="json") for t in found], lambda: table(
            [[t.id, "operator" if t.operator else "user", t.label, _when(t.created_at), _when(t.expires_at),
              _when(t.last_used_at), _when(t.revoked_at)] for t in found],
            ["id", "kind", "label", "created", "expires", "last used", "revoked"]) if found else "no tokens")
    elif args.users_command == "revoke":
        try:
            info = accounts.revoke(broker, args.token_id)
        except AnalysisError as exc:
            raise CliError(exc.code, str(exc), **exc.context) from None
        emit(args, info.model_dump(mode="json"), f"token {info.id} revoked at {_when(info.revoked_at)}")
    else:
        if args.user is None and not args.operator:
            raise CliError("usage", "name a USER, or pass --operator for an operator token")
        user_id = _user_id(broker, args.user) if args.user is not None else None
        try:
            token, info = accounts.mint(broker, user_id, operator=args.operator, label=args.label,
                                        ttl_days=TokenSettings.from_env(token_ttl_days=args.ttl_days).token_ttl_days)
        except AnalysisError as exc:
            raise CliError(exc.code, str(exc), **exc.context) from None
        emit(args, {"user_id": user_id, "operator": args.operator, "token": token, "token_id": info.id,
                    "expires_at": info.expires_at.isoformat()}, token)
    return 0


def _when(at) -> str:
    return "" if at is None else at.strftime("%Y-%m-%d %H:%M")


def cmd_upload(args) -> int:
    broker = boot()
    from citeq import uploading

    from analysis.errors import AnalysisError

    user_id = _user_id(broker, args.user)
    try:
        result = uploading.upload_files(broker, user_id, args.files, kind=args.kind, session=args.session,
                                        wait=args.wait, timeout=args.timeout, settings=settings().pipeline)
    except AnalysisError as exc:
        raise CliError(exc.code, str(exc), **exc.context) from None
    except OSError as exc:
        raise CliError("unreadable_file", str(exc)) from None
    except uploading.UploadFailed as exc:
        raise CliError("parse_timeout", str(exc)) from None
    emit(args, result, lambda: uploading.describe(result))
    return 0 if result.get("status") != "failed" else 1


def cmd_analyze(args) -> int:
    from analysis.queue import userqueue
    from analysis.surface import views
    from analysis.errors import AnalysisError

    broker = boot()
    user_id = _user_id(broker, args.user)
    if any("=" not in opt for opt in args.option):
        raise CliError("usage", "each --option is KEY=VALUE")
    options = dict(opt.split("=", 1) for opt in args.option)
    try:
        admission = userqueue.admit(user_id, args.thesis, args.source, delta_of_job_id=args.delta_of,
                                    idempotency_key=args.idempotency_key, options=options, broker=broker,
                                    settings=settings().queue)
    except AnalysisError as exc:
        raise CliError(exc.code, str(exc), **exc.context) from None
    job = views.job(broker, admission.job_id)
    data = {**job.model_dump(mode="json", exclude={"verdicts"}), "created": admission.created}
    where = f"position {job.position} in the queue" if job.position else job.status
    emit(args, data, f"job {job.id}: {where}" + ("" if admission.created else " (idempotency key: existing job)"))
    return 0


def cmd_jobs(args) -> int:
    from analysis.surface import views

    broker = boot()
    jobs = views.jobs(broker, user_id=_user_id(broker, args.user), limit=args.limit)
    emit(args, [j.model_dump(mode="json", exclude={"verdicts"}) for j in jobs],
         lambda: table(_job_rows(jobs), _JOB_HEADERS) if jobs else "no jobs")
    return 0


def _verdict_table(job) -> str:
    if not job.verdicts:
        return "no verdicts (yet)"
    rows = [[v.verdict, v.confidence if v.confidence is None else f"{v.confidence:.2f}", v.marker,
             v.source_filename or "-", _clip(v.claim, 60)] for v in job.verdicts]
    return table(rows, ["verdict", "conf", "marker", "source", "claim"])


def _clip(text: str | None, n: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


def cmd_job(args) -> int:
    from analysis.surface import views

    broker = boot()
    job = views.job(broker, args.job)
    if job is None:
        raise CliError("unknown_job", f"no job {args.job}", job_id=args.job)
    emit(args, job.model_dump(mode="json"), lambda: "\n".join([
        table(_job_rows([job]), _JOB_HEADERS), "", _verdict_table(job)]))
    return 0


def cmd_report(args) -> int:
    """Write one job's report (HTML, CSV or JSON) to stdout or to --output."""
    from analysis.surface import report, views

    broker = boot()
    job = views.job(broker, args.job)
    found = report.build(broker, args.job, user_id=job.user_id) if job is not None else None
    if found is None:
        raise CliError("unknown_job", f"no job {args.job}", job_id=args.job)
    render = {"html": report.render_html, "csv": report.render_csv, "json": report.render_json}[args.format]
    data = render(found).encode("utf-8")
    if args.output is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return 0
    with open(args.output, "wb") as f:
        f.write(data)
    emit(args, {"job_id": args.job, "format": args.format, "path": os.path.abspath(args.output),
                "citations": found.total}, f"wrote the {args.format} report of job {args.job} to {args.output}")
    return 0


def cmd_cancel(args) -> int:
    from analysis.queue import userqueue
    from analysis.surface import views
    from analysis.errors import AnalysisError

    broker = boot()
    try:
        userqueue.cancel(args.job, broker=broker)
    except AnalysisError as exc:
        raise CliError(exc.code, str(exc), **exc.context) from None
    job = views.job(broker, args.job)
    emit(args, job.model_dump(mode="json", exclude={"verdicts"}), f"job {job.id}: {job.status}")
    return 0


def cmd_queues(args) -> int:
    from analysis.surface import operations
    from broker import controls

    broker = boot()
    known = {q for q in broker.get_declared_queues()}
    if args.queues_command in ("pause", "resume"):
        if not args.name:
            raise CliError("usage", f"name the queue to {args.queues_command}")
        names = {q.queue_name for q in operations.queues(broker, known_queues=known)}
        if args.name not in names:
            raise CliError("unknown_queue", f"no queue {args.name}", queue=args.name)
        if args.queues_command == "pause":
            controls.pause_queue(broker, args.name, by="cli")
        else:
            controls.resume_queue(broker, args.name)
        paused = args.queues_command == "pause"
        emit(args, {"queue_name": args.name, "paused": paused},
             f"queue {args.name} paused: workers claim nothing from it until `citeq queues resume {args.name}`"
             if paused else f"queue {args.name} resumed: workers claim from it again")
        return 0
    stats = operations.queues(broker, known_queues=known)
    emit(args, [s.model_dump(mode="json") for s in stats], lambda: table(
        [[s.queue_name, "paused" if s.paused else "NO WORKER" if s.stalled else "", s.ready, s.delayed, s.running,
          s.dead, s.processed_last_hour, s.failed_last_hour, f"{s.oldest_age_seconds:.1f}s"] for s in stats],
        ["queue", "state", "ready", "delayed", "running", "dead", "processed 1h", "failed 1h", "oldest"])
        if stats else "no queues")
    return 0


def cmd_groups(args) -> int:
    from broker import admin

    broker = boot()
    if args.key is not None:
        if not args.queue:
            print("citeq groups --key needs --queue", file=sys.stderr)
            return 1
        found = admin.group_messages(broker, args.queue, args.key, args.limit)
        emit(args, [m.model_dump(mode="json") for m in found], lambda: table(
            [[m.id, m.actor_name, m.state, m.group_seq, m.attempts, m.enqueued_at.isoformat(timespec="seconds")]
             for m in found], ["id", "actor", "state", "order", "attempts", "sent"])
            if found else f"no unfinished messages with key {args.key!r} on {args.queue}")
        return 0
    if args.keys:
        keys = admin.group_keys(broker, args.queue, args.limit)
        emit(args, [k.model_dump(mode="json") for k in keys], lambda: table(
            [[k.queue_name, k.group_key, k.held, k.in_flight,
              "-" if k.oldest_held_age_seconds is None else f"{k.oldest_held_age_seconds:.1f}s"] for k in keys],
            ["queue", "key", "held", "in flight", "oldest held"])
            if keys else "no keys with unfinished messages" + (f" on {args.queue}" if args.queue else ""))
        return 0
    stats = [s for s in admin.group_stats(broker) if not args.queue or s.queue_name == args.queue]
    emit(args, [s.model_dump(mode="json") for s in stats], lambda: table(
        [[s.queue_name, s.waiting_keys, s.held, s.in_flight, s.busy_keys, f"{s.oldest_held_age_seconds:.1f}s"]
         for s in stats], ["queue", "keys waiting", "held", "in flight", "keys in flight", "oldest held"])
        if stats else "no message groups")
    return 0


def cmd_workers(args) -> int:
    from broker import admin

    found = admin.workers(boot())
    emit(args, [w.model_dump(mode="json") for w in found], lambda: table(
        [[w.worker_id, w.pid, ",".join(w.queues), "?" if w.threads is None else w.threads, w.connections,
          f"{w.seconds_since_seen:.1f}s ago"] for w in found],
        ["worker", "pid", "queues", "threads", "connections", "last heartbeat"]) if found else "no live workers")
    return 0


def cmd_dead(args) -> int:
    from broker import admin

    broker = boot()
    if args.dead_command == "list":
        letters = admin.dead_letters(broker, queue_name=args.queue, limit=args.limit)
        emit(args, [d.model_dump(mode="json") for d in letters], lambda: table(
            [[d.id, d.queue_name, d.actor_name, d.attempts, _clip(d.reason, 50)] for d in letters],
            ["id", "queue", "actor", "attempts", "reason"]) if letters else "no dead letters")
        return 0
    ids = [*args.ids, *args.id] or None
    if not ids and not args.all and not args.queue:
        raise CliError("usage", f"name the dead letters to {args.dead_command} (ids), a --queue, or pass --all")
    fn = admin.retry_dead_letters if args.dead_command == "retry" else admin.purge_dead_letters
    n = fn(broker, ids=ids, queue_name=args.queue)
    verb = "retried" if args.dead_command == "retry" else "purged"
    emit(args, {verb: n}, f"{verb} {n} dead letter(s)")
    return 0


def cmd_demo(args) -> int:
    from citeq import demo

    return demo.run(workers=args.threads, keep_going=args.keep)


def cmd_web(args) -> int:
    boot()
    import uvicorn

    from web.settings import WebSettings

    from web import limits

    settings = WebSettings.from_env(host=args.host, port=args.port)
    uvicorn.run("web.app:create_app", factory=True, host=settings.host, port=settings.port,
                proxy_headers=True, log_level=args.log_level, **limits.uvicorn_options(settings))
    return 0


def _redacted(url: str) -> str:
    """A database URL without its password, for a log line."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(":" + parts.password + "@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _run_process(role: str, program: str, argv: list[str]) -> int:
    """Become ``program actors ARGS`` on the database every citeq command uses: DATABASE_URL,
    or the embedded server when it is unset (started on demand). The first log line says which."""
    origin = "DATABASE_URL" if os.environ.get("DATABASE_URL") else "the embedded server (DATABASE_URL unset)"
    url = database_url()
    print(f"citeq {role}: using database {_redacted(url)} from {origin}", file=sys.stderr, flush=True)
    os.environ["DATABASE_URL"] = url
    local = os.path.join(os.path.dirname(sys.executable), program)
    executable = local if os.access(local, os.X_OK) else program
    args = argv[1:] if argv[:1] == ["--"] else argv
    os.execvp(executable, [program, "actors", *args])
    return 0  # not reached: exec replaces this process


def cmd_worker(args) -> int:
    return _run_process("worker", "dramatiq", args.args)


def cmd_scheduler(args) -> int:
    return _run_process("scheduler", "periodiq", args.args)


# -- parser -------------------------------------------------------------------------------------


def _env_epilog(*settings) -> str:
    """The environment variables of the settings classes (or {variable: meaning} dicts),
    with what each means (their fields' descriptions)."""
    names: dict[str, str] = {}
    for found in settings:
        for var, meaning in (found if isinstance(found, dict) else found.environment()).items():
            names.setdefault(var, meaning)
    return "environment variables:\n" + "\n".join(f"  {k:<34} {v}" for k, v in names.items())


def build_parser() -> argparse.ArgumentParser:
    from analysis.settings import EmbeddingsSettings, JudgeSettings, PipelineSettings, QueueSettings
    from analysis.surface.accounts import TokenSettings
    from citeq.demo import DemoSettings
    from citeq.devdb import DevDbSettings
    from web.settings import WebSettings

    fmt = argparse.RawDescriptionHelpFormatter
    url_only = {"DATABASE_URL": BrokerSettings.environment()["DATABASE_URL"]}
    db_env = _env_epilog(url_only, DevDbSettings)
    queue_env = _env_epilog(url_only, QueueSettings)
    all_env = _env_epilog(BrokerSettings, QueueSettings, PipelineSettings, JudgeSettings, EmbeddingsSettings,
                          WebSettings, TokenSettings)
    parser = argparse.ArgumentParser(prog="citeq", description=__doc__, formatter_class=fmt, epilog=all_env)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name, fn, help, epilog=db_env):
        p = sub.add_parser(name, help=help, description=help, epilog=epilog, formatter_class=fmt)
        p.add_argument("--json", action="store_true", help="print JSON instead of text")
        p.set_defaults(fn=fn)
        return p

    add("migrate", cmd_migrate, "apply the schema/ migrations (under the migration lock)")
    p = add("db", cmd_db, "the embedded PostgreSQL used when DATABASE_URL is unset")
    p.add_argument("db_command", choices=["start", "stop", "url"])

    p = add("users", cmd_users, "create users, show them, mint, list and revoke their API tokens",
            _env_epilog(url_only, QueueSettings, TokenSettings))
    users = p.add_subparsers(dest="users_command", required=True, metavar="ACTION")
    u = users.add_parser("create", help="create a user with credits")
    u.add_argument("name", metavar="USER", help="a name that is not all digits (USER arguments of ASCII "
                   "digits are ids)")
    u.add_argument("--credits", type=_credits, default=10)
    u.add_argument("--email")
    u = users.add_parser("show", help="a user's credits and jobs")
    u.add_argument("user", metavar="USER", help=USER_HELP)
    u = users.add_parser("token", help="mint a bearer token (printed once; expires after CITEQ_TOKEN_TTL_DAYS)")
    u.add_argument("user", metavar="USER", nargs="?", help=USER_HELP)
    u.add_argument("--operator", action="store_true", help="the token also reaches the operator routes")
    u.add_argument("--label")
    u.add_argument("--ttl-days", type=_ttl_days, help="days until it expires (default CITEQ_TOKEN_TTL_DAYS or 90)")
    u = users.add_parser("tokens", help="list a user's tokens: id, created, expires, last used, revoked")
    u.add_argument("user", metavar="USER", nargs="?", help=USER_HELP)
    u.add_argument("--operator", action="store_true", help="list the operator tokens without a user")
    u = users.add_parser("revoke", help="revoke a token by id (refused from the next request on)")
    u.add_argument("token_id", type=_id, metavar="TOKEN_ID", help="the id `citeq users tokens` shows")
    for u in users.choices.values():
        u.add_argument("--json", action="store_true", help="print JSON instead of text")

    p = add("upload", cmd_upload, "upload thesis or source files for parsing", queue_env)
    p.add_argument("user", metavar="USER", help=USER_HELP)
    p.add_argument("files", metavar="FILE", nargs="+",
                   help="PDF, Word (.docx), Markdown (.md, .markdown) or plain text (.txt) files")
    p.add_argument("--kind", choices=["thesis", "source"], default=None,
                   help="what the files are (default: a file named thesis* is a thesis, others sources)")
    p.add_argument("--session", type=_id, help="add to this upload session (default: a new one)")
    p.add_argument("--wait", action="store_true", help="return when parsing is finished")
    p.add_argument("--timeout", type=_seconds, default=300.0, help="seconds --wait waits at most")

    p = add("analyze", cmd_analyze, "admit an analysis of a thesis against its sources", queue_env)
    p.add_argument("user", metavar="USER", help=USER_HELP)
    p.add_argument("--thesis", type=_id, required=True, metavar="DOC")
    p.add_argument("--source", type=_id, action="append", required=True, metavar="DOC")
    p.add_argument("--delta-of", type=_id, metavar="JOB", help="re-check of an earlier job (bypasses the queue)")
    p.add_argument("--idempotency-key", metavar="K")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")

    p = add("jobs", cmd_jobs, "a user's jobs, newest first, with queue positions")
    p.add_argument("user", metavar="USER", help=USER_HELP)
    p.add_argument("--limit", type=_count, default=50)
    p = add("job", cmd_job, "one job with its verdicts")
    p.add_argument("job", type=_id, metavar="JOB")
    p = add("report", cmd_report, "one job's report: every citation with claim, verdict, evidence and pages")
    p.add_argument("job", type=_id, metavar="JOB")
    p.add_argument("--format", choices=["html", "csv", "json"], default="html",
                   help="html: printable A4 document (default); csv: UTF-8 with BOM, one row per citation")
    p.add_argument("--output", metavar="FILE", help="write to FILE (default: stdout)")
    p = add("cancel", cmd_cancel, "cancel a queued or pending job (its credit is refunded)")
    p.add_argument("job", type=_id, metavar="JOB")

    p = add("queues", cmd_queues, "every broker queue: depth, running, dead, processed and failed in the "
            "last hour, oldest age; pause or resume one")
    p.add_argument("queues_command", nargs="?", choices=["list", "pause", "resume"], default="list",
                   metavar="ACTION", help="list (default), pause NAME (workers stop claiming from it), resume NAME")
    p.add_argument("name", nargs="?", metavar="NAME", help="the queue to pause or resume")
    p = add("groups", cmd_groups, "message groups per queue: keys waiting, held, in flight, oldest held age; "
                                  "--keys lists the keys, those waiting longest first; --queue Q --key K lists one "
                                  "key's messages")
    p.add_argument("--queue", help="only this queue")
    p.add_argument("--keys", action="store_true",
                   help="list keys with unfinished messages: held, in flight, oldest held age")
    p.add_argument("--key", help="list this key's unfinished messages (with --queue)")
    p.add_argument("--limit", type=_count, default=100)
    add("workers", cmd_workers, "live worker processes (heartbeat within the lease), their queues, connections, last heartbeat")
    p = add("dead", cmd_dead, "dead letters: list, retry or purge them")
    p.add_argument("dead_command", choices=["list", "retry", "purge"])
    p.add_argument("ids", type=_id, nargs="*", metavar="ID")
    p.add_argument("--id", type=_id, action="append", default=[], metavar="ID", help="a dead letter (repeatable)")
    p.add_argument("--all", action="store_true", help="retry or purge all dead letters")
    p.add_argument("--queue", help="only this queue's dead letters")
    p.add_argument("--limit", type=_count, default=100)

    p = add("demo", cmd_demo, "the whole thing in one go: five analyses of the sample theses, live",
            _env_epilog(BrokerSettings, QueueSettings, PipelineSettings, JudgeSettings, EmbeddingsSettings,
                        WebSettings, TokenSettings, DevDbSettings, DemoSettings))
    p.add_argument("--threads", type=_threads, default=4, help="worker threads of the demo's worker process")
    p.add_argument("--keep", action="store_true", help=argparse.SUPPRESS)

    for name, fn, program in (("worker", cmd_worker, "dramatiq"), ("scheduler", cmd_scheduler, "periodiq")):
        p = add(name, fn, f"run `{program} actors ARGS` on DATABASE_URL, or on the embedded server when it is "
                f"unset (as every citeq command does); the first log line names the database", all_env)
        p.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS",
                       help=f"passed to {program} (e.g. --processes 2 --threads 8)")

    p = add("web", cmd_web, "serve the HTTP API, the dashboard and /metrics", all_env)
    p.add_argument("--host", help="default CITEQ_WEB_HOST or 127.0.0.1")
    p.add_argument("--port", type=_port, help="default PORT or 8000")
    p.add_argument("--log-level", default="info")
    return parser


#: Commands whose arguments all go to the program they become (argparse would take the
#: program's options, --processes say, for unknown options of its own).
_PASSTHROUGH = {"worker": cmd_worker, "scheduler": cmd_scheduler}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in _PASSTHROUGH and not {"-h", "--help"} & set(argv[1:2]):
        return _PASSTHROUGH[argv[0]](argparse.Namespace(args=argv[1:]))
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args) or 0
    except CliError as exc:
        if getattr(args, "json", False):
            print(json.dumps({"error": exc.as_dict()}, default=str))
        print(f"error: {exc.code}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
