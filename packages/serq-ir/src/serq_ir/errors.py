"""Errors of the IR package."""


class IRError(ValueError):
    """A bad IR file or value. Its message is the whole line shown to the user."""

    serq_user_error = True
