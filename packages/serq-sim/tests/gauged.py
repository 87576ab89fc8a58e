"""A program with a cache, a gauge and two observes, run through the command (test_determinism.py,
test_stats_exact.py)."""

PROGRAM = """let lam = 0.9;
pool kv { cap 64; block 4; evict lru; }
stage svc : ps(2);
gauge used_kv = used(kv);
workload { arrive poisson(lam); }
session {
  set t0 = now;
  set n = floor(~uniform(4, 20));
  hold kv (n) reuse (n) { run svc (~h2(1, 4)); } cache (n);
  observe response = now - t0;
  observe hit = cached > 0;
}
run { horizon 2000; warmup 100; seed 3; }
"""
