"""``serq_frontend.compile``, ``serq_frontend.cache.load`` and ``serq_frontend.layers`` check their path and
plugin manager at the call by one rule (serq_frontend.check_path, serq.plugins.api_plugin_manager): a wrong
type is a TypeError naming the argument, the empty path a ValueError.

``cache.load(3)`` was ``os.fspath``'s "expected str, bytes or os.PathLike object, not int" from inside
serq.files, ``layers(pm=3)`` an AttributeError of ``.hook``, and ``compile("")`` read the empty path as the
current folder ("error: : cannot read: is a folder, not a file"). ``parse``'s switch ``desugar`` is True or
False (serq.numbers.switch): ``desugar="no"`` desugared.
"""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend.cache import load

pytestmark = pytest.mark.timeout(60)


class BytesPath:
    def __fspath__(self):
        return b"p.sq"


@pytest.mark.parametrize("call, kind, said", [
    (lambda: load(3), TypeError, "load()'s path is a str or os.PathLike, not int"),
    (lambda: load(None), TypeError, "load()'s path is a str or os.PathLike, not NoneType"),
    (lambda: load(b"p.sq"), TypeError, "load()'s path is a str or os.PathLike, not bytes"),
    (lambda: load(BytesPath()), TypeError, "load()'s path is a str or os.PathLike, not BytesPath naming bytes"),
    (lambda: serq_frontend.compile(BytesPath()), TypeError,
     "compile()'s path is a str or os.PathLike, not BytesPath naming bytes"),
    (lambda: load(""), ValueError, "load()'s path is empty: it names no file"),
    (lambda: serq_frontend.compile(""), ValueError, "compile()'s path is empty: it names no file"),
    (lambda: serq_frontend.layers(pm=3), TypeError, "pm must be a plugin manager"),
    (lambda: serq_frontend.parse(source="let a = 1;", desugar="no"), TypeError,
     "desugar must be True or False, not 'no'"),
])
def test_a_wrong_path_or_plugin_manager_is_said_naming_it(call, kind, said):
    with pytest.raises(kind) as info:
        call()
    assert type(info.value) is kind and str(info.value).startswith(said)
