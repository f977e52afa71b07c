"""The one error type every `tfbert` command raises for a user's mistake."""


class CommandError(Exception):
    """A user-facing failure: printed as one line `tfbert COMMAND: error: ...`, exit status 2, no traceback."""
