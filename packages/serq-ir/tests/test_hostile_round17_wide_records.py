"""A record table of many columns is validated in time linear in its columns.

Each column was looked for among the columns before it (``col in rec.columns[:j]``), so a table of n
columns took n * n / 2 steps: an IR file whose one table has 20 000 columns took 4.7 s for ``serq check``
and 14 s for ``serq run`` (validated twice), one of 300 000 more than two minutes. A column given twice or
named as one the simulator adds is refused at its JSON path as before.
"""

from __future__ import annotations

import json
import time

import pytest
import serq_frontend
import serq_ir
from serq_ir import IRError

pytestmark = pytest.mark.timeout(120)

SOURCE = """stage s : fifo;
workload { arrive poisson(1); }
session { run s (1); record r { a = now; } }
run { horizon 5; seed 1; }
"""


def _ir(columns: list[str]) -> str:
    """The program's IR with its table's columns ``columns`` (and its record statement a value for each)."""
    ir = json.loads(serq_ir.encode(serq_frontend.compile(source=SOURCE)))
    ir["records"] = [{"name": "r", "columns": columns}]
    stmt = next(st for st in ir["session"] if st["kind"] == "Record")
    stmt["values"] = [{"kind": "Num", "value": 1.0}] * len(columns)
    return json.dumps(ir)


def _refusal(columns: list[str]) -> str:
    with pytest.raises(IRError) as e:
        serq_ir.decode(_ir(columns))
    return str(e.value)


def test_a_table_of_many_columns_is_validated_in_linear_time():
    n = 100_000
    text = _ir([f"c{i}" for i in range(n)])
    t = time.process_time()
    program = serq_ir.decode(text)  # (validated: its references and its names)
    cpu = time.process_time() - t
    assert program.records[0].columns[-1] == f"c{n - 1}"
    # about 0.3 s now; n * n / 2 = 5e9 comparisons before (more than a minute)
    assert cpu < 6.0, cpu


@pytest.mark.parametrize("columns, where, what", [
    (["a", "b", "a"], 2, "column 'a' is named twice"),
    (["a", "b", "c", "b", "b"], 3, "column 'b' is named twice"),
    (["a", "session"], 1, "column 'session' is one the simulator adds"),
    (["time", "time"], 0, "column 'time' is one the simulator adds"),
])
def test_a_column_twice_or_the_simulators_own_is_refused_at_its_path(columns, where, what):
    msg = _refusal(columns)
    assert f"$.records[0].columns[{where}]" in msg and what in msg, msg


def test_a_wide_table_with_one_column_twice_at_its_end_is_refused_there():
    n = 50_000
    msg = _refusal([f"c{i}" for i in range(n)] + ["c7"])
    assert f"$.records[0].columns[{n}]" in msg and "column 'c7' is named twice" in msg, msg
