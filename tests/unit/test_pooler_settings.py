"""Where the broker's session-bound statements go, per setting (issue 26): no database needed."""

from __future__ import annotations

from broker.connector import Connector
from broker.settings import BrokerSettings
from broker.sql import broker_queries, never_prepare, statement_text


def _connector(**env) -> Connector:
    return Connector(BrokerSettings.from_env({"DATABASE_URL": "postgresql:///pooled", **env}), broker_queries())


def test_listen_goes_to_the_database_url_unless_another_is_named():
    assert _connector().listen_url == "postgresql:///pooled"
    assert _connector(CITEQ_LISTEN_URL="postgresql:///direct").listen_url == "postgresql:///direct"


def test_behind_a_transaction_pooler_nothing_listens_without_a_listen_url_and_nothing_is_prepared():
    pooled = _connector(CITEQ_TRANSACTION_POOLING="1")
    assert pooled.listen_url is None
    assert pooled.settings.prepared_statements is False
    assert _connector(CITEQ_TRANSACTION_POOLING="1", CITEQ_LISTEN_URL="postgresql:///direct").listen_url \
        == "postgresql:///direct"
    assert _connector().settings.prepared_statements is True


class _Conn:
    """Just enough of a psycopg2 connection for statement_text (weak-referenceable)."""


class _Cursor:
    def __init__(self, connection) -> None:
        self.connection = connection
        self.executed: list[str] = []

    def execute(self, query, params=None) -> None:
        self.executed.append(query)

    def mogrify(self, query, params) -> bytes:
        return (query % {k: repr(v) for k, v in params.items()}).encode()


def test_a_never_prepare_connection_gets_the_query_text_where_others_get_execute():
    query = "-- @prepared\nSELECT %(n)s"
    prepared = _Cursor(_Conn())
    assert statement_text(prepared, "probe", query, {"n": 1}).startswith(b"EXECUTE citeq_probe")
    assert prepared.executed and prepared.executed[0].startswith("PREPARE citeq_probe")

    plain = _Cursor(_Conn())
    never_prepare(plain.connection)
    assert statement_text(plain, "probe", query, {"n": 1}) == b"-- @prepared\nSELECT 1"
    assert plain.executed == []
