"""A `by` clause of thousands of keys (`queue by`, `evict by`, `preempt by`, `serve by`, `choose … by`): the
code generated for its NaN check tested the keys as one chain `t0 & t1 & …`, which nests as deep as it is long,
and Python's compiler refused it (a RecursionError traceback from `serq run`, on both tiers, at a few thousand
keys). Keys compare in order, so keys that are all 0 but the last order as the last alone: the reports are the
same bytes as the one key's, on both tiers, and (for the clauses whose order shows in a report) not those of
the default order, so the last key was read."""

from __future__ import annotations

import serq_frontend
from tiers import same_json

N = 5000  # (3 000 was already refused)
SESSION = "workload {{ arrive poisson({rate}); }}\nsession {{\n{body}\n  end;\n}}\nrun {{ horizon {horizon}; seed 3; }}\n"


def _zeros_then(key: str) -> str:
    return "0, " * (N - 1) + key


def _report(src: str, monkeypatch) -> dict:
    rep = same_json(serq_frontend.compile(source=src, sets={}, defs={}), monkeypatch)
    rep.pop("run", None)  # (the wall and CPU times)
    return rep


def _queue(order: str) -> str:
    body = "  set t0 = now;\n  set w = ~exp(0.8);\n  hold p (1) { run s (w); }\n  observe response = now - t0;"
    return f"pool p {{ cap 1; {order} }}\nstage s : fifo;\n" + SESSION.format(rate=1, body=body, horizon=40)


def _choose(keys: str) -> str:
    body = (f"  set t0 = now;\n  choose j in 3 by ({keys});\n  run t[j] (~exp(0.5));\n"
            "  observe response = now - t0;")
    return "stage t[3] : fifo;\n" + SESSION.format(rate=4, body=body, horizon=10)


def _evict(keys: str) -> str:
    body = ("  hold kv (4) { run s (0.1); } cache (4);\n  run z (~exp(3));\n"
            "  hold kv (4) reuse (h) at admission (h = min(cachedin(kv), 4)) { run s (0.1); } cache (4);\n"
            "  observe hit = cached;")
    return (f"pool kv {{ cap 12; evict by ({keys}); }}\nstage s : fifo;\nstage z : delay;\n"
            + SESSION.format(rate=2, body=body, horizon=20))


def _step(pool_keys: str, serve_keys: str) -> str:
    body = ("  set t0 = now;\n  hold kv (16) { run e prefill (16 + floor(~exp(40))); "
            "run e decode (1 + floor(~exp(30))) growing kv; }\n  observe response = now - t0;")
    return (f"pool kv {{ cap 64; block 16; admit via e; preempt by ({pool_keys}); }}\n"
            f"stage e : step {{ budget 64; cost 0.01; memory kv; serve by ({serve_keys}); }}\n"
            + SESSION.format(rate=3, body=body, horizon=4))


def test_a_queue_by_of_thousands_of_keys_orders_as_its_last(monkeypatch):
    many = _report(_queue(f"queue by ({_zeros_then('w')});"), monkeypatch)
    assert many == _report(_queue("queue by (w);"), monkeypatch)
    assert many != _report(_queue("queue fifo;"), monkeypatch)  # (the shortest first: another mean response)


def test_a_choose_of_thousands_of_keys_chooses_as_its_last(monkeypatch):
    many = _report(_choose(_zeros_then("-j")), monkeypatch)
    assert many == _report(_choose("-j"), monkeypatch)
    assert many != _report(_choose("j"), monkeypatch)  # (t[2] is chosen, not t[0])
    assert [s["index"] for s in many["stages"] if s["completions"]] == [2]


def test_evict_preempt_and_serve_by_thousands_of_keys(monkeypatch):
    many = _report(_evict(_zeros_then("-age")), monkeypatch)
    assert many == _report(_evict("-age"), monkeypatch)
    assert many != _report(_evict("age"), monkeypatch)  # (other entries kept: other hits)
    many = _report(_step(_zeros_then("-admission"), _zeros_then("remaining")), monkeypatch)
    assert many["pools"][0]["preemptions"] > 0
    assert many == _report(_step("-admission", "remaining"), monkeypatch)
    assert many != _report(_step("admission", "remaining"), monkeypatch)
    assert many != _report(_step("-admission", "-remaining"), monkeypatch)
