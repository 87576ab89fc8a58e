"""The host's errors. A user's mistake is an exception whose message is what the user sees."""


class SerqError(Exception):
    """Base of serQ's errors."""


class UserError(SerqError):
    """A mistake in what the user gave (a program, a file, a flag): printed without a traceback, exit 1.

    Any exception class with a true ``serq_user_error`` attribute is treated the same way, so parts
    that do not depend on the host (serq-ir) can raise their own.
    """

    serq_user_error = True

    def __init__(self, message: str):
        if not message.startswith("error:") and ": error:" not in message.split("\n", 1)[0]:
            message = f"error: {message}"
        super().__init__(message)


class PluginError(SerqError):
    """A plugin registered something wrongly (a name two plugins claim, say)."""

    serq_user_error = True
