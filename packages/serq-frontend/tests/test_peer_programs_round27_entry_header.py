"""An llm-d engineer's decoder with an offload tier, written as a queue: the decode entry holds the GPU's KV
(consuming its cached prefix), then reads what the GPU lacks from a CPU tier in a hold within it, whose
header reads the GPU's hit the body set (`hc = min(cachedin(cpu), … - c)`). Every hold of an entry reads in
its header the parameters, the queue's pools and stage, the constants and `computed` (language.txt, Queues),
so it is refused; the message said "(the body may read more: set the value there, or pass it)", which the
program had done. It now says that the value is the entry's own, and how such a hold is written: before the
hold it was in, binding what it needs from the pools in its own `at admission`. That form links, and the
simulator's tests run it (packages/serq-sim/tests/test_peer_programs_round27_pd.py)."""

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


def test_a_tier_hold_within_the_gpu_hold_reading_its_hit_is_told_how_to_write_it():
    e = refused(entry(GPU + """
      set c = cached;
      hold cpu (hc) reuse (hc) at admission (hc = min(cachedin(cpu), reusable(p) - ⟨c)) {
        set cc = cached;
      } cache (0);""" + REST), HEADER + "`c`, which the entry sets;")
    first = str(e).splitlines()[0]
    # the way out is the one that links (below), not "set the value there": it was set there
    assert "set the value there" not in first
    assert "write this hold before the hold it is in" in first
    assert "its queue's pools and stage, the constants and `computed`" in first


def test_cached_read_by_a_hold_within_another_is_the_enclosing_admissions():
    refused(entry(GPU + """
      hold cpu (hc) reuse (hc) at admission (hc = min(cachedin(cpu), reusable(p) - ⟨cached)) {
        set cc = cached;
      } cache (0);
      set c = 0;""" + REST), HEADER + "`cached`, which an enclosing hold's admission sets;")


def test_a_first_hold_reading_what_the_entry_set_is_told_to_use_the_parameters():
    e = refused(entry("set n = p;\n    hold kv (⟨n) { decode (o) growing kv; }"), HEADER + "`n`, which the entry sets;")
    assert "write the header in the parameters and pools the value comes from" in str(e).splitlines()[0]


def test_the_tier_read_written_first_links():
    p = compile_src(entry("""hold cpu (hc) reuse (hc)
         at admission (g = min(cachedin(kv), reusable(p)), hc = min(cachedin(cpu), reusable(p) - g)) {
      set cc = cached;
      """ + GPU + """
        set c = cached;""" + REST + "\n    } cache (0);"))
    assert {x.name for x in p.pools} >= {"D.kv", "D.cpu"}
