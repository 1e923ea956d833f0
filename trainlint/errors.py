"""One exception hierarchy; the CLI maps each tier to an exit code (STYLE: pre-commit's tiers)."""


class TrainlintError(Exception):
    """A user-facing error: one clear line, exit code 2."""


class ConfigError(TrainlintError):
    """Bad command-line options or repository configuration."""


class PolicyError(TrainlintError):
    """A policy pack that cannot be loaded, compiled or evaluated."""


class SourceError(TrainlintError):
    """A file that is not valid in its syntax; carries the 1-based position (reported as TL901)."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = max(1, line)
        self.column = max(1, column)
