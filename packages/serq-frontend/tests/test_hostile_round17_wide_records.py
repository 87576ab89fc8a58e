"""A record statement of many columns is linked in time linear in its columns.

The linker looked for each column among the columns before it (``col in s.cols[:i]``), so a record of n
columns took n * n / 2 steps: ``serq check`` of a program whose one record has 20 000 columns took 6.5 s
(1.6 s now, its parse included), one of 60 000 about a minute (4.8 s now). A column given twice, or named
as one the simulator adds, is refused at that column as before.
"""

from __future__ import annotations

import time

import pytest
import serq_frontend
from serq_frontend import ast as A
from serq_frontend.diagnostics import CompileError, Pos
from serq_frontend.link import Linker

pytestmark = pytest.mark.timeout(120)


def _program(columns: list[str]) -> str:
    cols = " ".join(f"{c} = now;" for c in columns)
    return f"""stage s : fifo;
workload {{ arrive poisson(1); }}
session {{ run s (1); record r {{ {cols} }} }}
run {{ horizon 5; seed 1; }}
"""


def test_a_record_of_many_columns_is_declared_in_linear_time():
    n = 300_000
    cols = [f"c{i}" for i in range(n)]
    s = A.SRecord(name="r", cols=cols, values=[None] * n, pos=Pos("p.sq", 3, 22),
                  col_pos=[Pos("p.sq", 3, 31 + 10 * i) for i in range(n)])
    linker = Linker.__new__(Linker)  # the declaration alone: its table, no program around it
    linker.records = {}
    t = time.process_time()
    linker.declare_record(s)
    cpu = time.process_time() - t
    assert linker.records == {"r": (0, cols)}
    # about 0.05 s now; n * n / 2 = 4.5e10 comparisons before (many minutes)
    assert cpu < 2.0, cpu


def test_a_wide_record_compiles_with_its_columns_in_order():
    cols = [f"c{i}" for i in range(5000)]
    p = serq_frontend.compile(source=_program(cols))
    assert [(r.name, r.columns) for r in p.records] == [("r", cols)]


@pytest.mark.parametrize("columns, col, what", [
    (["a", "b", "a"], 3, "column `a` twice in one record"),
    (["a", "b", "c", "b", "b"], 4, "column `b` twice in one record"),
    (["a", "turn"], 2, "`turn` is a column every record has"),
])
def test_a_column_twice_or_the_simulators_own_is_refused_at_it(columns, col, what):
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=_program(columns))
    # line 3 is `session { run s (1); record r { ` (32 characters), then `NAME = now; ` a column
    at = 33 + sum(len(c) + len(" = now; ") for c in columns[:col - 1])
    assert str(e.value).startswith(f"<source>:3:{at}: error: {what}"), str(e.value)
