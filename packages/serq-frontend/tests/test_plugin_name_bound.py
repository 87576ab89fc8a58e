"""A plugin's name in a program (``stage s : @NAME;``, ``evict @NAME;``) is held to the bound of a name
(serq_ir.validate.MAX_NAME, 256 characters) by what follows its ``@``: ``@`` and 256 characters was refused
as a name of 257, which no plugin of a 256-character name could be written past."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend import CompileError
from serq_ir.validate import MAX_NAME


def _first_line(kind: str) -> str:
    src = f"stage s : @{kind};\nworkload {{ arrive poisson(1); }}\nsession {{ run s (1); }}\n"
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=src)
    return str(e.value).splitlines()[0]


def test_a_plugin_name_of_the_bound_is_read_as_a_name():
    # no plugin registers it: the kind is unknown, its name not too long
    assert _first_line("n" * MAX_NAME).startswith("<source>:1:11: error: stage `s`: unknown stage kind `@nnn")


def test_one_more_is_refused_by_the_length_of_the_name():
    assert _first_line("n" * (MAX_NAME + 1)) == (f"<source>:1:11: error: the name `{'n' * 60}…{'n' * 59}` is 257 "
                                                 "characters long; a name is at most 256 characters")
