"""trainlint: a policy-as-code linter for ML training jobs."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("trainlint")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
