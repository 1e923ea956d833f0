"""Alembic's environment for the scan database: trainlint passes the connection in
(``config.attributes["connection"]``); there is no alembic.ini to read."""

from __future__ import annotations

from alembic import context

from trainlint.scans.db import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata)
with context.begin_transaction():
    context.run_migrations()
