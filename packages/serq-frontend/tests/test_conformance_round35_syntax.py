"""language.txt §2 (Syntax), round 35: how an expression groups, checked as IR equivalences, and a stage's
and a workload's declarations that §2's grammar refuses.

* Precedence and associativity. §2 lists the operators ("arithmetic, comparisons (0/1), &&, ||, !,
  c ? a : b"); docs/language.md gives their order, from low to high: `c ? a : b`, `||`, `&&`, the comparisons, `+ -`,
  `* / %`, the unary `- !`, the binary operators grouping to the left and the conditional to the right. Each
  case is an expression written without parentheses and the same expression with the parentheses that order
  implies: the two compile to the same IR, byte for byte, and the unparenthesised one to another IR than the
  other grouping (so the case can fail). `serq fmt` keeps each one's meaning: its output compiles to the
  same IR.
* §2's stage kinds, `fifo [ ( c ) ] | ps ( expr ) | delay`, and the workload's items, each at most once,
  `init` and `turn` holding only `set` and `observe` (docs/language.md), its arrival constants (a whole population of
  at least 1, a positive finite rate, a positive finite gap): the refusals say where, with a caret.
"""

from __future__ import annotations

import pytest
from serq_frontend.fmt import format_source
from sqhelpers import compile_src, ir_bytes, refused

pytestmark = pytest.mark.timeout(60)


def program(expr: str) -> str:
    return ("stage d : delay;\nworkload { arrive batch(1); }\nsession {\n  set z = 1;\n  set y = 2;\n"
            f"  observe v = {expr};\n}}\nrun {{ horizon 1; }}\n")


def ir(expr: str) -> bytes:
    return ir_bytes(compile_src(program(expr)))


GROUPING = [
    # (as written, the grouping the order implies, another grouping it must not be)
    ("z - y - 3", "(z - y) - 3", "z - (y - 3)"),                       # `-` to the left
    ("z / y / 3", "(z / y) / 3", "z / (y / 3)"),                       # `/` to the left
    ("z % y * 3", "(z % y) * 3", "z % (y * 3)"),                       # `%` beside `*`, to the left
    ("z * y % 3", "(z * y) % 3", "z * (y % 3)"),
    ("z + y * 3", "z + (y * 3)", "(z + y) * 3"),                       # `*` above `+`
    ("z - y / 3", "z - (y / 3)", "(z - y) / 3"),
    ("-z * y", "(-z) * y", "-(z * y)"),                                # unary above `*`: the same value,
    ("!z + y", "(!z) + y", "!(z + y)"),                                # not the same IR
    ("z + y < 3", "(z + y) < 3", "z + (y < 3)"),                       # `+` above the comparisons
    ("z < y == 1", "(z < y) == 1", "z < (y == 1)"),                    # comparisons to the left
    ("z > y > 0", "(z > y) > 0", "z > (y > 0)"),
    ("z < y && y < 3", "(z < y) && (y < 3)", "z < (y && y) < 3"),      # comparisons above `&&`
    ("z || y && 0", "z || (y && 0)", "(z || y) && 0"),                 # `&&` above `||`
    ("z && y || 0", "(z && y) || 0", "z && (y || 0)"),
    ("z || y ? 3 : 4", "(z || y) ? 3 : 4", "z || (y ? 3 : 4)"),        # `||` above the conditional
    ("z ? 1 : y ? 2 : 3", "z ? 1 : (y ? 2 : 3)", "(z ? 1 : y) ? 2 : 3"),  # the conditional to the right
    ("z ? y ? 1 : 2 : 3", "z ? (y ? 1 : 2) : 3", "(z ? y : 1) ? 2 : 3"),
    ("!z == 0", "(!z) == 0", "!(z == 0)"),                             # `!` above the comparisons
    ("- -z", "-(-z)", "z"),
    ("z - -y", "z - (-y)", "(z - y)"),
    ("min(z, y) + max(z, y) * 2", "min(z, y) + (max(z, y) * 2)", "(min(z, y) + max(z, y)) * 2"),
    ("z + y ? z : y", "(z + y) ? z : y", "z + (y ? z : y)"),
]


@pytest.mark.parametrize("written, grouped, other", GROUPING, ids=[g[0] for g in GROUPING])
def test_an_expression_groups_by_precedence(written, grouped, other):
    want = ir(grouped)
    assert ir(written) == want
    assert ir(other) != want
    formatted = format_source(program(written))
    assert ir_bytes(compile_src(formatted)) == want
    assert format_source(formatted) == formatted


D = "stage d : delay;\n"
SESSION = "session { run d (1); }\nrun { horizon 1; }\n"

REFUSED = [
    # a run over several stages holds ps stages of a constant capacity only (§3, Stages)
    ("stage s : ps(1);\nstage f : fifo;\nshare maxmin;\nworkload { arrive batch(1); }\n"
     "session { run s, ⟨f (1); }\nrun { horizon 1; }\n",
     "`f` in a run over several stages: every stage of such a run is ps(φ) with a constant φ above 0"),
    # "a run names each stage array once"
    ("stage s : ps(1);\nshare maxmin;\nworkload { arrive batch(1); }\nsession { run s, ⟨s (1); }\n"
     "run { horizon 1; }\n", "`s` is named twice in one run"),
    # program-reference.txt, share: "Required when some run holds several stages, an error otherwise; there is
    # no default"; once
    ("stage s : ps(1);\n⟨share maxmin;\nworkload { arrive batch(1); }\nsession { run s (1); }\n"
     "run { horizon 1; }\n", "`share` with no run over several stages"),
    ("stage s : ps(1);\nstage t : ps(1);\nworkload { arrive batch(1); }\nsession { ⟨run s, t (1); }\n"
     "run { horizon 1; }\n", "a run over several stages needs the program's `share maxmin;` or `share "
     "bottleneck;`: there is no default"),
    ("stage s : ps(1);\nstage t : ps(1);\nshare maxmin;\n⟨share bottleneck;\nworkload { arrive batch(1); }\n"
     "session { run s, t (1); }\nrun { horizon 1; }\n", "`share` is given twice"),
    # "Every stage of such a run is ps(φ) with a constant φ above 0"
    ("stage s : ps(present);\nstage t : ps(1);\nshare maxmin;\nworkload { arrive batch(1); }\n"
     "session { run ⟨s, t (1); }\nrun { horizon 1; }\n", "every stage of such a run is ps(φ) with a constant φ"),
    ("stage s : ps(0);\nstage t : ps(1);\nshare maxmin;\nworkload { arrive batch(1); }\n"
     "session { run ⟨s, t (1); }\nrun { horizon 1; }\n", "every stage of such a run is ps(φ) with a constant φ"),
    # §2, Which stage: "Exactly one must qualify: with none (stage svc : fifo; and prefill W;) … the parser stops
    # at the form and says so"
    ("stage svc : fifo;\nworkload { arrive batch(1); }\nsession { ⟨prefill 1; }\nrun { horizon 1; }\n",
     "`prefill` finds no stage to run on"),
    ("stage prefill : fifo;\nstage p2 : fifo;\nworkload { arrive batch(1); }\n"
     "session { prefill on p2 (1); ⟨decode 1; }\nrun { horizon 1; }\n", "`decode` finds no stage to run on"),
    # fifo's count is a whole number of at least 1
    ("stage s : fifo(⟨2.5);\nworkload { arrive batch(1); }\nsession { run s (1); }\nrun { horizon 1; }\n",
     "a fifo has a whole number of servers, at least 1"),
    ("stage s : fifo(⟨0);\nworkload { arrive batch(1); }\nsession { run s (1); }\nrun { horizon 1; }\n",
     "a fifo has a whole number of servers, at least 1"),
    ("stage s : fifo(⟨);\nworkload { arrive batch(1); }\nsession { run s (1); }\nrun { horizon 1; }\n",
     "unexpected `)`: `fifo` takes its number of servers"),
    # ps ( expr ): an expression is required; a constant capacity is at least 0
    ("stage s : ps(⟨);\nworkload { arrive batch(1); }\nsession { run s (1); }\nrun { horizon 1; }\n",
     "unexpected `)`"),
    ("stage s : ps(⟨-1);\nworkload { arrive batch(1); }\nsession { run s (1); }\nrun { horizon 1; }\n",
     "the capacity is negative (-1)"),
    # delay takes nothing
    ("stage s : delay⟨(2);\nworkload { arrive batch(1); }\nsession { run s (1); }\nrun { horizon 1; }\n",
     "unexpected `(`: a stage declaration ends after its kind"),
    # one `arrive` in a workload, `init` and `turn` of `set` and `observe`
    (D + "workload { arrive batch(1); ⟨arrive batch(2); }\n" + SESSION, "the workload has two `arrive`s"),
    (D + "workload { arrive batch(1); init { ⟨turn; } }\n" + SESSION,
     "`turn;` in the workload's `init` block: `init` holds only `set` and `observe`"),
    (D + "workload { arrive batch(1); init { ⟨run d (1); } }\n" + SESSION,
     "`run` in the workload's `init` block"),
    (D + "workload { arrive batch(1); turn { ⟨end; } }\n" + SESSION,
     "`end;` in the workload's `turn` block: `turn` holds only `set` and `observe`"),
    # §2 and program-reference.txt: a workload's population and rate are constants; §2: "Gaps must be positive
    # and finite" (a constant gap is judged when the program links)
    (D + "workload { arrive batch(⟨0); }\n" + SESSION,
     "the count of `arrive batch` must be an integer of at least 1, not 0"),
    (D + "workload { arrive batch(⟨2.5); }\n" + SESSION,
     "the count of `arrive batch` must be an integer of at least 1, not 2.5"),
    (D + "workload { arrive closed(⟨0); }\n" + SESSION,
     "the population of `arrive closed` must be an integer of at least 1, not 0"),
    (D + "workload { arrive poisson(⟨0); }\n" + SESSION,
     "the arrival rate must be a positive, finite number of arrivals per second, not 0"),
    (D + "workload { arrive poisson(⟨inf); }\n" + SESSION,
     "the arrival rate must be a positive, finite number of arrivals per second, not inf"),
    (D + "workload { arrive renewal(⟨inf); }\n" + SESSION,
     "arrive renewal: the gap is inf; gaps must be positive"),
    (D + "workload { arrive renewal(⟨0); }\n" + SESSION,
     "arrive renewal: the gap is 0; gaps must be positive"),
    # one run block, each field once
    (D + "workload { arrive batch(1); }\nsession { run d (1); }\nrun { horizon 1; ⟨horizon 2; }\n",
     "`horizon` is given twice in the run block"),
    (D + "workload { arrive batch(1); }\nsession { run d (1); }\nrun { horizon 1; }\n⟨run { horizon 2; }\n",
     "a second `run { … }` block"),
]


@pytest.mark.parametrize("src, message", REFUSED, ids=range(len(REFUSED)))
def test_a_declaration_the_grammar_refuses(src, message):
    e = refused(src, message)
    lines = str(e).splitlines()
    # the source line quoted and a caret under the place
    assert len(lines) >= 3 and lines[2].strip() == "^"


H = "pool m { cap 9; }\nstage d : delay;\nworkload { arrive batch(1); }\n"

BINDINGS_REFUSED = [
    # §3, at admission: "The name of a binding the body reads is its own: not a builtin attribute, a pool or
    # stage, a context variable, a let or an attribute the program sets, and not read outside the holds that
    # bind it. A binding reads only the ones before it in its clause." "A binding may not draw (~)". "A binding
    # that reads live state … the body reading it is a parse error".
    ("let x = 2;\n" + H + "session { hold m (x) at admission (⟨x = 1) { run d (x); } }\nrun { horizon 1; }\n",
     "the binding `x` is a `let`"),
    (H + "session { hold m (x) at admission (x = 1) { run d (x); } observe o = ⟨x; }\nrun { horizon 1; }\n",
     "`x` is an `at admission` binding, readable only inside the holds that bind it"),
    (H + "session { set x = 3; hold m (x) at admission (⟨x = 1) { run d (x); } }\nrun { horizon 1; }\n",
     "the binding `x`, which the body reads, is an attribute the program sets"),
    (H + "session { hold m (x) at admission (⟨x = used(m)) { run d (x); } }\nrun { horizon 1; }\n",
     "the body reads `x`, a binding that reads live state"),
    (H + "session { hold m (x) at admission (x = ⟨~exp(1)) { run d (1); } }\nrun { horizon 1; }\n",
     "the binding `x` draws"),
    (H + "session { hold m (y) at admission (y = ⟨x + 1, x = 1) { run d (1); } }\nrun { horizon 1; }\n",
     "the binding `y` reads `x`, bound after it"),
]


@pytest.mark.parametrize("src, message", BINDINGS_REFUSED, ids=range(len(BINDINGS_REFUSED)))
def test_an_at_admission_binding_the_rules_refuse(src, message):
    refused(src, message)


@pytest.mark.parametrize("bound, inlined", [
    # §3: "The bindings are substituted into the header's expressions by the parser … a program that uses the
    # clause has the IR of the one that inlines by hand. A later binding sees the earlier ones."
    ("hold m (y) reserve (x + y) at admission (x = 1 + serial, y = x * 2) { run d (1); }",
     "hold m ((1 + serial) * 2) reserve ((1 + serial) + ((1 + serial) * 2)) { run d (1); }"),
    # "One the body reads is set at its top, set known = e;"
    ("hold m (x) at admission (x = 1 + serial) { run d (x); }",
     "hold m (1 + serial) { set x = 1 + serial; run d (x); }"),
])
def test_an_at_admission_binding_is_substituted(bound, inlined):
    def prog(hold):
        return H + "session { " + hold + " }\nrun { horizon 1; }\n"
    assert ir_bytes(compile_src(prog(bound))) == ir_bytes(compile_src(prog(inlined)))


DEFS_REFUSED = [
    # program-reference.txt, def: "An argument that draws … may be passed only to a parameter the body reads
    # once, and an argument may not read a name the body assigns"; "an argument of statements may not read the
    # clock or live state (now, used(kv))"; a NAME "not defined twice. Defined before its first use".
    ("def two(x) = x + x;\n" + H + "session { observe o = two(⟨~exp(1)); }\nrun { horizon 1; }\n",
     "the argument for `x` of `two` draws, and the body reads `x` 2 times"),
    ("def w(x) { run d (x); observe o = x; }\n" + H + "session { w(⟨now); }\nrun { horizon 1; }\n",
     "an argument of the statements `w` reads the clock"),
    ("def w(x) { run d (x); }\n" + H + "session { w(⟨used(m)); }\nrun { horizon 1; }\n",
     "an argument of the statements `w` reads live state, `used(…)`"),
    ("def w(x) { set k = 1; run d (x); }\n" + H + "session { w(⟨k + 1); }\nrun { horizon 1; }\n",
     "an argument of `w` reads `k`, which its body assigns"),
    ("def g(x) = ⟨f(x);\ndef f(x) = x;\n" + H + "session { observe o = g(3); }\nrun { horizon 1; }\n",
     "`f` is used before its definition"),
    ("def f(x) = x;\ndef ⟨f(y) = y;\n" + H + "session { observe o = f(3); }\nrun { horizon 1; }\n",
     "`f` is defined twice"),
    ("def f(x) = x;\n" + H + "session { observe o = ⟨f(3, 4); }\nrun { horizon 1; }\n",
     "`f` takes one argument, `f(x)`, and got 2"),
]


@pytest.mark.parametrize("src, message", DEFS_REFUSED, ids=range(len(DEFS_REFUSED)))
def test_a_definition_the_rules_refuse(src, message):
    refused(src, message)


def test_a_program_with_definitions_has_the_ir_written_out():
    """program-reference.txt, def: "The AST and the IR hold the expansion, so a program with a def has the IR of
    the one written out"; an argument that is not a reference "is put in inside parentheses"; a reference (a
    stage) "is put in as written"."""
    with_defs = ("def twice(x) = 2 * x;\ndef bump(inc) {\n  set k = k + inc;\n}\n"
                 "def work_on(s, w) {\n  run s (w);\n  observe t = now;\n}\n" + H +
                 "session {\n  set a = 3;\n  set k = twice(a + 1);\n  bump(twice(2));\n  work_on(d, twice(a) - 5);\n}\n"
                 "run { horizon 10; }\n")
    written = (H + "session {\n  set a = 3;\n  set k = 2 * (a + 1);\n  set k = k + (2 * (2));\n"
               "  run d ((2 * (a)) - 5);\n  observe t = now;\n}\nrun { horizon 10; }\n")
    assert ir_bytes(compile_src(with_defs)) == ir_bytes(compile_src(written))


KS = ("stage d : delay;\nstage E : step { budget 4; cost 1; }\nworkload { arrive batch(1); }\n"
      "session { hold m (1) { run d (1); } }\nrun { horizon 1; }\n")

KEYS_REFUSED = [
    # pool-reference.txt, preempt: "A key may not draw, read budget_left(…), or read computed"; queue: keys "may
    # not draw"; docs/language.md, Moments: each context variable at its own moment (waited in queue keys,
    # position in preemption keys, size in eviction keys), a link error elsewhere, never a silent 0
    ("pool m { cap 9; preempt by (⟨~exp(1)); }\n" + KS, "a preemption key may not draw"),
    ("pool m { cap 9; preempt by (⟨budget_left(E)); }\n" + KS, "a preemption key may not read `budget_left(…)`"),
    ("pool m { cap 9; preempt by (⟨computed); }\n" + KS, "a preemption key may not read `computed`"),
    ("pool m { cap 9; queue by (⟨~exp(1)); }\n" + KS, "a pool's queue key may not draw"),
    ("pool m { cap 9; queue by (⟨position); }\n" + KS, "`position` is not readable in a pool's queue key"),
    ("pool m { cap 9; queue by (⟨size); }\n" + KS, "`size` is not readable in a pool's queue key"),
    ("pool m { cap 9; preempt by (⟨waited); }\n" + KS, "`waited` is not readable in a preemption key"),
    ("pool m { cap 9; preempt by (⟨size); }\n" + KS, "`size` is not readable in a preemption key"),
    ("pool m { cap 9; evict by (⟨waited); }\n" + KS, "`waited` is not readable in an eviction key"),
]


@pytest.mark.parametrize("src, message", KEYS_REFUSED, ids=range(len(KEYS_REFUSED)))
def test_a_pool_key_the_moments_refuse(src, message):
    refused(src, message)
