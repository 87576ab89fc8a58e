"""A block of many statements is compiled as functions of ``compile.CHUNK`` statements each (one function
of 20 000 statements took CPython's compiler a second and 400 MB, a 60 000-statement program 2 GB): the
same runs, byte for byte, as one function, with ``end`` inside a piece, holds re-executed after a
preemption from inside a piece, loops and branches whose bodies are split, and observes across the
pieces' seams."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim import compile as sim_compile


def _program(n: int) -> str:
    body = "\n".join(f"    set x = x + {k % 3}; observe o = x;" if k % 5 else "    run d (0.01 * x);"
                     for k in range(n))
    dec = "\n".join("      run E decode (1) growing kv;" for _ in range(n))
    return f"""
pool kv {{ cap 40; block 4; preempt lifo; }}
stage E : step {{ budget 8; cost 1; memory kv; }}
stage d : delay;
workload {{ arrive poisson(2); init {{ set x = 0; }} }}
session {{
{body}
  branch (serial % 7 == 3) {{
{body}
    end;
  }} else {{
{body}
  }}
  hold kv (2) {{
    run E prefill (3) growing kv;
{dec}
    branch (serial % 5 == 1) {{ end; }}
{dec}
  }}
  observe done = now;
}}
run {{ horizon 200; seed 7; }}
"""


def _run(src: str, monkeypatch, chunk: int):
    monkeypatch.setattr(sim_compile, "CHUNK", chunk)
    r = serq_sim.run(serq_frontend.compile(source=src))
    obs = {n: (o.times.tobytes(), o.sessions.tobytes(), o.values.tobytes()) for n, o in r.observes.items()}
    return encode_json(r), obs, r


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_long_block_in_pieces_runs_as_one_function(monkeypatch, tier):
    if tier:
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
    else:
        monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    src = _program(150)
    whole, whole_obs, _ = _run(src, monkeypatch, 10**9)
    for chunk in (64, 7, 1):
        pieces, pieces_obs, r = _run(src, monkeypatch, chunk)
        assert pieces == whole and pieces_obs == whole_obs, chunk
    res = r.result
    # what the comparison covers: sessions that ended inside a piece and after it, preemptions
    assert res.ended > 20 and res.pools[0].preemptions > 0
    assert len(r.observes["done"].values) < res.ended  # some ended early, by `end` inside a split block


def test_a_long_block_is_compiled_in_pieces(monkeypatch):
    # the session's source holds no function of more than CHUNK statements' lines
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    src = "stage d : delay;\nworkload { arrive poisson(1); }\nsession {\n" + \
          "  run d (1);\n" * 1000 + "}\nrun { horizon 5; }\n"
    seen = []
    real = sim_compile.Compiler._define

    def spy(self, code, name):
        seen.append(code.count("\n"))
        return real(self, code, name)

    monkeypatch.setattr(sim_compile.Compiler, "_define", spy)
    serq_sim.run(serq_frontend.compile(source=src))
    assert len(seen) >= 1000 // sim_compile.CHUNK and max(seen) < 20 * sim_compile.CHUNK, (len(seen), max(seen))
