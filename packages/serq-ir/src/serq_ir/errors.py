"""Errors of the IR package."""


class IRError(ValueError):
    """A bad IR file or value. Its message is the whole text shown to the user.

    ``json_path`` (``"$.stages[0].kind.servers"``) and ``detail`` (the message without its ``error: NAME:``
    head and its ``- at`` tail), when given, say where in the IR's JSON the fault is: :func:`serq_ir.load`
    then tells a file's fault at its line and column, the line quoted with a caret (``json_key``: the fault
    is the key at the path, an unknown field)."""

    serq_user_error = True

    def __init__(self, message: str, *, json_path: str | None = None, detail: str | None = None,
                 json_key: bool = False) -> None:
        super().__init__(message)
        self.json_path = json_path
        self.detail = detail
        self.json_key = json_key


def at_path(name: str, message: str, path: str) -> IRError:
    """The error ``message`` about the value at the JSON ``path`` of the IR named ``name``: one line,
    ``error: NAME: MESSAGE - at 'PATH'``, located by :func:`serq_ir.load` when the IR is a file's."""
    return IRError(f"error: {name}: {message} - at '{path}'", json_path=path, detail=message)


def quoted(value: object) -> str:
    """``value`` as an IR message quotes it, by its repr: a text (a stage's name, a function's) cut as every
    message cuts a name it quotes (:func:`serq.errors.clipped`, its first 60 and last 59 characters around
    ``…`` past 120), where its repr was written whole (a name of 5 000 characters given twice made a
    first line of 5 141)."""
    if isinstance(value, str):
        from serq.errors import clipped

        value = clipped(value)
    return repr(value)
