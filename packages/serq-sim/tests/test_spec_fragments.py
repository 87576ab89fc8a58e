"""Every program fragment of the specification pages as a conformance case. spec_fragments.py holds them,
each with the page and line it comes from (language.txt, pool-reference.txt, program-reference.txt); other
implementations of the language are checked with the same code, so each fragment is run here or by an
earlier test that runs it as written.

Counts: 251 fragments found (language.txt 200, pool-reference.txt 26, program-reference.txt 25); 5 of the
other dialect (`fn main()`, `pool NAME on ENGINE`, `pool NAME on ENGINE.DEVICE`, `NAME[N] cap c;` in an
`engine`, `cost(…)`: each is told as another dialect's construct at its first word; `admit via` is this
language's pool option, docs/language.md); 65 already covered by earlier tests (test_conformance_*,
test_sugar, test_spec_*: each named in the data and checked to define the test and to hold in its code,
not in a docstring or comment, the fragment as written or the concrete instance named), and 125 written with metavariables (§2's grammar, one production a line, the expressions' draws
and observables, the serving forms' table), whose concrete instances test_conformance_syntax compiles
(PRODUCTIONS), holds to their kernel's IR (SUGAR) or refuses (REFUSALS); 56 newly covered here: 44 of this dialect, each completed
into the smallest program that contains it unchanged (compiled, run to its horizon on both tiers with
byte-identical reports, its IR byte-identical to the plainly written equivalent where the prose says what
it stands for, the outcome the prose states computed by hand; five are command lines or a file one
writes, run as written), and 12 table cells in the pages' typography (`−`, `·`, `ℓ`, `φ`, subscripts,
`pool reqs { cap max_seqs }` and `step { budget B }` without their `;`, a pull's kernel written with its
long names inside an entry): each is refused with the message that says what to write, and the cell
written in this language compiles and runs.

Disagreements: 3, all messages, fixed in serq-frontend. The kernel of a pull's read written inside the
reader's entry (`load D.kv[j] (…)`) was told "`D.kv` is not a pool of `D`", which it is (now: "`D.kv` is
`D`'s own pool, and within its entries it is `kv`"). Two names side by side (`min(prev prompt, …)`) were
told "unexpected `,` (expected in)" (now: "two names side by side, `prev prompt`; an operator or a `,` is
missing between them", or a missing `;` when the second begins a statement). A run's stage in an entry
that is no stage (`run nic (…)` in a queue with a `nic`) was told as reading a session attribute `nic`
(now: "unknown stage `nic` (did you mean `D.nic`?)"; its index is still read as the body reads); beside
it, an entry's read of a name the session's side does not set was told as a session attribute set outside
the queue (now the words claim no attribute). The
pages' typography and their shorthand (a `c` the vLLM fragments read and do not set, a `run { arrivals
N; }` without its horizon, a `use "../../lib/vllm.sq"` outside the program's folder) are choices
docs/language.md states.
"""

from __future__ import annotations

import ast
import functools
import io
import json
import math
import re
import shutil
import tokenize
from pathlib import Path

import msgspec
import pytest
import serq_frontend
import serq_ir
import serq_sim
from serq_report.json import encode_json
from spec_fragments import FRAGMENTS, Fragment

pytestmark = pytest.mark.timeout(60)

PACKAGES = Path(__file__).resolve().parents[2]
BY_KEY = {f.key: f for f in FRAGMENTS}


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def _pattern(text: str) -> re.Pattern:
    """The fragment as a pattern: any run of blanks matches any other (or none, beside punctuation), and
    `…` stands for any text."""
    words = _norm(text).replace("…", "\0").split(" ")
    return re.compile(r"\s*".join(re.escape(w) for w in words).replace("\\\0", "\0").replace("\0", ".*?"), re.S)


def _holds(text: str, source: str) -> bool:
    return _pattern(text).search(source) is not None


def _ir(program) -> bytes:
    return serq_ir.encode(msgspec.structs.replace(program, source=None), spans=False)


def _compile(src: str, *, defs=(), sets=None, path: Path | None = None):
    if path is not None:
        return serq_frontend.compile(path=str(path), sets=sets or {}, defs=dict(defs))
    return serq_frontend.compile(source=src, sets=sets or {}, defs=dict(defs))


def _both_tiers(program, monkeypatch, **kw):
    """The report on the tier serQ picks and on the general engine, byte-identical (with every observe's
    samples); returns it and {observe: [(session, time, value), …] in time, then session order}."""
    out = []
    for tier in ("", "general"):
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        else:
            monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        r = serq_sim.run(program, check_invariants=True, **kw)
        samples = {n: tuple(getattr(o, c).tobytes() for c in ("values", "times", "sessions", "turns"))
                   for n, o in r.observes.items()}
        out.append((encode_json(r), samples, r))
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    assert out[0][0] == out[1][0]
    assert out[0][1] == out[1][1]
    r = out[1][2]
    obs = {n: sorted(zip(o.sessions.tolist(), o.times.tolist(), o.values.tolist()), key=lambda x: (x[1], x[0]))
           for n, o in r.observes.items()}
    return r, obs


def _library_layout(f: Fragment, tmp_path: Path) -> Path:
    """program-reference.txt's use: the program two folders below the library it names by its path."""
    import serq_vllm

    lib = tmp_path / "lib"
    lib.mkdir(parents=True)
    shutil.copy(Path(serq_vllm.__file__).parent / "lib" / "vllm.sq", lib / "vllm.sq")
    folder = tmp_path / "examples" / "multi-turn"
    folder.mkdir(parents=True)
    (folder / "prog.sq").write_text(f.program)
    return folder / "prog.sq"


def _program_of(f: Fragment, tmp_path: Path, monkeypatch, *, library_folder: bool = True):
    """The fragment's program; one that uses a library by its path is laid out as its page says, with the
    library's folder among the folders a program may read (SERQ_PATH) unless ``library_folder`` is false."""
    if 'use "../../lib/' not in f.program:
        return _compile(f.program, defs=f.defs)
    path = _library_layout(f, tmp_path)
    if library_folder:
        monkeypatch.setenv("SERQ_PATH", str(tmp_path / "lib"))
    else:
        monkeypatch.delenv("SERQ_PATH", raising=False)
    return _compile(f.program, defs=f.defs, path=path)


def _refusal(src: str, **kw) -> str:
    with pytest.raises(serq_frontend.CompileError) as e:
        _compile(src, **kw)
    text = str(e.value)
    assert "Traceback" not in text
    return text.splitlines()[0]


def _values(obs, name):
    return [v for _, _, v in obs[name]]


def _at(obs, name):
    return [(s, t) for s, t, _ in obs[name]]


# -- the data ------------------------------------------------------------------------------------------------


def test_the_counts_in_the_docstring():
    by = {s: [f for f in FRAGMENTS if f.status == s] for s in ("covered", "form", "later", "new", "notation")}
    assert sum(len(v) for v in by.values()) == len(FRAGMENTS)
    assert len({f.key for f in FRAGMENTS}) == len(FRAGMENTS)
    head = _norm(__doc__)
    pages = {p: sum(f.page == p for f in FRAGMENTS) for p in ("language.txt", "pool-reference.txt", "program-reference.txt")}
    assert (f"Counts: {len(FRAGMENTS)} fragments found (language.txt {pages['language.txt']}, pool-reference.txt "
            f"{pages['pool-reference.txt']}, program-reference.txt {pages['program-reference.txt']}); "
            f"{len(by['later'])} of the other dialect") in head
    assert f"{len(by['covered'])} already covered by earlier tests" in head
    assert f"and {len(by['form'])} written with metavariables" in head
    assert f"{len(by['new']) + len(by['notation'])} newly covered here: {len(by['new'])} of this dialect" in head
    assert f"and {len(by['notation'])} table cells" in head
    for f in FRAGMENTS:
        assert f.page in ("language.txt", "pool-reference.txt", "program-reference.txt")
        assert f.line > 0 and f.text


def test_every_outcome_is_a_test_here():
    named = {f.outcome for f in FRAGMENTS if f.outcome}
    assert named <= {n for n in globals() if n.startswith("test_")}
    assert all(f.status == "new" for f in FRAGMENTS if f.outcome)


# -- fragments earlier tests run ---------------------------------------------------------------------------


@functools.cache
def _code(path: str) -> str:
    """A test file's code: its docstrings and comments left out (a fragment quoted there is not run)."""
    source = (PACKAGES / path).read_text(encoding="utf-8")
    tree = ast.parse(source)
    drop: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
                    first.value.value, str):
                drop.update(range(first.lineno, first.end_lineno + 1))
    kept = "".join("\n" if i in drop else line for i, line in enumerate(source.splitlines(keepends=True), 1))
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(kept).readline) if t.type != tokenize.COMMENT]
    return tokenize.untokenize(tokens)


@pytest.mark.parametrize("key", [f.key for f in FRAGMENTS if f.status in ("covered", "form")])
def test_an_earlier_test_runs_it(key):
    """The named file defines the named test (or the program its tests run) and holds the fragment in its
    code, not in a docstring or a comment: as written, or, where the fragment has metavariables or the test
    is written over parameters, the concrete instance named (a production's: its minimal program's)."""
    f = BY_KEY[key]
    path, name = f.covered
    source = (PACKAGES / path).read_text(encoding="utf-8")
    assert re.search(rf"(?m)^(def {re.escape(name)}\(|{re.escape(name)} = )", source), (path, name)
    assert _holds(f.instance or f.text, _code(path)), (f.key, path)


# -- the other dialect --------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [f.key for f in FRAGMENTS if f.status == "later"])
def test_the_other_dialect_is_told_as_such(key):
    """docs/language.md (Diagnostics): a construct of another dialect is named at its first word."""
    f = BY_KEY[key]
    assert _holds(f.text, f.program)
    message = _refusal(f.program)
    assert f.refused in message and "not part of this language" in message


# -- fragments run here -------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [f.key for f in FRAGMENTS if f.status == "new"])
def test_the_fragment_in_its_smallest_program(key, monkeypatch, tmp_path):
    f = BY_KEY[key]
    if f.text.startswith(("serq ", "--", "gauge/")):
        assert f.outcome  # a command line, or a file one writes: its outcome test runs it as written
    else:
        source = f.program.replace(f.unclosed, f.unclosed.rsplit("\n", 1)[0]) if f.unclosed else f.program
        assert _holds(f.text, source) or (f.plain and _holds(f.text, f.plain)), f.key
    if f.refused:
        assert f.refused in _refusal(f.program, defs=f.defs)
        return
    program = _program_of(f, tmp_path, monkeypatch)
    _both_tiers(program, monkeypatch, horizon=f.horizon)
    if f.plain:
        assert _ir(program) == _ir(_compile(f.plain))


@pytest.mark.parametrize("key", [f.key for f in FRAGMENTS if f.status == "notation"])
def test_a_table_cell_in_the_pages_typography(key, monkeypatch):
    """The cell as printed is refused with the one message that says what to write; written in ASCII it
    compiles and runs."""
    f = BY_KEY[key]
    assert _holds(f.text, f.program)
    assert f.refused in _refusal(f.program)
    _both_tiers(_compile(f.plain), monkeypatch)


# -- the outcomes the prose states, by hand ------------------------------------------------------------------




def test_renewal_2_a_constant_gap_first_after_one(monkeypatch):
    # renewal(2): a constant two-second gap, the first arrival after one gap: 2, 4, 6, 8 before 9
    _, o = _both_tiers(_compile(BY_KEY["renewal-2"].program), monkeypatch)
    assert _at(o, "at") == [(0, 2.0), (1, 4.0), (2, 6.0), (3, 8.0)]




def test_arrivals_n_ends_when_n_sessions_drained(monkeypatch):
    # run { arrivals N; } with N = 3 and gaps of 1: arrivals at 1, 2, 3, each runs 2 s, the last ends at 5;
    # the horizon, the run's deadline, is given from outside (the fragment has none)
    r, _ = _both_tiers(_compile(BY_KEY["run-arrivals-N"].program), monkeypatch, horizon=50)
    assert r.result.end == 5.0 and r.result.arrivals == 3 and r.result.ended == 3
    assert r.result.horizon == 50














def test_the_vllm_hold_by_hand(monkeypatch):
    """Budget 8, cost 1, block 4, prompt 10, o 3, two sessions at 0. [0,1]: s0 admitted (hit 0, units
    min(10, 0 + 8) = 8), prefills 8; no budget left, s1 waits. [1,2]: s0 prefills 2 (grows to 12), s1
    admitted with the 6 left (units 6, 8 allocated), prefills 6; s0's prefill done at 2. [2,3]: s0 decodes
    1, s1 prefills 4 (done at 3). [3,4]: s0's last decode (done at 4), s1 decodes 1. [4,5]: s1's last (5).
    The same with reqs uncapped (the §7 cell `pool reqs { admit via engine; }`) and with the §7 units
    min(known, hit + budget_left(engine))."""
    for key in ("vllm-hold", "vllm-admit-via", "vllm-units"):
        r, o = _both_tiers(_compile(BY_KEY[key].program), monkeypatch)
        assert _at(o, "r") == [(0, 4.0), (1, 5.0)], key
        assert _values(o, "r") == [4.0, 5.0], key
        kv = next(p for p in r.result.pools if p.name == "kv")
        assert kv.admissions == 2 and kv.preemptions == 0, key


def test_a_lease_ends_after_t_seconds(monkeypatch):
    # lease P (3): the 2 units stay held after the scope (t = 1), and at 1 + 3 the lease ends and cache (2)
    # applies: at 6, used 0 and 2 cached
    _, o = _both_tiers(_compile(BY_KEY["lease-form"].program), monkeypatch)
    assert (_values(o, "held"), _values(o, "later"), _values(o, "kept")) == ([2.0], [0.0], [2.0])


def test_the_prefill_queue_by_hand(monkeypatch):
    """Two members, one request slot each (max_seqsP 1), budget 8, cost 1, prompt 12: s0 to P[0], s1 to
    P[1], s2 to P[0]. Each admitted request takes min(12, 0 + 8) = 8 units (reserve 12), prefills 8 then 4:
    done at 2; s2 waits for P[0]'s slot, admitted at 2 (its kv beside s0's lease of 12 of 64), done at 4."""
    r, o = _both_tiers(_compile(BY_KEY["queue-P"].program), monkeypatch)
    assert _at(o, "done") == [(0, 2.0), (1, 2.0), (2, 4.0)]
    assert _values(o, "done") == [2.0, 2.0, 4.0]
    reqs = {p.index: p.admissions for p in r.result.pools if p.name == "P.reqs"}
    assert reqs == {0: 2, 1: 1}


def test_a_queues_stage_by_its_name(monkeypatch):
    # P[1]'s entry runs on P[1]'s own stage (4 tokens, one iteration: done at 1), and after it the stage has
    # no work and the slot is free
    r, o = _both_tiers(_compile(BY_KEY["queue-work"].program), monkeypatch)
    assert o["w"] == [(0, 1.0, 0.0)]
    assert {s.index: s.completions for s in r.result.stages if s.name == "P"} == {0: 0, 1: 1}


def test_the_pull_read_by_hand(monkeypatch):
    # the prefill runs 9 on P's fifo (9 s); the read: D's latency 0.5, then 8 units over P's NIC (ps 4) and
    # D's (ps 2), max-min: rate 2, 4 s: the response is 9 + 0.5 + 4
    _, o = _both_tiers(_compile(BY_KEY["nic"].program), monkeypatch)
    assert (_values(o, "prefilled"), _values(o, "response")) == ([9.0], [13.5])


def test_the_lease_of_the_prefiller_by_hand(monkeypatch):
    """prompt 8, o 3, block 4, both engines budget 16 and cost 1, setup 0.5, both NICs ps(10), max-min.
    P's iteration [0, 1) prefills 8: the slot goes, kvP's 8 stay leased (used 8 at 1). kvD and reqsD are
    admitted at 1; setup [1, 1.5); the read of 8 over both NICs at 10, [1.5, 2.3), loads 7 into kvD and
    takes the lease (kvP caches its 8); D: the prefill token [2.3, 3.3), two decodes: done at 5.3."""
    _, o = _both_tiers(_compile(BY_KEY["lease-nixl"].program), monkeypatch)
    assert o["leased"] == [(0, 1.0, 8.0)]
    [(session, at, done)] = o["done"]
    assert session == 0 and math.isclose(at, 5.3) and math.isclose(done, 5.3)
    assert o["kept"] == [(0, at, 8.0)]


def test_transfer_on_two_named_stages(monkeypatch):
    # n = 3 over L[1] (ps 1) and M[0] (ps 4), max-min: rate 1, done at 3
    _, o = _both_tiers(_compile(BY_KEY["transfer-on-links"].program), monkeypatch)
    assert _values(o, "t") == [3.0]




def test_a_preempted_hold_knows_what_it_computed(monkeypatch):
    """cap 9, prompt 4, o 6: s0 and s1 hold 4 each at 0 (known 4: computed 0 < 4) and load their 4. At 1
    s0 grows 2 (10 > 9): the victim is s1, the last admitted, at position 4; it waits for s0, whose decode
    runs o - 1 = 5 (done at 6). s1 executes the hold again at 6 with computed 4: known = 4 + 1 = 5, and
    decodes o - 1 - (5 - 4) = 4 after its load and 2 s: done at 12."""
    r, o = _both_tiers(_compile(BY_KEY["known"].program), monkeypatch)
    assert o["k"] == [(0, 0.0, 4.0), (1, 0.0, 4.0), (1, 6.0, 5.0)]
    assert o["r"] == [(0, 6.0, 6.0), (1, 12.0, 12.0)]
    assert next(p for p in r.result.pools if p.name == "kv").preemptions == 1


def test_step_budget_b_cost_c(monkeypatch):
    # budget 4, cost 1: a prefill of 6 takes two iterations
    _, o = _both_tiers(_compile(BY_KEY["step-form"].program), monkeypatch)
    assert _values(o, "t") == [2.0]






def test_admit_via_is_this_languages_pool_option(monkeypatch):
    # pool-reference.txt refuses the option; this language's pool takes it (docs/language.md): the engine
    # admits one request per slot, at the start of each iteration: done at 1 and 2
    _, o = _both_tiers(_compile(BY_KEY["admit-via-ours"].program), monkeypatch)
    assert o["t"] == [(0, 1.0, 1.0), (1, 2.0, 2.0)]


def test_set_overrides_a_let(monkeypatch):
    # let NAME = expr; folds to 2; --set NAME=5 makes it 5
    f = BY_KEY["let-name"]
    _, o = _both_tiers(_compile(f.program), monkeypatch)
    assert _values(o, "t") == [2.0]
    _, o = _both_tiers(_compile(f.program, sets={"NAME": 5}), monkeypatch)
    assert _values(o, "t") == [5.0]


def test_def_given_from_outside():
    # def service() = ~exp(1); run with --def service='~erlang(4, 1)' is the program written with that body,
    # and without it the one written with ~exp(1)
    f = BY_KEY["def-service"]
    assert _ir(_compile(f.program, defs=f.defs)) == _ir(_compile(f.plain))
    assert _ir(_compile(f.program)) == _ir(_compile(f.plain.replace("~erlang(4, 1)", "~exp(1)")))


def test_the_hit_on_a_decoder_by_hand(monkeypatch):
    # bs 4: before the decode nothing is cached (0); after it, D[1].kv keeps 10 rounded down to blocks, 8;
    # prompt 6: reusable 4, min(8, 4) = 4; prompt 30: reusable 28, min(8, 28) = 8
    _, o = _both_tiers(_compile(BY_KEY["set-hitD"].program), monkeypatch)
    assert _values(o, "h") == [0.0, 4.0, 8.0]


def test_the_vllm_library_used_by_its_path(monkeypatch, tmp_path):
    """use "../../lib/vllm.sq" from a program two folders below lib/, with lib/ a library folder
    (SERQ_PATH; a use reads only inside the folders a program may read, docs/language.md): the library's
    definitions are the program's, the same IR as the program that names the library on the library path.
    Budget 16, prompt 8, o 3: both requests are admitted and prefill in the first iteration (first token at
    1), then decode o - 1 = 2: done at 3. Outside the library folders the use is refused, and given as text
    a relative use has no folder to be relative to."""
    f = BY_KEY["use-vllm"]
    with pytest.raises(serq_frontend.CompileError, match="outside the folders a program may read"):
        _program_of(f, tmp_path / "outside", monkeypatch, library_folder=False)
    program = _program_of(f, tmp_path, monkeypatch)
    on_path = _compile(f.program.replace('use "../../lib/vllm.sq";', 'use "vllm.sq";'))
    assert _ir(program) == _ir(on_path)
    _, o = _both_tiers(program, monkeypatch)
    # the library's vllm_request observes `response` too (its observes are the program's): two per request
    assert o["response"] == [(0, 3.0, 3.0), (0, 3.0, 3.0), (1, 3.0, 3.0), (1, 3.0, 3.0)]
    assert "no such library" in _refusal(f.program)


def test_a_gauge_of_a_member(monkeypatch):
    # used(kv[0]): 3 on [0, 2), 0 on [2, 4): the time average 1.5, least 0, greatest 3
    r, _ = _both_tiers(_compile(BY_KEY["gauge-index"].program), monkeypatch)
    g = r.result.gauges["g"]
    assert (g.mean, g.min, g.max) == (1.5, 0.0, 3.0)


def test_the_pool_references_command(serq, tmp_path):
    """serq run model.sq --horizon 10 on the pool reference's program (in this dialect: its items at the
    top level, the workload's session requesting the server): s0 and s1 done at 2, s2 waits for a slot,
    done at 4; the report's end is the horizon the command gave."""
    (tmp_path / "model.sq").write_text(BY_KEY["run-horizon-10"].program)
    out = serq("run", str(tmp_path / "model.sq"), "--horizon", "10", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["horizon"] == 10 and report["end"] == 10
    response = report["observes"]["response"]
    assert response["count"] == 3 and math.isclose(response["mean"], 8 / 3)
    # the page's program as printed, in the other dialect: one message at its first word, status 1
    (tmp_path / "other.sq").write_text(BY_KEY["fn-main"].program)
    out = serq("run", str(tmp_path / "other.sq"), "--horizon", "10")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"{tmp_path / 'other.sq'}:1:1: error: `fn` is not part of this language")


# -- the two messages the fragments found wrong --------------------------------------------------------------


def test_a_queues_own_pool_by_its_long_name_in_an_entry():
    """§2 writes the read a pull stands for in the kernel's long names, `load D.kv[j] (…)`; inside D's entry
    that pool is D's own, named `kv` there. It was told "`D.kv` is not a pool of `D`"; it is told what it
    is, at the name, with the line and a caret. Another queue's pool keeps its words."""
    f = BY_KEY["pull-kernel"]
    with pytest.raises(serq_frontend.CompileError) as e:
        _compile(f.program)
    lines = str(e.value).splitlines()
    line = f.program.splitlines().index(next(x for x in f.program.splitlines() if "load D.kv[j]" in x)) + 1
    col = f.program.splitlines()[line - 1].index("D.kv[j]") + 1
    assert lines[0] == (f"<source>:{line}:{col}: error: `load D.kv` in `D.decode`: `D.kv` is `D`'s own pool, and "
                        "within its entries it is `kv` (each member's own)")
    assert lines[2].index("^") == lines[1].index("D.kv[j]")
    one = "queue D : decode { pool kv { cap 9; } serve fifo; decode (p) { hold D.kv (p) { run (1); } } }\n"
    one += "workload { arrive batch(1); }\nsession { D.decode (2); end; }\n"
    assert _refusal(one).endswith("`hold D.kv` in `D.decode`: `D.kv` is `D`'s own pool, and within its entries it "
                                  "is `kv`")
    _compile(one.replace("hold D.kv (p)", "hold kv (p)"))
    other = "queue P : prefill { pool kv { cap 9; } serve fifo; prefill (p) { hold kv (p) { run (p); } } }\n" + one
    assert _refusal(other.replace("hold D.kv (p)", "hold P.kv (p)")).endswith(
        "`hold P.kv` in `D.decode`: `P.kv` is not a pool of `D`; an entry holds only its queue's own pools and the "
        "one its `from` names")


def test_two_names_side_by_side():
    """§7's `reuse (floor(min(prev prompt, prompt − 1)/bs)·bs)`: `prev prompt` read as an aggregate's start
    was told "unexpected `,` (expected in)"; the two names are told at the second. An aggregate missing its
    `in` is told the aggregate's form (it said "(expected in)")."""
    src = "workload { arrive batch(1); }\nsession { set a = 1; set b = 2; observe x = min(a b, 2); end; }\n"
    assert _refusal(src) == ("<source>:2:51: error: unexpected `b`: two names side by side, `a b`; an operator or a "
                             "`,` is missing between them (an aggregate is `max j in n (e)`)")
    assert _refusal("session { set x = a b; end; }\n").startswith("<source>:1:21: error: unexpected `b`: two names")
    said = ": an aggregate names its index, then `in` and the count, `max j in n (e)` (or `min`, `sum`)"
    assert _refusal("session { set x = max j 2 (j); end; }\n") == "<source>:1:25: error: unexpected `2`" + said
    assert _refusal("session { set x = sum j; end; }\n") == "<source>:1:24: error: unexpected `;`" + said
    # a statement's word second: the `;` before it is what is missing (it was "unexpected `kv` (expected in)")
    assert _refusal("pool kv { cap 2; }\nsession { set t = now hold kv (1) { } end; }\n") == (
        "<source>:2:22: error: missing `;` (found `hold` next)")


def test_the_command_lines_set_and_def(serq, tmp_path):
    """program-reference.txt: a let is overridable from the command line (--set NAME=value), and an
    expression definition's body can be given from outside (--def service='~erlang(4, 1)', the quotes the
    shell's): the program is then the one written with that body."""
    f = BY_KEY["set-cli"]
    (tmp_path / "p.sq").write_text(f.program)
    for argv, t in (((), 1.0), (("--set", "NAME=5"), 5.0)):
        out = serq("run", str(tmp_path / "p.sq"), *argv, "--json")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["observes"]["w"]["mean"] == t
    g = BY_KEY["def-cli"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "p.sq").write_text(g.program)
    (tmp_path / "b" / "p.sq").write_text(g.plain)
    given = serq("ir", "--no-spans", str(tmp_path / "a" / "p.sq"), "--def", "service=~erlang(4, 1)")
    written = serq("ir", "--no-spans", str(tmp_path / "b" / "p.sq"))
    assert given.returncode == 0 and written.returncode == 0, (given.stderr, written.stderr)
    a, b = json.loads(given.stdout), json.loads(written.stdout)
    assert a.pop("source") != b.pop("source")
    assert a == b


def test_an_entrys_index_reads_as_its_body(monkeypatch):
    """§2: every index an entry writes (run nic[k]) reads as the body does: k set in the body, 1 - self = 1
    for D[0], so the 4 units run on nic[1] (ps 2): 2 s, nic[0] idle. Read from the session, k is refused,
    and a run's stage that is no stage is told as one (it was told as a session attribute read)."""
    f = BY_KEY["entry-index"]
    r, o = _both_tiers(_compile(f.program), monkeypatch)
    assert o["t"] == [(0, 2.0, 2.0)]
    assert {s.index: s.completions for s in r.result.stages if s.name == "nic"} == {0: 0, 1: 1}
    outside = f.program.replace("set k = 1 - self; ", "").replace("  D[0].decode (4);", "  set k = 1;\n  D[0].decode (4);")
    assert "`D.decode` reads `k`, a session attribute set outside the queue" in _refusal(outside)
    own = f.program.replace("stage nic[2] : ps(2);\n", "").replace("serve fifo;", "serve fifo; nic ps(2);")
    line = own.splitlines().index(next(x for x in own.splitlines() if "run nic[k]" in x)) + 1
    col = own.splitlines()[line - 1].index("nic[k]") + 1
    assert _refusal(own) == f"<source>:{line}:{col}: error: unknown stage `nic` (did you mean `D.nic`?)"
    none = f.program.replace("stage nic[2] : ps(2);\n", "")
    assert _refusal(none) == f"<source>:{line}:{col}: error: unknown stage `nic`"


def test_arrivals_on_the_command_line(serq, tmp_path):
    """§2: the CLI accepts --arrivals N for run and ir, overriding the source: 3 arrivals 1 s apart, each
    2 s: the run ends at 5 with 3 sessions drained, and the IR is the program's with `arrivals 3;`."""
    f = BY_KEY["cli-arrivals"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "p.sq").write_text(f.program)
    (tmp_path / "b" / "p.sq").write_text(f.program.replace("horizon 50;", "horizon 50; arrivals 3;"))
    out = serq("run", str(tmp_path / "a" / "p.sq"), "--arrivals", "3", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert (report["end"], report["arrivals"], report["ended"], report["horizon"]) == (5, 3, 3, 50)
    assert report["observes"]["w"]["mean"] == 2
    given = serq("ir", "--no-spans", str(tmp_path / "a" / "p.sq"), "--arrivals", "3")
    written = serq("ir", "--no-spans", str(tmp_path / "b" / "p.sq"))
    a, b = json.loads(given.stdout), json.loads(written.stdout)
    a.pop("source")
    b.pop("source")
    assert a == b and a["run"] == {"horizon": 50.0, "arrivals": 3}


def test_a_gauges_change_points(serq, tmp_path):
    """§3 Gauges: --dump DIR writes each gauge's change points as gauge/NAME.csv (time,value): used(kv[0])
    is 3 from 0 (s0's hold) and 0 from 2."""
    (tmp_path / "p.sq").write_text(BY_KEY["gauge-dump"].program)
    out = serq("run", str(tmp_path / "p.sq"), "--dump", str(tmp_path / "d"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "d" / "gauge" / "g.csv").read_text() == "time,value\n0.0,3.0\n2.0,0.0\n"


def test_a_name_nothing_sets_read_in_an_entry():
    """An entry's read of a name the session's side does not set was told as "a session attribute set
    outside the queue" (as `run nic (…)` was): the words say what an entry reads and claim no attribute;
    one the workload's turn sets keeps them."""
    head = "queue D : decode { pool kv { cap 9; } serve fifo; decode (p) { hold kv (1) { run (p + x); } } }\n"
    tail = "session { turn; D.decode (1); end; }\n"
    assert _refusal(head + "workload { arrive batch(1); turn { set y = 1; } }\n" + tail) == (
        "<source>:1:87: error: `D.decode` reads `x`; an entry reads its parameters, what it sets, `cached` and "
        "the request's hidden attributes")
    assert _refusal(head + "workload { arrive batch(1); turn { set x = 1; } }\n" + tail) == (
        "<source>:1:87: error: `D.decode` reads `x`, a session attribute set outside the queue; an entry reads its "
        "parameters, what it sets, `cached` and the request's hidden attributes")


def test_a_gauge_of_used_is_the_pools_time_average_used(monkeypatch):
    """§3 Gauges: gauge u = used(kv); is the pool's time-average used. s0 holds 1 for 2 s, s1 3 for 1 s: used
    4 on [0, 1), 1 on [1, 2), 0 on [2, 4]: the average 5 / 4 = 1.25 for both, least 0, greatest 4."""
    r, _ = _both_tiers(_compile(BY_KEY["gauge-used"].program), monkeypatch)
    u = r.result.gauges["u"]
    kv = next(p for p in r.result.pools if p.name == "kv")
    assert (u.mean, u.min, u.max) == (1.25, 0.0, 4.0)
    assert kv.used == 1.25


def test_renewal_h2_gaps(monkeypatch):
    """§2: renewal(~h2(mean, cv2)) supplies the gaps, each positive, and the first arrival comes after one
    gap, not at 0; mean 2 over 200 s is about 100 arrivals (cv2 4: a count within 2.5 of its standard
    deviations, about 20, of 100)."""
    _, o = _both_tiers(_compile(BY_KEY["renewal-h2"].program), monkeypatch)
    times = [t for _, t, _ in o["at"]]
    assert times[0] > 0
    assert all(b > a for a, b in zip(times, times[1:]))
    assert 50 < len(times) < 150
