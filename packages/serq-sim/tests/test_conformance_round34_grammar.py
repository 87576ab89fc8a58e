"""Conformance of language.txt §2's grammar read production by production, each case a program that

* is in `serq fmt` form (the formatter leaves it unchanged: docs/language.md, Commands and API, "the
  canonical layout"),
* is also written out of that form (its code's blanks doubled, its indentation tabs, `=` unspaced: what a
  port's test files hold), and `serq fmt` of that text gives the case's text back, with its IR the same
  bytes,
* runs, on the tier serQ picks and on the general engine with the same JSON report and samples
  (conform.run), to the figures its comment derives by hand;

and the neighbouring wrong forms of each production refused with one message at the column marked ``⟨``,
the source line quoted and a caret under that column (docs/language.md, Diagnostics).
"""

from __future__ import annotations

import math
import re

import msgspec
import pytest
import serq_frontend
import serq_ir
from conform import report_json, run
from serq_frontend.fmt import format_source


def ir_bytes(src: str) -> bytes:
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    return serq_ir.encode(msgspec.structs.replace(prog, source=None), spans=False)


def untidy(src: str) -> str:
    """``src`` out of `serq fmt` form: in each line's code (not its comment) every blank doubled and ` = `
    written `=`, its indentation written with a tab."""
    out = []
    for line in src.split("\n"):
        code, sep, comment = line.partition("//")
        body = code.lstrip(" ")
        indent = len(code) - len(body)
        body = body.replace(" = ", "=").replace(" ", "  ")
        out.append(("\t" + " " * indent if indent else "") + body + sep + comment)
    return "\n".join(out)


def check_form(src: str) -> None:
    assert format_source(src) == src
    messy = untidy(src)
    assert messy != src
    assert format_source(messy) == src
    assert ir_bytes(messy) == ir_bytes(src)


# (name, program in `serq fmt` form, {observe: [(session, time, value), …]}, {JSON report key: value})
CASES = [
    # numbers: "decimal, in the digits 0-9, with an optional fraction and exponent (`2e-5`, `.5`, `5.`,
    # `1.e3`, `8010`; `007` is 7)"; `E` as `e`, a signed exponent. a = 15, b = 2.5, c = 5.5, e = 100 - 7
    # = 93: v = 2.5 · 2 + 5.5 + 93 = 103.5. The delay runs a / 10 = 1.5 (t = 1.5) then 25e-2 = 0.25
    # (u = 1.75); the horizon 1e1 is 10.
    ("number_literals", """
let a = 1.5e1;
let b = 25E-1;
let c = .5 + 5.;
let e = 1.e2 - 007;
stage d : delay;
workload { arrive batch(1); }
session {
  run d (a / 10);
  observe t = now;
  observe v = b * 2 + c + e;
  run d (25e-2);
  observe u = now;
}
run { horizon 1e1; }
""", {"t": [(0, 1.5, 1.5)], "v": [(0, 1.5, 103.5)], "u": [(0, 1.75, 1.75)]}, {"horizon": 10.0, "end": 10.0}),
    # comments run from `//` to the line's end, alone on a line or after code (aligned two spaces after
    # it); a statement may go over lines (a continued line four more than its statement, two more per open
    # bracket): run d (1 + 2 * 3) is 7.
    ("comments_and_line_breaks", """
// one statement over three lines
stage d : delay;  // every job on its own
workload { arrive batch(1); }
session {
  run d (1 +
        2 *
        3);
  observe t = now;  // 7
}
run { horizon 10; }  // the end
""", {"t": [(0, 7.0, 7.0)]}, {}),
    # `hold` with every clause: `reserve` on the first pool, a second pool, `reuse`, `at admission`, the
    # block, `cache`, `lease`. m has blocks of 2: 3 units take 4. s0 is admitted at 0 (reserve 6 beside
    # 0 used; r 1 of 2) and consumes nothing (no prefix yet): c = 0. s1 at 0: 4 used + 6 reserved > 8,
    # waits at m's head. s0's body ends at 1: r is released (cached 1 there, cache (4) of an allocation
    # of 1), m is leased for 2 s: used(m) is still 4 (u = 4 at 1). At 3 the lease ends and m caches
    # min(4, 4) = 4 (a cached prefix never blocks): s1 is admitted at 3 (0 used + 6 ≤ 8; 4 + 4 cached
    # fits), c = 0 (s1 has no prefix), its lease holds 4 until 6 (u = 4 at 4). s0 reads its 4 cached at 6
    # (v = 4), then `hold m (4) reuse (2)` consumes 2 (c2 = 2): 4 leased + 4 + the dead 2 > 8, so the
    # dead 2 is evicted (1 entry, 2 units); `cache (0)` keeps nothing: w = 0 + 10 · 4 (s1's lease until
    # 6, whose end was scheduled at 4, after s0's run's end at 6, scheduled at 1). s1 at 9 likewise: c2
    # = 2, its dead 2 stay (room), w = 0.
    # Over [0, 20]: used 4 on [0, 3] and [3, 6]: 24/20 = 1.2; cached 4 on [3, 6], 4 on [6, 9], the dead 2
    # on [9, 20]: 46/20 = 2.3; holders 6/20 = 0.3 (a lease holds); queue 3/20; waits 0, 3, 0, 0: 0.75.
    # r: s0's 1 cached from 1, s1's from 4: (19 + 16)/20 = 1.75.
    ("hold_every_clause", """
pool m { cap 8; block 2; evict lru; }
pool r { cap 2; }
stage d : delay;
workload { arrive batch(2); }
session {
  hold m (3) reserve (6), r (1) reuse (k) at admission (k = cachedin(m)) {
    observe c = cached;
    run d (1);
  } cache (4) lease m (2);
  observe u = used(m);
  run d (5);
  observe v = cachedin(m);
  hold m (4) reuse (2) {
    observe c2 = cached;
  } cache (0);
  observe w = cachedin(m) + 10 * used(m);
}
run { horizon 20; }
""", {"c": [(0, 0.0, 0.0), (1, 3.0, 0.0)], "u": [(0, 1.0, 4.0), (1, 4.0, 4.0)],
      "v": [(0, 6.0, 4.0), (1, 9.0, 4.0)], "c2": [(0, 6.0, 2.0), (1, 9.0, 2.0)],
      "w": [(0, 6.0, 40.0), (1, 9.0, 0.0)]},
     {"pools": [{"name": "m", "index": None, "used": 1.2, "cached": 2.3, "queue": 0.15, "holders": 0.3,
                 "wait": 0.75, "admissions": 4, "evicted_entries": 1, "evicted_units": 2.0, "preemptions": 0,
                 "spills": 0, "rejections": 0, "stuck": 0, "over_cap": 0},
                {"name": "r", "index": None, "used": 0.1, "cached": 1.75, "queue": 0.0, "holders": 0.1,
                 "wait": 0.0, "admissions": 2, "evicted_entries": 0, "evicted_units": 0.0, "preemptions": 0,
                 "spills": 0, "rejections": 0, "stuck": 0, "over_cap": 0}]}),
    # grow, load, release, drop. m (block 2): hold 1 takes a block (2); grow m (1) adds a whole block
    # (docs/language.md: the amount rounded up and added): 4 (a). q's hold of 3 loads 2 tokens (its
    # position 2) and releases: cache (5) keeps min(5, 2) = 2, and q holds nothing: b = 0 + 10 · 2; the
    # scope's end then has nothing left on q (b2 the same). m's hold caches its allocation, 4 (no growing
    # run or load reached a position): c = 4; drop m discards it: e = 0.
    ("grow_load_release_drop", """
pool m { cap 10; block 2; }
pool q { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold m (1) {
    grow m (1);
    observe a = used(m);
    hold q (3) {
      load q (2);
      release q;
      observe b = used(q) + 10 * cachedin(q);
    } cache (5);
    observe b2 = used(q) + 10 * cachedin(q);
    run d (1);
  } cache (9);
  observe c = cachedin(m);
  drop m;
  observe e = cachedin(m);
}
run { horizon 10; }
""", {"a": [(0, 0.0, 4.0)], "b": [(0, 0.0, 20.0)], "b2": [(0, 0.0, 20.0)], "c": [(0, 1.0, 4.0)],
      "e": [(0, 1.0, 0.0)]}, {}),
    # `run a, b (w)` under `share maxmin`: s0's flow holds a (ps 2) and b (ps 0.5), s1's a alone (a stage
    # of a flow's run is shared for the whole run, so s1's run is a flow too). Rates rise together: b fills
    # at 0.5 (s0 stops there), a at 0.5 + 1.5: s0's work 1 ends at 2, s1's 3 at 1.5 · 2 = 3, also at 2.
    ("flow_maxmin", """
share maxmin;
stage a : ps(2);
stage b : ps(0.5);
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    run a, b (1);
  } else {
    run a (3);
  }
  observe t = now;
}
run { horizon 10; }
""", {"t": [(0, 2.0, 2.0), (1, 2.0, 2.0)]}, {}),
    # the same under `share bottleneck`: each flow its equal share at its tightest stage, the rest unused:
    # s0 min(2/2, 0.5/1) = 0.5 (ends at 2), s1 2/2 = 1, 2 of its 3 done at 2, then alone at 2: 0.5 s more.
    ("flow_bottleneck", """
share bottleneck;
stage a : ps(2);
stage b : ps(0.5);
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    run a, b (1);
  } else {
    run a (3);
  }
  observe t = now;
}
run { horizon 10; }
""", {"t": [(0, 2.0, 2.0), (1, 2.5, 2.5)]}, {}),
    # `loop`, `end` inside a branch, `branch with` of 1 and of 0 with and without `else`: s0 ends at its
    # k == 2, s1 at k == 3; each pass runs d (1) (with 1 the first block, with 0 nothing). s0: k = 1 at 0,
    # run [0, 1], k = 2 at 1: last = 2 at 1. s1: last = 3 at 2. The run block's fields in another order.
    ("loop_end_branch_with", """
let k0 = 2;
stage d : delay;
workload { arrive batch(2); }
session {
  set k = 0;
  loop {
    set k = k + 1;
    branch (k == k0 + serial) {
      observe last = k;
      end;
    }
    branch with (1) {
      run d (1);
    } else {
      run d (100);
    }
    branch with (0) {
      run d (100);
    }
  }
}
run { seed 7; horizon 50; warmup 0; }
""", {"last": [(0, 1.0, 2.0), (1, 2.0, 3.0)]}, {"ended": 2, "end": 50.0}),
    # `arrive renewal(2)` with `arrivals 3`: the first arrival after one gap, at 2, 4, 6; each runs 3: t
    # = 5, 7, 9, and the run ends when the last session does (end 9, the horizon kept as 100).
    ("renewal_arrivals", """
stage d : delay;
workload { arrive renewal(2); }
session {
  run d (3);
  observe t = now;
}
run { arrivals 3; horizon 100; }
""", {"t": [(0, 5.0, 5.0), (1, 7.0, 7.0), (2, 9.0, 9.0)]},
     {"end": 9.0, "horizon": 100.0, "arrivals": 3, "ended": 3}),
    # `arrive closed(2)` on a fifo of 1 s: s0 [0, 1], s1 [1, 2]; s0's end brings s2 at 1 ([2, 3]), s1's
    # s3 at 2 (waits), s2's s4 at 3, the horizon (an arrival then counts): 5 arrivals, 3 ended; waits 0,
    # 1, 1; two present all along.
    ("closed_population", """
stage s : fifo;
workload { arrive closed(2); }
session {
  run s (1);
  observe t = now;
}
run { horizon 3; }
""", {"t": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 3.0, 3.0)]},
     {"arrivals": 5, "ended": 3, "stages": [{"name": "s", "index": None, "present": 2.0, "utilisation": 1.0,
                                             "completions": 3, "throughput": 1.0, "wait": 2 / 3,
                                             "service": 1.0, "iterations": None, "requests": None,
                                             "request_throughput": None, "prefill_only": None,
                                             "decode_only": None, "mixed": None, "batch": None,
                                             "tokens": None, "token_utilisation": None}]}),
    # a field's value that begins with a `-` keeps it as the value's sign in `serq fmt` form (`cost -1 + …`,
    # not `cost - 1 + …`): one iteration of 4 prefill tokens costs -1 + 2 · 4 = 7 (t = 7); the horizon
    # -(-20) is 20.
    ("negative_field_values", """
stage e : step { budget 4; cost -1 + 2 * tokens; chunk -(-4); }
workload { arrive batch(1); }
session {
  run e prefill (4);
  observe t = now;
}
run { horizon -(-20); }
""", {"t": [(0, 7.0, 7.0)]}, {"horizon": 20.0, "end": 20.0}),
    # a gateway queue, its route, `mark` and the caller's `request G` and `G.done`: the queue's fifo
    # serves s0 [0, 2], s1 [2, 4].
    ("gateway_route_mark", """
queue G : gateway {
  serve fifo;
  route { run (2); mark done; }
}
workload {
  arrive batch(2);
  session { request G; observe t = G.done; }
}
run { horizon 10; }
""", {"t": [(0, 2.0, 2.0), (1, 4.0, 4.0)]}, {}),
    # `def` of an expression and of statements, `gauge`: half(x) = x / 2; twice runs its stage twice.
    # s0 holds m (3) on [0, 2] (twice d (half(2)) = two runs of 1): the gauge g = used(m) is 3 on
    # [0, 2] and 0 on [2, 4]: mean 1.5, least 0 and greatest 3 (both held for a positive time).
    ("defs_and_gauge", """
def half(x) = x / 2;
def twice(s, w) {
  run s (w);
  run s (w);
}
pool m { cap 5; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold m (3) {
    twice(d, half(2));
  }
  observe t = now;
}
gauge g = used(m);
run { horizon 4; }
""", {"t": [(0, 2.0, 2.0)]}, {"gauges": {"g": {"mean": 1.5, "min": 0.0, "max": 3.0}}}),
]


def _subset(got, want, where=""):
    if isinstance(want, dict):
        for k, v in want.items():
            assert k in got, (where, k)
            _subset(got[k], v, f"{where}.{k}")
    elif isinstance(want, list) and want and isinstance(want[0], dict):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _subset(g, w, f"{where}[{i}]")
    elif isinstance(want, float):
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12), (where, got, want)
    else:
        assert got == want, (where, got, want)


@pytest.mark.parametrize("name, src, observes, figures", CASES, ids=[c[0] for c in CASES])
def test_a_production_formats_and_runs_to_its_figures(monkeypatch, name, src, observes, figures):
    src = src.lstrip("\n")
    check_form(src)
    r, obs = run(src, monkeypatch)
    assert obs == observes
    _subset(report_json(r), figures)


# (expression, value): §2 "Expressions: arithmetic, comparisons (0/1), &&, ||, !, c ? a : b", read with
# docs/language.md's precedence from low to high, `c ? a : b`, `||`, `&&`, comparisons, `+ -`, `* / %`,
# unary `- !`, binary operators of one level (comparisons among them) to the left, the conditional to the
# right. Each is observed computed (over a zero the run makes) and as written (folded by the linker).
PRECEDENCE = [
    ("1 || 0 ? 2 : 3", 2.0),             # (1 || 0) ? 2 : 3: the conditional is lowest
    ("1 ? 0 : 1 || 1", 0.0),             # 1 ? 0 : (1 || 1)
    ("0 ? 1 : 2 + 3", 5.0),              # 0 ? 1 : (2 + 3)
    ("0 ? 2 : 0 ? 3 : 4", 4.0),          # 0 ? 2 : (0 ? 3 : 4): to the right
    ("0 && 1 == 0", 0.0),                # 0 && (1 == 0), not (0 && 1) == 0 = 1
    ("0 && 1 || 1", 1.0),                # (0 && 1) || 1
    ("1 + 2 < 4 - 1", 0.0),              # 3 < 3
    ("1 < 2 == 1", 1.0),                 # (1 < 2) == 1
    ("1 == 2 < 3", 1.0),                 # (1 == 2) < 3 = 0 < 3
    ("1 >= 1 > 0", 1.0),                 # (1 >= 1) > 0
    ("3 > 2 > 1", 0.0),                  # (3 > 2) > 1 = 1 > 1
    ("-2 * 3 % 4", -2.0),                # ((-2) * 3) % 4 = -6 % 4, the sign of the dividend
    ("4 - 2 * 3 / 6", 3.0),              # 4 - ((2 * 3) / 6)
    ("10 % 4 % 3", 2.0),                 # (10 % 4) % 3 = 2 % 3, not 10 % 1 = 0
    ("6 / 3 / 2", 1.0),                  # (6 / 3) / 2
    ("1 - 2 + 3", 2.0),                  # (1 - 2) + 3
    ("!1 + 1", 1.0),                     # (!1) + 1
    ("!(1 < 2) || 4 <= 4", 1.0),         # 0 || 1
    ("-~det(2)", -2.0),                  # a draw is a primary: -(~det(2))
    ("~det(2) * 3", 6.0),
    ("0 || 0 || 2", 1.0),                # || gives 0 or 1
    ("2 && 3", 1.0),
    ("1 / -0", -math.inf),               # -0 is IEEE's negative zero: 1 / -0 is -inf
    ("1 / (0 * -1)", -math.inf),
    ("0 != -0", 0.0),                    # -0 == 0
    ("-inf * 0 == -inf * 0", 0.0),       # NaN == NaN is 0
    ("max(-inf, -1e308)", -1e308),
    ("min(inf, 1e308)", 1e308),
    ("2.5E+1 == 25", 1.0),
]


@pytest.mark.parametrize("expr, want", PRECEDENCE, ids=[e for e, _ in PRECEDENCE])
def test_precedence_and_associativity(monkeypatch, expr, want):
    src = ("stage d : delay;\nworkload { arrive batch(1); }\nsession {\n  set z = -(serial - serial);\n"
           f"  observe c = {expr} + z;\n  observe f = {expr};\n  run d (1);\n}}\nrun {{ horizon 2; }}\n")
    assert format_source(src) == src
    _r, obs = run(src, monkeypatch)
    for way in ("c", "f"):
        (_s, t, got), = obs[way]
        assert t == 0.0 and got == want, (way, got)
        assert math.copysign(1, got) == math.copysign(1, want)


MARK = "⟨"

# (program with ⟨ where the error points, words of its message): the neighbouring wrong forms of the
# productions above.
REFUSALS = [
    # numbers: no digit separator, no hexadecimal, no exponent without digits, one `.`
    ("let x = ⟨1_000;", "`1_000` is not a number"),
    ("let x = ⟨0x10;", "`0x10` is not a number"),
    ("let x = ⟨1e+;", "`1e+` is not a number"),
    ("let x = ⟨1.5.3;", "`1.5.3` is not a number"),
    # comments: only `//`
    ("let x = 1; ⟨/* c */", "`/*` begins no comment"),
    ("let x = 1; ⟨# c", "a comment runs from `//` to the end of the line"),
    # a string has no escapes
    ('use ⟨"a\\"b.sq";', "a string has no escapes"),
    # operators: a power is pow, equality is ==, a parenthesis left open, a conditional without `:`
    ("let x = 2 ⟨** 3;", "a power is `pow(x, y)`"),
    ("let x = 1 ⟨= 2;", "a test of equality is `==`"),
    ("let x = (1 + 2⟨;", "a `)` is missing, the `(` at 1:9 is not closed"),
    ("let x = 1 ? 2⟨;", "unexpected `;`: a conditional is `c ? a : b`, its `:` and the value if false after `a`"),
    # an item's `;` missing before its `}`
    ("pool p { cap 1⟨ }", "missing `;`"),
    # a field that takes a value, written without one
    ("pool p { cap⟨; }", "`cap` takes a value"),
    ("run { horizon⟨; }", "`horizon` takes a value"),
    # a hold's clauses out of their order: `reuse` after the block is not a clause there
    ("pool m { cap 1; }\nstage d : delay;\nworkload { arrive batch(1); }\nsession {\n"
     "  hold m (1) { run d (1); } ⟨reuse (1) cache (1);\n}\n", "`reuse` goes before the hold's block"),
    # a pool's `reserve` twice (it was told as a token the grammar did not expect, `did you mean reuse?`)
    ("pool m { cap 4; }\nstage d : delay;\nworkload { arrive batch(1); }\nsession {\n"
     "  hold m (1) reserve (2) ⟨reserve (3) { run d (1); }\n}\n", "`reserve` is given twice for one pool"),
]


def located(src: str) -> tuple[str, int, int]:
    i = src.index(MARK)
    before = src[:i]
    return src.replace(MARK, "", 1), before.count("\n") + 1, i - (before.rfind("\n") + 1) + 1


@pytest.mark.parametrize("src, words", REFUSALS, ids=[w for _s, w in REFUSALS])
def test_a_neighbouring_wrong_form_is_refused_at_its_column(src, words):
    text, line, col = located(src)
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(source=text, sets={}, defs={})
    e = info.value
    lines = str(e).splitlines()
    assert lines[0].startswith(f"<source>:{line}:{col}: error: "), lines[0]
    assert words in lines[0], lines[0]
    # the line quoted, a caret under the column (two spaces of margin)
    assert lines[1] == "  " + text.split("\n")[line - 1]
    assert re.fullmatch(r" *\^", lines[2]) and len(lines[2]) == 2 + col, lines[2]
