"""The folder a program's relative file names are relative to, for a program made in this process.

A program compiled from ``p.sq`` names its files as the compile named them: its ``source`` (``p.sq``), its
spans and its trace clause (``trace "t.csv"``, relative to the source's folder) are relative to the folder
the compile ran in, which the IR does not record (it is the same bytes wherever it is made). The library API
notes that folder here (:func:`serq_frontend.compile`), and ``serq_sim.run`` reads the program's trace and
quotes its lines from it, whatever the current folder is by then: a program compiled in one folder and run
after an ``os.chdir`` read the trace of the same name in the new folder, a report of other data without a
word, and its run-time errors quoted another file's lines. The note is kept by the program object itself
(a weak reference: it does not keep a program alive); a copy (``copy.deepcopy``, ``pickle``,
``msgspec.structs.replace``) or a program decoded from IR has none, and reads its names from the current
folder, as before.
"""

from __future__ import annotations

import weakref
from typing import Any


class _Notes:
    """Notes kept of program objects made in this process, each by the object itself (its ``id`` and a weak
    reference to it: a note does not keep a program alive, and is forgotten as the program is freed). No lock:
    each read and write is one operation on the dict, and a program's callback runs as it is freed (which may
    happen inside any allocation: a lock taken there could be this thread's own), before its id can be
    another's."""

    __slots__ = ("_by_id",)

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[weakref.ref, Any]] = {}

    def __contains__(self, key: int) -> bool:
        return key in self._by_id

    def note(self, program: Any, value: Any) -> None:
        key = id(program)
        by_id = self._by_id

        def gone(ref: weakref.ref, key: int = key) -> None:  # freed: forget its note (not a later one's)
            if by_id.get(key, (None,))[0] is ref:
                by_id.pop(key, None)

        by_id[key] = (weakref.ref(program, gone), value)

    def of(self, program: Any, default: Any = None) -> Any:
        """The note of ``program`` (this very object), or ``default``."""
        entry = self._by_id.get(id(program))
        if entry is None or entry[0]() is not program:
            return default
        return entry[1]


#: the folder each program's relative names are relative to
_FOLDERS = _Notes()

#: the texts a program was compiled from that are in no file, by the names its spans give them: its
#: ``source=`` (``<source>``) and the definitions' bodies (``defs=``: ``defs['m']``)
_TEXTS = _Notes()


def note_folder(program: Any, folder: str) -> None:
    """Note that ``program``'s relative file names are relative to ``folder`` (an absolute path)."""
    _FOLDERS.note(program, folder)


def compiled_in(program: Any) -> str | None:
    """The folder noted for ``program`` (this very object), or None."""
    return _FOLDERS.of(program)


def note_texts(program: Any, texts: dict[str, str | None]) -> None:
    """Note the texts ``program``'s spans name that are in no file: the text it was compiled from
    (``serq_frontend.compile(source=…)``, named ``<source>``) and the bodies of the definitions the compile was
    given (``defs=…``), so that ``serq_sim.run`` quotes a run-time error's line in one as ``serq run`` quotes a
    file's and ``serq run --def`` a body's (serq.errors.texts_given); it gave the place alone. The texts are
    held as given (the same str objects, no copy) for as long as the program lives, in this process only."""
    _TEXTS.note(program, dict(texts))


def compiled_texts(program: Any) -> dict[str, str | None]:
    """The texts noted for ``program`` (this very object): empty for none."""
    return _TEXTS.of(program, {})
