"""The scan database: SQLite by default (a file, nothing to start), PostgreSQL by URL for an
org's shared one. SQLAlchemy Core tables; the schema is created and upgraded by Alembic
(``migrations/``), never by ``create_all``, so a database made by a newer trainlint is refused
instead of being written in a shape it does not know.

Writes are one transaction per (repository, commit): the scan row is upserted, its jobs and
findings replaced. Scanning a commit again is idempotent, and several scans writing to one
PostgreSQL at once (a CI matrix) serialise on that row: nothing is lost or half-written.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

from trainlint.errors import TrainlintError
from trainlint.scans.records import FindingRecord, JobRecord

MIGRATIONS = Path(__file__).parent / "migrations"

metadata = sa.MetaData()

repositories = sa.Table(
    "repositories", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(512), nullable=False, unique=True),
)  # fmt: skip
scans = sa.Table(
    "scans", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("repository_id", sa.Integer, sa.ForeignKey("repositories.id"), nullable=False),
    sa.Column("commit_sha", sa.String(64), nullable=False),
    sa.Column("committed_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("scanned_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("repository_id", "commit_sha", name="uq_scans_repository_commit"),
)  # fmt: skip
jobs = sa.Table(
    "jobs", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("scan_id", sa.Integer, sa.ForeignKey("scans.id", ondelete="CASCADE"),
              nullable=False),
    sa.Column("path", sa.String(1024), nullable=False),
    sa.Column("fingerprint", sa.String(64)),
    sa.Column("tags", sa.JSON, nullable=False),
    sa.Column("gpu", sa.String(64)),
    sa.Column("gpus", sa.Integer),
    sa.Column("usd_per_run", sa.Float),
    sa.Column("usd_low", sa.Float),
    sa.Column("usd_high", sa.Float),
    sa.Column("gpu_hours", sa.Float),
    sa.Column("runs", sa.Integer, nullable=False),
    sa.UniqueConstraint("scan_id", "path", name="uq_jobs_scan_path"),
)  # fmt: skip
sa.Index("ix_jobs_fingerprint", jobs.c.fingerprint)
findings = sa.Table(
    "findings", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("job_id", sa.Integer, sa.ForeignKey("jobs.id", ondelete="CASCADE"),
              nullable=False),
    sa.Column("rule", sa.String(16), nullable=False),
    sa.Column("severity", sa.String(16), nullable=False),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("file", sa.String(1024), nullable=False),
    sa.Column("line", sa.Integer, nullable=False),
    sa.Column("waste_usd", sa.Float),
    sa.Column("waste_gpu_hours", sa.Float),
)  # fmt: skip


class DatabaseError(TrainlintError):
    """The database cannot be used: unreachable, or its schema is not one this trainlint
    knows (exit 2, nothing written)."""


def connect(url: str) -> Engine:
    """An engine for ``url`` whose schema is at this trainlint's head (migrated up when
    older; refused when newer or unreachable)."""
    try:
        engine = sa.create_engine(_driver(url), future=True)
        with engine.begin() as connection:
            _migrate(connection)
    except sa.exc.ArgumentError as error:
        raise DatabaseError(f"invalid database URL {_shown(url)}: {error}") from None
    except sa.exc.OperationalError as error:
        reason = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
        raise DatabaseError(f"cannot reach the database {_shown(url)}: {reason}") from None
    return engine


def _driver(url: str) -> str:
    """``postgresql://`` through psycopg 3 (the one PostgreSQL driver trainlint installs)."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def _shown(url: str) -> str:
    """The URL without its password: error messages never print secrets."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return "(unparsable URL)"


_MIGRATION_LOCK = 0x7472_6169  # an arbitrary key of PostgreSQL's advisory locks ("trai")


def _migrate(connection: Connection) -> None:
    """Bring the schema to head. On PostgreSQL the check and the upgrade hold an advisory
    lock for the transaction: scans started at once (a CI matrix) migrate one at a time and
    the others then find the schema made."""
    if connection.dialect.name == "postgresql":
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
    scripts = ScriptDirectory(str(MIGRATIONS))
    current = MigrationContext.configure(connection).get_current_revision()
    known = {revision.revision for revision in scripts.walk_revisions()}
    if current is not None and current not in known:
        raise DatabaseError(
            f"the database's schema ({current}) is newer than this trainlint knows "
            f"(up to {scripts.get_current_head()}): upgrade trainlint to use it"
        )
    if current != scripts.get_current_head():
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def write_scan(
    engine: Engine, records: Sequence[JobRecord], commit: tuple[str, str, datetime]
) -> None:
    """Record one (repository, commit) scan: its jobs and findings replace any earlier scan
    of that commit, in one transaction."""
    repo, sha, committed_at = commit
    with engine.begin() as connection:
        repository_id = _upsert_repository(connection, repo)
        scan_id = _upsert_scan(connection, repository_id, sha, committed_at)
        old = sa.select(jobs.c.id).where(jobs.c.scan_id == scan_id)
        connection.execute(sa.delete(findings).where(findings.c.job_id.in_(old)))
        connection.execute(sa.delete(jobs).where(jobs.c.scan_id == scan_id))
        for record in records:
            _insert_job(connection, scan_id, record)


def _insert(connection: Connection, table: sa.Table) -> Any:
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


def _upsert_repository(connection: Connection, name: str) -> int:
    statement = _insert(connection, repositories).values(name=name)
    connection.execute(statement.on_conflict_do_nothing(index_elements=["name"]))
    found = connection.execute(sa.select(repositories.c.id).where(repositories.c.name == name))
    return int(found.scalar_one())


def _upsert_scan(connection: Connection, repository_id: int, sha: str, when: datetime) -> int:
    now = datetime.now(timezone.utc)
    statement = _insert(connection, scans).values(
        repository_id=repository_id, commit_sha=sha, committed_at=when, scanned_at=now
    )
    statement = statement.on_conflict_do_update(
        index_elements=["repository_id", "commit_sha"], set_={"scanned_at": now}
    ).returning(scans.c.id)
    return int(connection.execute(statement).scalar_one())


def _insert_job(connection: Connection, scan_id: int, record: JobRecord) -> None:
    inserted = connection.execute(
        sa.insert(jobs).values(
            scan_id=scan_id, path=record.path, fingerprint=record.fingerprint,
            tags=record.tags, gpu=record.gpu, gpus=record.gpus,
            usd_per_run=record.usd_per_run, usd_low=record.usd_low, usd_high=record.usd_high,
            gpu_hours=record.gpu_hours, runs=record.runs,
        ).returning(jobs.c.id)
    )  # fmt: skip
    job_id = int(inserted.scalar_one())
    rows = [{"job_id": job_id, **vars(finding)} for finding in record.findings]
    if rows:
        connection.execute(sa.insert(findings), rows)


def read_records(engine: Engine) -> list[JobRecord]:
    """Every job of every scan, oldest commit first (a report picks what it shows)."""
    query = (
        sa.select(repositories.c.name, scans.c.commit_sha, scans.c.committed_at, jobs)
        .join(scans, scans.c.repository_id == repositories.c.id)
        .join(jobs, jobs.c.scan_id == scans.c.id)
        .order_by(scans.c.committed_at, repositories.c.name, jobs.c.path)
    )
    with engine.connect() as connection:
        rows = connection.execute(query).mappings().all()
        found = _findings_by_job(connection)
    return [_record(row, found.get(row["id"], ())) for row in rows]


def _findings_by_job(connection: Connection) -> dict[int, tuple[FindingRecord, ...]]:
    grouped: dict[int, list[FindingRecord]] = {}
    query = sa.select(findings).order_by(findings.c.job_id, findings.c.file, findings.c.line)
    for row in connection.execute(query).mappings():
        fields = {key: row[key] for key in FindingRecord.__dataclass_fields__}
        grouped.setdefault(row["job_id"], []).append(FindingRecord(**fields))
    return {job_id: tuple(items) for job_id, items in grouped.items()}


def _record(row: Any, found: tuple[FindingRecord, ...]) -> JobRecord:
    committed = row["committed_at"]
    if committed.tzinfo is None:  # SQLite keeps no zone: every time written is timezone.utc
        committed = committed.replace(tzinfo=timezone.utc)
    return JobRecord(
        repo=row["name"], commit=row["commit_sha"], committed_at=committed, path=row["path"],
        fingerprint=row["fingerprint"], tags=dict(row["tags"]), gpu=row["gpu"],
        gpus=row["gpus"], usd_per_run=row["usd_per_run"], usd_low=row["usd_low"],
        usd_high=row["usd_high"], gpu_hours=row["gpu_hours"], runs=row["runs"],
        findings=found,
    )  # fmt: skip


@contextmanager
def opened(url: str) -> Iterator[Engine]:
    engine = connect(url)
    try:
        yield engine
    finally:
        engine.dispose()
