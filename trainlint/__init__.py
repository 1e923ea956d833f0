"""trainlint: a policy-as-code linter for ML training jobs."""

# The one place the version is written: hatchling reads it for the package metadata
# ([tool.hatch.version] in pyproject.toml), so importing trainlint costs no metadata lookup.
__version__ = "0.1.0"
