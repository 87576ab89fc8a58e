"""A pool's `cache scheduled`: a hold preempted while a step stage plans its iteration caches its computed prefix
and the tokens that planning had already given it (docs/language.md, Pools). vLLM hashes a block when
``allocate_slots`` gives it for the tokens a step schedules, before they are computed, so a request the running
loop served earlier in a step and then preempted there leaves those blocks cached (docs/vllm.md). The default,
`cache computed`, caches the computed prefix alone (language.txt §3). `computed`, the attribute the re-executed
hold reads, is the computed position either way.

Cases by hand, on both tiers (the default tier plans decoders that grow lazily, as a count of one token each:
the victim's token is the one its walk, or its admissions, had counted).
"""

from __future__ import annotations

import conform
import pytest
import serq_frontend

pytestmark = pytest.mark.timeout(60)

# Blocks of 2, 8 units, budget 10, cost 1, `preempt by (-prio)`: the victim is the largest prio. WALK: A
# (serial 0, priority 1) arrives at 0.5 and holds 6 units, B (priority 0) at 1 and holds 2 (used 8), each
# decoding 4 tokens, growing kv. Iterations at 0.5 (A 0 -> 1), 1.5 (A 2, B 1), 2.5 (A 3, B 2); at 3.5 the
# planning gives A its token (3 -> 4, its second block full), then B's (2 -> 3) needs a block: 8 + 2 > 8,
# and the victim is A, served before B in this iteration. A caches 2 units (its computed 3, in blocks) under
# `cache computed`, 4 under `cache scheduled`; B grows beside that cache (2 + 4 + 2 <= 8), decodes its last
# token at 4.5 and ends at 5.5, caching nothing; A, re-queued, is admitted at 5.5 and consumes its prefix.
WALK = """pool kv { cap 8; block 2; evict lru; preempt by (-prio) requeue tail; CACHE }
stage E : step { budget 10; cost 1; memory kv; SERVE }
workload { arrive renewal(0.5); }
session {
  set prio = serial == 0 ? 1 : 0;
  set u = serial == 0 ? 6 : 2;
  hold kv (u) {
    observe c = cached;
    observe comp = computed;
    run E decode (4) growing kv;
  } cache (100);
}
run { horizon 100; arrivals 2; }
"""

# ADMITTED: A at 2.5 as above (the engine admits the pool: `admit via E`), B (priority 0) at 5, admitted by
# the planning at 5.5 after A's token (3 -> 4), and served there: its prefill of 3 needs a second block,
# 8 + 2 > 8, and the victim is A. Under `cache scheduled` A caches 4, else 2; B's prefill ends at 6.5 and A
# is admitted again then.
ADMITTED = """pool kv { cap 8; block 2; evict lru; preempt by (-prio) requeue tail; admit via E; CACHE }
stage E : step { budget 10; cost 1; memory kv; }
workload { arrive renewal(2.5); }
session {
  set prio = serial == 0 ? 1 : 0;
  set u = serial == 0 ? 6 : 2;
  hold kv (u) {
    observe c = cached;
    branch (serial == 0) { run E decode (4) growing kv; } else { run E prefill (3) growing kv; }
  } cache (100);
}
run { horizon 100; arrivals 2; }
"""


def _a(obs: dict, name: str) -> list:
    return [(t, v) for s, t, v in obs[name] if s == 0]


@pytest.mark.parametrize("cache, serve, hit", [
    ("cache scheduled;", "", 4.0),
    ("cache computed;", "", 2.0),
    ("", "", 2.0),  # the default
    # B served first: A is preempted before the iteration gives it anything
    ("cache scheduled;", "serve by (-admission);", 2.0),
])
def test_a_victim_served_earlier_in_the_planning(monkeypatch, cache, serve, hit):
    report, obs = conform.run(WALK.replace("CACHE", cache).replace("SERVE", serve), monkeypatch)
    assert _a(obs, "c") == [(0.5, 0.0), (5.5, hit)]
    assert _a(obs, "comp") == [(0.5, 0.0), (5.5, 3.0)]  # the computed position, under either
    assert conform.pool(report, "kv").preemptions == 1


@pytest.mark.parametrize("cache, hit", [("cache scheduled;", 4.0), ("cache computed;", 2.0)])
def test_a_victim_of_a_request_the_planning_admitted(monkeypatch, cache, hit):
    report, obs = conform.run(ADMITTED.replace("CACHE", cache), monkeypatch)
    assert _a(obs, "c") == [(2.5, 0.0), (6.5, hit)]
    assert conform.pool(report, "kv").preemptions == 1


def test_cache_scheduled_on_a_pool_that_preempts_nobody_is_told(capsys):
    text = WALK.replace("preempt by (-prio) requeue tail; ", "").replace("CACHE", "cache scheduled;")
    text = text.replace("SERVE", "")
    serq_frontend.compile(source=text)
    err = capsys.readouterr().err
    assert err.startswith("<source>:1:38: warning: pool `kv` says `cache scheduled`, and preempts nobody "
                          "(`preempt none`, the default): it caches the tokens a step stage's planning gave a hold "
                          "that the same planning preempts, so this never applies"), err
    serq_frontend.compile(source=WALK.replace("CACHE", "cache scheduled;").replace("SERVE", ""))
    assert "cache scheduled" not in capsys.readouterr().err


@pytest.mark.parametrize("option, at, words", [
    ("cache (4);", "(", "unexpected `(`: a pool's option is `cache computed;` (the default) or `cache scheduled;`"),
    ("cache;", ";", "unexpected `;`: a pool's option is `cache computed;` (the default) or `cache scheduled;`"),
    ("cache hashed;", "hashed", "unexpected `hashed`: a pool's option is `cache computed;`"),
    ("cache scheduled; cache computed;", "cache computed", "pool `kv`: `cache` is given twice"),
])
def test_the_option_written_wrong(option, at, words):
    text = WALK.replace("CACHE", option).replace("SERVE", "")
    col = WALK.index("CACHE") + option.index(at) + 1  # (on the first line)
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=text)
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"<source>:1:{col}: error: {words}"), first
