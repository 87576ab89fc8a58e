"""Several pull relations (language.txt §2, Queues: a reader has one source, and every relation names the
program's share), each told by its own name where it is at fault.

With `D pull P` and `E pull P`, neither reading, the refusal named `D pull P` alone, as if `E pull P` read; and
`E pull P` reading nothing while `D pull P` read was not told at all (its latency and the share it names apply to
no read). Now the refusal names both, with a note at the second; and a relation that reads nothing beside one
that reads is warned of at itself, by its name.
"""

from __future__ import annotations

import pytest
import serq_frontend
from sqhelpers import compile_src

Q_P = """queue P : prefill {
  pool kv { }
  serve fifo;
  nic ps(1);
  prefill (prompt) { hold kv (prompt) { run (1); } cache (prompt) lease kv (inf); }
}
"""
READ = "transfer (1) from s to kv (1);"


def _reader(name: str, body: str) -> str:
    return f"""queue {name} : decode {{
  pool kv {{ }}
  serve fifo;
  nic ps(1);
  decode (prompt) from s {{ hold kv (prompt) {{ {body} }} cache (prompt); }}
}}
"""


RELATIONS = "D pull P share maxmin;\nE pull P share maxmin;\nworkload { arrive batch(1); }\n"
RUN = "run { horizon 5; }\n"


def _program(d_body: str, e_body: str, calls: str) -> str:
    return (Q_P + _reader("D", d_body) + _reader("E", e_body) + RELATIONS
            + "session { set prompt = 2; P.prefill (prompt); " + calls + " }\n" + RUN)


def _why(r: str, called: bool) -> str:
    return (f"`{r} pull P` reads nothing: its read is a `transfer` without `on` in an entry of `{r}` called "
            f"`from P`, and " + (f"no entry of `{r}` that holds one is called `from P`" if called
                                 else f"no entry of `{r}` holds one"))


def test_no_relation_reading_is_told_of_every_relation():
    src = _program("run (1);", READ, "D.decode (prompt) from P;")
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(src)
    lines = str(info.value).splitlines()
    assert lines == [
        "<source>:19:1: error: no pull relation reads, so their share divides no NIC: " + _why("D", False) + "; "
        + _why("E", True),
        "  D pull P share maxmin;", "  ^",
        "<source>:20:1: note: `E pull P` is here",
        "  E pull P share maxmin;", "  ^"]


@pytest.mark.parametrize("d_body, e_body, calls, idle, called", [
    (READ, READ, "D.decode (prompt) from P;", "E", True),        # E's reading entry never called
    (READ, "run (1);", "D.decode (prompt) from P; E.decode (prompt) from P;", "E", False),  # E holds no read
    (READ, READ, "E.decode (prompt) from P;", "D", True),        # the first relation idle, the second reads
])
def test_a_relation_reading_nothing_beside_one_that_reads_is_warned_of_by_name(d_body, e_body, calls, idle,
                                                                              called, capsys):
    src = _program(d_body, e_body, calls)
    compile_src(src)
    err = capsys.readouterr().err
    line = 19 if idle == "D" else 20
    said = [ln for ln in err.splitlines() if "pull" in ln and "warning" in ln]
    assert said == [f"<source>:{line}:1: warning: " + _why(idle, called)
                    + ", so the relation, its latency and its share, applies to no read"]


def test_every_relation_reading_says_nothing():
    compile_src(_program(READ, READ, "D.decode (prompt) from P; E.decode (prompt) from P;"))
