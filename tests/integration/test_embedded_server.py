"""The embedded server: the wheel's PostgreSQL with pgvector, and data folders of older servers."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading

import psycopg2
import pytest

from citeq import devdb
from tests.conftest import query, sigint_as_on_a_terminal


@pytest.fixture
def embedded(pg_server):
    _, server = pg_server
    if server is None:
        pytest.skip("DATABASE_URL names an external server")
    return server


def test_the_embedded_server_is_the_wheels_and_migrations_install_pgvector(embedded, conn):
    if os.environ.get(devdb.NO_SYSTEM_FALLBACK_ENV):
        assert embedded.from_wheel, f"{devdb.NO_SYSTEM_FALLBACK_ENV} is set, yet {embedded.bindir} runs"
    if not embedded.from_wheel:
        pytest.skip(f"the embedded server runs system binaries ({embedded.bindir}), not the wheel's")
    wanted = devdb.DevDbSettings.from_env().pg_major  # CITEQ_PG_MAJOR (.ci/run's PostgreSQL 16 leg)
    assert embedded.major_version == wanted if wanted is not None else embedded.major_version >= 18
    assert query(conn, "SELECT current_setting('server_version_num')::int / 10000")[0][0] == embedded.major_version
    # Migration 0005 installed pgvector, so hybrid retrieval ranks in Postgres.
    (version,) = query(conn, "SELECT extversion FROM pg_extension WHERE extname = 'vector'")[0]
    assert version
    assert query(conn, "SELECT '[1,2,3]'::vector <-> '[1,2,4]'::vector")[0][0] == 1.0


@pytest.fixture
def private_server(embedded):
    """An embedded server of its own under CITEQ_HOME (never started here), removed after."""
    server = devdb.EmbeddedPostgres.for_name(f"devdb-test-{os.getpid()}", fsync=False)
    yield server
    server.stop(mode="immediate")
    for path in server.data_dir.parent.glob(server.data_dir.name + "*"):
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink()


def _old_data_folder(server: devdb.EmbeddedPostgres, major: int) -> None:
    server.data_dir.mkdir(parents=True)
    (server.data_dir / "PG_VERSION").write_text(f"{major}\n")
    (server.data_dir / "base").mkdir()
    (server.data_dir / "base" / "demo-data").write_text("rows of an older server")


def other_major(server: devdb.EmbeddedPostgres) -> int:
    """A major version the server is not: 16 (the wheel's older one), or 15 when it runs 16."""
    return 16 if server.major_version != 16 else 15


def test_a_data_folder_of_the_postgresql_16_server_is_moved_aside_and_made_anew(private_server, capfd):
    old = other_major(private_server)
    _old_data_folder(private_server, old)

    url = private_server.start()

    message = capfd.readouterr().err
    aside = private_server.data_dir.with_name(private_server.data_dir.name + f".pg{old}-old")
    assert f"{private_server.data_dir} was made by PostgreSQL {old}" in message
    assert f"PostgreSQL {private_server.major_version}" in message and str(aside) in message
    assert (aside / "base" / "demo-data").read_text() == "rows of an older server"  # kept, not deleted
    assert private_server.data_major() == private_server.major_version
    psycopg2.connect(url).close()

    # Started again, the new folder is simply used; an earlier aside is never overwritten.
    private_server.stop()
    private_server.start()
    assert "was made by" not in capfd.readouterr().err
    private_server.stop()
    shutil.rmtree(private_server.data_dir)
    _old_data_folder(private_server, old)
    private_server.start()
    assert str(aside.with_name(aside.name + "2")) in capfd.readouterr().err
    assert (aside / "base" / "demo-data").exists()


def test_an_old_server_still_running_on_that_folder_is_shut_down_first(private_server, capfd):
    _old_data_folder(private_server, other_major(private_server))
    # A stand-in for the old postmaster: a process whose argv reads `.../postgres -D <folder>`
    # and that exits on SIGINT (a fast shutdown), as a PostgreSQL 16 server would.
    # It says "ready" once its trap is set: a SIGINT before that would end it as killed (-2).
    old = subprocess.Popen(["/old/bin/postgres", "-c", 'trap "kill $!; exit 0" INT; sleep 300 & echo ready; wait',
                            "-D", str(private_server.data_dir)], executable="/bin/bash", stdout=subprocess.PIPE,
                           preexec_fn=sigint_as_on_a_terminal)
    assert old.stdout.readline() == b"ready\n"
    reaper = threading.Thread(target=old.wait)  # so the stand-in does not linger as a zombie
    reaper.start()
    (private_server.data_dir / "postmaster.pid").write_text(f"{old.pid}\n{private_server.data_dir}\n")
    try:
        assert old.pid in private_server._postmaster_pids()
        private_server.start()
        reaper.join(timeout=60)
        assert old.returncode == 0  # ended by its SIGINT, not killed
        assert f"was made by PostgreSQL {other_major(private_server)}" in capfd.readouterr().err
    finally:
        if old.poll() is None:
            old.kill()
            reaper.join()
        old.stdout.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs the server as another user")
def test_binaries_the_server_user_cannot_read_run_from_a_readable_copy(embedded, tmp_path):
    """A checkout below a 0700 folder (a mktemp clone, a home folder) as root."""
    if not embedded.from_wheel:
        pytest.skip("the embedded server runs system binaries")
    package = embedded.bindir.parents[1]
    site = tmp_path / "site-packages"  # pytest's tmp_path is 0700, owned by root
    shutil.copytree(embedded.bindir.parent, site / package.name / embedded.bindir.parent.name, symlinks=True)
    libs = package.parent / f"{package.name}.libs"
    if libs.is_dir():
        shutil.copytree(libs, site / libs.name, symlinks=True)
    hidden = devdb.EmbeddedPostgres(data_dir=embedded.data_dir,
                                    bindir=site / package.name / embedded.bindir.parent.name / "bin")
    assert not hidden._binaries_usable()

    staged = devdb._staged_copy(hidden.bindir)
    try:
        readable = devdb.EmbeddedPostgres(data_dir=embedded.data_dir, bindir=staged)
        assert readable._binaries_usable() and readable.from_wheel
        version = readable._run(str(staged / "initdb"), "--version").stdout
        assert f"(PostgreSQL) {embedded.major_version}." in version
        assert readable.is_running()  # the copy's pg_ctl sees the running test server
    finally:
        shutil.rmtree(staged.parents[2])


def test_a_real_postgresql_16_server_running_on_its_folder_is_shut_down_and_moved_aside(private_server, capfd):
    """The wheel also ships PostgreSQL 16 (for its own users' upgrades): a real old server."""
    old_bin = private_server.bindir.parents[1] / "pginstall" / "bin"
    if not private_server.from_wheel or not (old_bin / "pg_ctl").exists() or devdb.server_major(old_bin) != 16:
        pytest.skip("no PostgreSQL 16 binaries in this wheel")
    if private_server.major_version == 16:
        pytest.skip("the embedded server here is PostgreSQL 16 itself (CITEQ_PG_MAJOR)")
    old = devdb.EmbeddedPostgres(data_dir=private_server.data_dir, bindir=old_bin, fsync=False)
    old.start()
    assert old.data_major() == 16 and old.is_running()
    (old_pid,) = old._postmaster_pids()

    private_server.start()

    assert "was made by PostgreSQL 16" in capfd.readouterr().err
    with psycopg2.connect(private_server.url()) as c, c.cursor() as cur:
        cur.execute("SELECT current_setting('server_version_num')::int / 10000")
        assert cur.fetchone()[0] == private_server.major_version
    aside = devdb.EmbeddedPostgres(data_dir=private_server.data_dir.with_name(private_server.data_dir.name
                                                                              + ".pg16-old"), bindir=old_bin)
    assert aside.data_major() == 16 and not aside.is_running()
    assert old_pid not in private_server._postmaster_pids() and not os.path.exists(f"/proc/{old_pid}")
