"""A hold's `at admission (…)` of thousands of bindings: the check that a binding reads only the ones before it
made, for every binding, the set of the names bound from it on, so a clause of n bindings took time in n²
(10 000 bindings: 8 s of the compile, 15 000: 30 s). The bindings are now walked a number of times that does
not grow with them (counted below), and the rule is the same: a binding that reads itself or one bound after
it is refused at the read, one that reads an attribute the session sets is not."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend.diagnostics import CompileError
from serq_frontend.sugar import admission

PROGRAM = """pool p {{ cap 10; }}
stage s : fifo;
workload {{ arrive poisson(1); }}
session {{
  set a = 1;
  hold p (1) at admission ({bindings}) {{ run s (0.1); observe y = {read}; }}
  end;
}}
run {{ horizon 10; seed 1; }}
"""


def _compile(bindings: str, read: str = "x0"):
    return serq_frontend.compile(source=PROGRAM.format(bindings=bindings, read=read), sets={}, defs={})


def test_the_bindings_are_walked_a_number_of_times_that_does_not_grow_with_them(monkeypatch):
    visits = []

    class Counted(list):
        """The clause's bindings, counting every binding a loop or a slice takes."""

        def __iter__(self):
            for b in list.__iter__(self):
                visits.append(b)
                yield b

        def __getitem__(self, i):
            got = list.__getitem__(self, i)
            if isinstance(i, slice):
                visits.extend(got)
            return got

    original = admission.Admission.hold

    def hold(self, h):
        h.bindings = Counted(h.bindings)
        return original(self, h)

    monkeypatch.setattr(admission.Admission, "hold", hold)
    n = 2000
    program = _compile(", ".join(f"x{i} = a + {i}" for i in range(n)), read=f"x{n - 1}")
    assert len(program.attributes) >= 1  # (compiled)
    # a few walks of the clause (the names, the checks, the body's reads); one set a binding made n²/2 = 2 000 000
    assert len(visits) <= 10 * n, len(visits)


@pytest.mark.parametrize(("bindings", "words", "col"), [
    ("x0 = x1, x1 = 1", "the binding `x0` reads `x1`, bound after it", 33),
    ("x0 = 1, x1 = x1 + 1", "the binding `x1` reads itself", 41),
])
def test_a_binding_reads_only_the_ones_before_it(bindings, words, col):
    with pytest.raises(CompileError) as e:
        _compile(bindings)
    assert f"<source>:6:{col}: error: {words}: a binding reads only the ones before it in its clause" in str(e.value)


def test_a_binding_may_read_an_attribute_the_session_sets_and_the_ones_before_it():
    program = _compile("x0 = a + 1, x1 = x0 * 2", read="x1")
    assert program.session  # compiled; the value read is x1's expression with x0's substituted
