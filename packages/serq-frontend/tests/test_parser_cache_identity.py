"""The parsers kept in a process (serq_frontend.parser._PARSERS) are found by the layers themselves, not by
their ids alone, and at most MAX_PARSERS are kept. Keyed by ``id()`` with the layers not kept alive, a
plugin that makes its sugar layer anew for each plugin manager could get the id of a freed layer of
another grammar, and its compile the other layer's parser (seen in about one round in five of two layers
of different keywords, each made anew)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from serq_frontend import parser as P

pytestmark = pytest.mark.timeout(60)


class _Fake:
    """A parser that only records what it was built from (building a real one takes a second)."""

    def __init__(self, layers, cache=None):
        self.layers = tuple(layers)


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(P, "Parser", _Fake)
    monkeypatch.setattr(P, "_PARSERS", {})
    return P._PARSERS


def test_a_kept_parser_is_not_another_layers_by_its_id(fake):
    a = SimpleNamespace(name="a")
    pa = P.get_parser([a])
    assert P.get_parser([a]) is pa  # the same layer: the same parser
    b = SimpleNamespace(name="b")
    fake[(id(b),)] = pa  # as if b had been made where a freed object was: its id, a's parser
    pb = P.get_parser([b])
    assert pb is not pa and pb.layers == (b,)
    assert P.cached_parser([b]) is pb and P.cached_parser([a]) is pa


def test_the_parser_keeps_its_layers_alive():
    layers = P.get_parser([]).layers  # the kernel's own parser
    assert layers == ()
    from serq_frontend.sugar import builtin_layers

    built = list(builtin_layers())
    assert P.get_parser(built).layers == tuple(built)


def test_at_most_max_parsers_are_kept(fake):
    made = [SimpleNamespace(name=f"l{i}") for i in range(P.MAX_PARSERS + 3)]
    for layer in made:
        P.get_parser([layer])
    assert len(fake) == P.MAX_PARSERS
    assert P.cached_parser([made[0]]) is None and P.cached_parser([made[-1]]) is not None
