"""References the schema cannot check: each bad one is one error naming the place."""

from __future__ import annotations

import json

import pytest
import serq_ir
from ir_programs import everything, mm1
from serq_ir.validate import validate


def mutate(program, change) -> str:
    d = json.loads(serq_ir.encode(program, spans=False))
    change(d)
    return json.dumps(d)


def set_(path, value):
    def change(d):
        *head, last = path
        for k in head:
            d = d[k]
        d[last] = value
    return change


ONE = {"kind": "Num", "value": 1.0}

CASES = {
    "attribute slot": (set_(["session", 0, "slot"], 99),
                       "attribute slot 99 does not exist (the program has 5) - at '$.session[0].slot'"),
    "stage": (set_(["session", 1, "stages", 0, "stage"], 3),
              "stage 3 does not exist (the program has 1) - at '$.session[1].stages[0].stage'"),
    "observe": (set_(["session", 2, "observe"], 1),
                "observe 1 does not exist (the program has 1) - at '$.session[2].observe'"),
    "family size": (set_(["stages", 0, "size"], 0),
                    "a family has at least one member, not 0 - at '$.stages[0].size'"),
    "builtins": (set_(["attributes", 0, "name"], "t"),
                 "the first attributes must be the built-in serial, turn_no, cached, computed - at '$.attributes'"),
    "arrivals": (set_(["run", "arrivals"], 0), "arrivals is a whole number from 1 to 2**53 - 1 (9007199254740991, where a double tells whole numbers apart), not 0 - at '$.run.arrivals'"),
    # a set of turn_no (NaN) reached the workload stream's reseeding as a ValueError traceback
    "set of a built-in": (set_(["session", 0, "slot"], 1),
                          "the built-in attribute 'turn_no' is kept by the simulator; a program does not write it"
                          " - at '$.session[0].slot'"),
    "empty run": (set_(["session", 1, "stages"], []), "a run names at least one stage - at '$.session[1].stages'"),
    "servers": (set_(["stages", 0, "kind", "servers"], -1.0),
                "a fifo has a whole number of servers, at least 1, not -1.0 - at '$.stages[0].kind.servers'"),
    "fractional servers": (set_(["stages", 0, "kind", "servers"], 1.5),
                           "a fifo has a whole number of servers, at least 1, not 1.5 - at '$.stages[0].kind.servers'"),
    "rate": (set_(["workload", "arrive", "rate"], -2.0),
             "an arrival rate is positive and finite, not -2.0 - at '$.workload.arrive.rate'"),
    "infinite rate": (set_(["workload", "arrive", "rate"], "inf"),
                      "an arrival rate is positive and finite, not inf - at '$.workload.arrive.rate'"),
    # found by fuzzing the IR (test_fuzz_ir.py): each was a TypeError, IndexError or AttributeError in a run
    "draw arguments": (set_(["session", 1, "work", "args"], []),
                       "`~exp` takes one argument, `~exp(mean)`, and got none - at '$.session[1].work.args'"),
    "function arguments": (set_(["session", 1, "work"], {"kind": "Call", "fn": "pow", "args": [ONE]}),
                           "`pow` takes two arguments, `pow(x, y)`, and got 1 - at '$.session[1].work.args'"),
    "min of nothing": (set_(["session", 1, "work"], {"kind": "Call", "fn": "min", "args": []}),
                       "`min` takes one argument at least, `min(a, …)`, and got none - at '$.session[1].work.args'"),
    "observable of a stage": (set_(["session", 1, "work"], {"kind": "Observable", "name": "used",
                                                             "target": {"kind": "StageRef", "stage": 0}}),
                              "used(…) reads a pool, not a stage - at '$.session[1].work.target'"),
    "observable arguments": (set_(["session", 1, "work"], {"kind": "Observable", "name": "price",
                                                            "target": {"kind": "StageRef", "stage": 0}}),
                             "`price` takes two arguments after its stage, `price(s, s_hit, ds)`, and got none - at '$.session[1].work.args'"),
    "attribute without a session": (set_(["stages", 0, "kind"], {"kind": "Ps", "capacity": {"kind": "Attr",
                                                                                             "slot": 4}}),
                                    "a ps stage's capacity has no session: it may not read the attribute "
                                    "'t0' - at '$.stages[0].kind.capacity'"),
    "extension of a built-in kind": (set_(["stages", 0, "kind"], {"kind": "Extension", "name": "Fifo"}),
                                     "an extension names a plugin's kind, not the built-in 'Fifo' (write the "
                                     "node {\"kind\": \"Fifo\", …} itself) - at '$.stages[0].kind.name'"),
    "workload block": (set_(["workload", "turn"], [{"kind": "End"}]),
                       "a workload turn block only sets, observes and branches over them, not End - at "
                       "'$.workload.turn[0]'"),
    "workload block, in a branch": (set_(["workload", "init"], [{"kind": "Branch", "guard": ONE, "then": [],
                                                                 "orelse": [{"kind": "End"}]}]),
                                    "a workload init block only sets, observes and branches over them, not End - "
                                    "at '$.workload.init[0].orelse[0]'"),
    # values the frontend refuses at link time are refused in a file too (serq_ir.rules)
    "draw domain": (set_(["session", 1, "work"], {"kind": "Draw", "dist": "uniform", "args": [
        {"kind": "Num", "value": 5.0}, ONE]}),
        "~uniform(5, 1): the low bound is above the high bound - at '$.session[1].work.args'"),
    "bernoulli above one": (set_(["session", 1, "work"], {"kind": "Draw", "dist": "bernoulli", "args": [
        {"kind": "Num", "value": 2.0}]}), "~bernoulli(2): a probability is between 0 and 1 - at '$.session[1].work.args'"),
    "negative ps capacity": (set_(["stages", 0, "kind"], {"kind": "Ps", "capacity": {"kind": "Num", "value": -1.0}}),
                             "the capacity is negative (-1); a ps stage's capacity is at least 0 - at "
                             "'$.stages[0].kind.capacity'"),
    "choice among no candidate": (set_(["session", 1], {"kind": "Choose", "slot": 4, "n": {"kind": "Num", "value": 0.0},
                                                          "keys": []}),
                                  "the count of candidates is 0, not a whole number from 1 to 100000 - at "
                                  "'$.session[1].n'"),
    "negative spill work": (set_(["pools"], [{"name": "kv", "evict": {"kind": "EvictLru"}, "spill": {
        "tier": {"kind": "PoolRef", "pool": 1}, "link": {"kind": "StageRef", "stage": 0},
        "work": {"kind": "Num", "value": -2.0}, "when": ONE}}, {"name": "cpu"}]),
        "the work is negative (-2); a write's work is not negative - at '$.pools[0].spill.work'"),
    "negative work": (set_(["session", 1, "work"], {"kind": "Num", "value": -1.0}),
                      "the work is negative (-1); a run's work is not negative - at '$.session[1].work'"),
    "huge family": (set_(["stages", 0, "size"], 10**9),
                    "more than 100000 stages (a program has at most 100000, counting every member of every "
                    "family) - at '$.stages[0].size'"),
    "negative seed": (set_(["run", "seed"], -1),
                      "a seed is an integer from 0 to 2**64 - 1 (18446744073709551615), not -1 - at '$.run.seed'"),
    "seed beyond 64 bits": (set_(["run", "seed"], 2**64),
                            "a seed is an integer from 0 to 2**64 - 1 (18446744073709551615), not "
                            "an integer of 65 bits - at '$.run.seed'"),
}


def _engine(budget, cost=None, units=None, second_budget=None):
    from serq_ir import nodes as n

    num = lambda v: n.Num(value=v)  # noqa: E731
    stages = [n.Stage(name="E", kind=n.Step(budget=budget, cost=cost or num(1.0), memory=0))]
    pools = [n.Pool(name="kv", cap=100.0, admit_via=0)]
    if second_budget is not None:
        stages.append(n.Stage(name="F", kind=n.Step(budget=second_budget, cost=num(1.0), memory=1)))
        pools.append(n.Pool(name="kw", cap=100.0, admit_via=1))
    return n.Program(version=n.IR_VERSION, attributes=mm1().attributes, pools=pools, stages=stages,
                     workload=n.Workload(arrive=n.Poisson(rate=1.0)),
                     session=[n.Hold(pools=[n.HoldPool(pool=n.PoolRef(pool=0), units=units or num(1.0))], body=[
                         n.Grow(pool=n.PoolRef(pool=0), amount=num(1.0)),
                         n.Run(stages=[n.StageRef(stage=0)], work=num(2.0), mode="prefill")])])


def test_step_and_memory_values():
    from serq_ir import nodes as n

    def refused(program, message):
        with pytest.raises(serq_ir.IRError) as e:
            serq_ir.decode(serq_ir.encode(program), name="x")
        assert str(e.value) == f"error: x: {message}"

    bl = lambda s: n.Observable(name="budget_left", target=n.StageRef(stage=s))  # noqa: E731
    serq_ir.decode(serq_ir.encode(_engine(n.Num(value=8.0))), name="x")
    refused(_engine(n.Num(value=8.0), cost=n.Num(value=-1.0)),
            "the cost is negative (-1); an iteration's cost is at least 0 - at '$.stages[0].kind.cost'")
    refused(_engine(n.Num(value=-1.0)),
            "the budget is negative (-1); an iteration's budget is at least 0 - at '$.stages[0].kind.budget'")
    serq_ir.decode(serq_ir.encode(_engine(n.Num(value=0.0))), name="x")  # 0 schedules nothing
    refused(_engine(n.Num(value=8.0), units=n.Num(value=-2.0)),
            "the units are negative (-2); an amount of memory is not negative - at '$.session[0].pools[0].units'")
    refused(_engine(bl(0)), "the budget of step stage 'E' reads budget_left(E), which reads it back: evaluating "
                            "it would never end - at '$.stages[0].kind.budget'")
    refused(_engine(n.Binary(op="+", lhs=n.Num(value=1.0), rhs=bl(1)), second_budget=bl(0)),
            "the budget of step stage 'E' reads budget_left(F), which reads it back: evaluating it would never "
            "end - at '$.stages[0].kind.budget.rhs'")
    serq_ir.decode(serq_ir.encode(_engine(n.Num(value=8.0), second_budget=bl(0))), name="x")  # one way


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_reference_is_one_line(case):
    change, message = CASES[case]
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(mutate(mm1(), change), name="bad.ir.json")
    assert str(e.value) == f"error: bad.ir.json: {message}"


def test_pool_references_in_the_big_program():
    bad = mutate(everything(), set_(["session", 30, "pools", 0, "pool", "pool"], 9))
    with pytest.raises(serq_ir.IRError, match=r"pool 9 does not exist \(the program has 3\) - at "
                                              r"'\$\.session\[30\]\.pools\[0\]\.pool\.pool'"):
        serq_ir.decode(bad, name="x")


def test_pool_cap_and_block():
    from serq_ir import nodes as n

    bad = serq_ir.encode(n.Program(version=n.IR_VERSION, attributes=mm1().attributes,
                                   pools=[n.Pool(name="kv", cap=-1.0)])).decode()
    with pytest.raises(serq_ir.IRError, match=r"a capacity is negative \(-1\.0\); it is a number at least 0, or \"inf\" - "
                                              r"at '\$\.pools\[0\]\.cap'"):
        serq_ir.decode(bad, name="x")
    bad = bad.replace('"cap":-1.0', '"cap":8.0,"block":0.0')
    with pytest.raises(serq_ir.IRError, match=r"a block is positive and finite, not 0\.0 - at '\$\.pools\[0\]\.block'"):
        serq_ir.decode(bad, name="x")


def test_a_flow_over_a_stage_that_is_not_ps():
    from serq_ir import nodes as n

    program = n.Program(
        version=n.IR_VERSION, attributes=mm1().attributes, share="maxmin",
        stages=[n.Stage(name="a", kind=n.Ps(capacity=n.Num(value=1.0))), n.Stage(name="b", kind=n.Delay())],
        session=[n.Run(stages=[n.StageRef(stage=0), n.StageRef(stage=1)], work=n.Num(value=1.0))])
    with pytest.raises(serq_ir.IRError, match=r"every stage of a run over several stages is ps with a constant "
                                              r"capacity above 0; 'b' is not - at '\$\.session\[0\]\.stages\[1\]'"):
        serq_ir.decode(serq_ir.encode(program), name="x")


def test_valid_programs_pass():
    for p in (mm1(), everything()):
        assert validate(p) is p


def _msgspec_decodes(depth: int) -> bool:
    """Whether msgspec decodes a JSON list nested ``depth`` deep here (its limit is the interpreter's C stack
    allowance: about 1 000 deep on Python 3.11, about 12 000 on 3.13)."""
    import msgspec

    try:
        msgspec.json.decode("[" * depth + "]" * depth)
    except RecursionError:
        return False
    return True


_EXPRESSION = "an expression nests more than 64 deep - at '$.session[1].work"
_JSON = ("the JSON nests too deeply to be read (an IR program's expressions nest at most 64 deep, its blocks 32) - "
         "at '$.session[1].work.arg.arg")


@pytest.mark.parametrize("depth, message", [
    (70, _EXPRESSION),
    # what msgspec decodes is refused by the nesting check, the rest as JSON too deep to read: either way one
    # error with the JSON path (at 5 000, the first on Python 3.13, the second on 3.11)
    (5000, _EXPRESSION if _msgspec_decodes(5000) else _JSON),
    (100_000, _JSON),
])
def test_ir_nested_too_deeply(depth, message):
    # a RecursionError out of msgspec or the walkers; now one error with the JSON path
    d = json.loads(serq_ir.encode(mm1(), spans=False))
    w = json.dumps(d["session"][1]["work"])
    data = json.dumps(d).replace(w, '{"kind":"Unary","op":"-","arg":' * depth + w + "}" * depth)
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(data, name="x")
    assert str(e.value).startswith(f"error: x: {message}")


@pytest.mark.parametrize("path,slot,message", [
    (["attrs", 0], 99, "attribute slot 99 does not exist (the program has {n}) - at '$.workload.presets[0].attrs[0].slot'"),
    (["turns", 0, 0], 99, "attribute slot 99 does not exist (the program has {n}) - at "
                          "'$.workload.presets[0].turns[0][0].slot'"),
    (["turns", 0, 0], 2, "the built-in attribute 'cached' is kept by the simulator; a program does not write it - at "
                         "'$.workload.presets[0].turns[0][0].slot'"),
    (["attrs", 0], -1, "attribute slot -1 does not exist (the program has {n}) - at '$.workload.presets[0].attrs[0].slot'"),
])
def test_a_bad_preset_value_is_refused_at_its_path(path, slot, message):
    # a preset of numbers is checked in one loop (serq_ir.rules.plain_preset); one that is not plain is
    # walked as before, so the message and the path are the same
    program = everything()
    n = len(program.attributes)

    def change(d):
        row = d["workload"]["presets"][0]
        for k in path:
            row = row[k]
        row[0] = slot

    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(mutate(program, change), name="bad.ir.json")
    assert str(e.value) == f"error: bad.ir.json: {message.format(n=n)}"
    # a Program built in Python (validate, not decode) is refused the same way
    bad = serq_ir.decode(mutate(program, lambda d: None), name="x")
    import msgspec
    from serq_ir import nodes as N

    pr = bad.workload.presets[0]
    sv = N.SlotValue(slot=slot, value=1.0)
    pr = msgspec.structs.replace(pr, attrs=[sv]) if path[0] == "attrs" else msgspec.structs.replace(pr, turns=[[sv]])
    bad = msgspec.structs.replace(bad, workload=msgspec.structs.replace(bad.workload, presets=[pr]))
    with pytest.raises(serq_ir.IRError) as e:
        validate(bad, name="bad.ir.json")
    assert str(e.value) == f"error: bad.ir.json: {message.format(n=n)}"
