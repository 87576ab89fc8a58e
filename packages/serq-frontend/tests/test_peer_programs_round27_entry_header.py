"""An llm-d engineer's decoder with an offload tier, written as a queue: the decode entry holds the GPU's KV
(consuming its cached prefix), then reads what the GPU lacks from a CPU tier in a hold within it, whose
header reads the GPU's hit the body set (`set c = cached; hold cpu (hc) … at admission (hc =
min(cachedin(cpu), … - c))`). It was refused: every hold of an entry read in its header only the
parameters, the queue's pools and stage, the constants and `computed`, and the message said "(the body may
read more: set the value there, or pass it)", which the program had done. The only form that linked, the
tier's hold first binding the GPU's hit from `cachedin(kv)` itself, double counts once the GPU hold is
preempted: its re-execution finds on the GPU what the tier's read loaded there, while the tier's read is
not made again (a load past the hold's allocation, or a transfer of negative work, stopped such runs).

language.txt lists the reads of an entry's header and is silent on a hold within another; a hold within
another hold of the entry now reads besides `cached` and what the entry set before it, unless that was set
from the clock or a hidden attribute (the scheduler's boundary the rule keeps). The entry's first hold is
held to the list as before. packages/serq-sim/tests/test_peer_programs_round27_pd.py runs the form by
hand and under preemption."""

from __future__ import annotations

from sqhelpers import compile_src, refused

DECODER = """let bs = 16;
def reusable(x) = floor((x - 1) / bs) * bs;
stage pcie : delay;
queue P : prefill {
  pool kv { cap 1000; block bs; }
  serve step { cost 1; memory kv; }
  nic ps(100);
  prefill (p) {
    hold kv (p) { prefill (p) growing kv; } cache (p) lease kv (inf);
  }
}
queue D : decode {
  pool kv { cap 1000; block bs; spill cpu via pcie (1) when (1); }
  pool cpu { cap 1000; block bs; }
  serve step { cost 1; memory kv; }
  nic ps(100);
  decode (p) from src {
    ENTRY
  }
}
D pull P latency 0 share maxmin;
queue gw : gateway { route { P.prefill (prompt); D.decode (prompt) from P; } }
workload { arrive batch(1); hidden o; init { set prompt = 32; set o = 4; } session { request gw; end; } }
run { horizon 100; }
"""

GPU = "hold kv (p) reuse (hit) at admission (hit = min(cachedin(kv), reusable(p))) {"
REST = """
      load kv (cc);
      transfer (p - c - cc) from src to kv (p - 1 - c - cc);
      decode (o) growing kv;
    } cache (p + o);"""
HEADER = "the header of a hold in `D.decode` reads "


def entry(text: str) -> str:
    return DECODER.replace("ENTRY", text)


def tier(bound: str, before: str = "set c = cached;") -> str:
    return entry(GPU + f"""
      {before}
      hold cpu (hc) reuse (hc) at admission (hc = max(0, min(cachedin(cpu), reusable(p) - {bound}))) {{
        set cc = cached;
      }} cache (0);""" + REST)


def test_a_tier_hold_within_the_gpu_hold_reads_the_hit_the_entry_set():
    p = compile_src(tier("c"))
    assert {x.name for x in p.pools} >= {"D.kv", "D.cpu"}
    # `cached` there is the enclosing admission's, the GPU's hit
    compile_src(tier("cached", before="set c = cached;"))


def test_a_value_set_from_the_clock_or_a_hidden_attribute_stays_out_of_a_header():
    refused(tier("⟨w", before="set c = cached;\n      set w = o;"),
            HEADER + "`w`, which the entry sets from the clock or a hidden attribute")
    refused(tier("⟨w", before="set c = cached;\n      set t = now;\n      set w = t * 2;"),
            HEADER + "`w`, which the entry sets from the clock or a hidden attribute")


def test_a_value_the_entry_sets_after_the_hold_is_told_to_be_set_first():
    text = entry(GPU + """
      hold cpu (hc) reuse (hc) at admission (hc = max(0, min(cachedin(cpu), reusable(p) - ⟨c))) {
        set cc = cached;
      } cache (0);
      set c = cached;""" + REST)
    refused(text, HEADER + "`c`, which the entry sets only after this hold")


def test_the_entrys_first_hold_reads_the_list_alone():
    e = refused(entry("set n = p;\n    hold kv (⟨n) { decode (o) growing kv; }"), HEADER + "`n`, which the entry sets;")
    first = str(e).splitlines()[0]
    assert "write the header in the parameters and pools the value comes from" in first
    assert "set the value there" not in first
    refused(entry("hold kv (p) reuse (⟨cached) { decode (o) growing kv; } cache (p)"),
            HEADER + "`cached`, which a hold's admission sets;")
