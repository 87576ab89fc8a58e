"""``serq_frontend.parse`` names itself when its arguments are wrong: it shares compile's set-up, whose
messages said ``compile()`` (``parse(b"p.sq")``: "compile()'s path is a str or os.PathLike, not bytes"), a
function the caller did not call."""

from __future__ import annotations

import pytest
import serq_frontend

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((b"p.sq",), {}, "parse()'s path is a str or os.PathLike, not bytes"),
    ((), {"source": 5}, "parse()'s source= is a str, not int"),
    ((), {}, "parse() takes a path or source=: neither was given"),
    (("p.sq",), {"source": "let x = 1;"}, "parse() takes a path or source=, not both"),
])
def test_parse_names_itself(args, kwargs, message):
    with pytest.raises(TypeError) as e:
        serq_frontend.parse(*args, **kwargs)
    assert str(e.value) == message


def test_compile_still_names_itself():
    with pytest.raises(TypeError) as e:
        serq_frontend.compile(b"p.sq")
    assert str(e.value) == "compile()'s path is a str or os.PathLike, not bytes"
