"""The first schema: repositories, scans (one per repository and commit), jobs, findings.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "repositories",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(512), nullable=False, unique=True),
    )
    op.create_table(
        "scans",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("repository_id", sa.Integer, sa.ForeignKey("repositories.id"), nullable=False),
        sa.Column("commit_sha", sa.String(64), nullable=False),
        sa.Column("committed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("scanned_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("repository_id", "commit_sha", name="uq_scans_repository_commit"),
    )
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "scan_id", sa.Integer, sa.ForeignKey("scans.id", ondelete="CASCADE"), nullable=False
        ),
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
    )
    op.create_index("ix_jobs_fingerprint", "jobs", ["fingerprint"])
    op.create_table(
        "findings",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "job_id", sa.Integer, sa.ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("rule", sa.String(16), nullable=False),
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("file", sa.String(1024), nullable=False),
        sa.Column("line", sa.Integer, nullable=False),
        sa.Column("waste_usd", sa.Float),
        sa.Column("waste_gpu_hours", sa.Float),
    )


def downgrade() -> None:
    for table in ("findings", "jobs", "scans", "repositories"):
        op.drop_table(table)
