"""The platform team's view across repositories: scans recorded in a database
(``trainlint scan``), spend and waste grouped by team, project, rule, repository, GPU or month
(``trainlint report``), monthly team budgets and duplicate experiments.

``records`` turns a check's report into rows, ``fingerprint`` names a job by what it trains,
``db`` holds the schema (SQLAlchemy Core, Alembic migrations in ``migrations/``) and the reads
and writes, ``scan`` checks repositories at a commit, ``summary`` groups rows into what a report
shows and ``render`` writes it as text, JSON, CSV or one self-contained HTML page.
"""
