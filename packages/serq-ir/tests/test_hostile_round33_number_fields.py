"""A value of the wrong type where the IR has a number or one of its names is told in the IR's words.

msgspec said `Invalid enum value '1e3'` of a number written as text (a number's field is a float or
"inf"/"-inf", which msgspec types as an enum), `Expected 'float | str', got 'bool'` of a bool there, as if
any text would do, and a Program built in Python with a str rate was told by the validation as `an arrival
rate is positive and finite, not 0.5`: a value that is one, shown without its quotes.
"""

from __future__ import annotations

import msgspec
import pytest
import serq_ir
from ir_programs import mm1
from serq_ir import codec

GOOD = serq_ir.encode(mm1(), spans=False).decode()
WANTED = 'a number is wanted (or "-inf", "inf"), not '


@pytest.mark.parametrize(("value", "said"), [
    ('"1e3"', 'the text "1e3"'), ('"Inf"', 'the text "Inf"'), ("true", "true"), ("null", "null"),
    ("{}", "an object"), ("[1]", "a list"),
])
def test_a_number_field_of_another_type_says_a_number_is_wanted(value, said):
    text = GOOD.replace('"servers":1.0', f'"servers":{value}')
    assert text != GOOD
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(text, name="bad.ir.json")
    assert str(e.value) == f"error: bad.ir.json: {WANTED}{said} - at '$.stages[0].kind.servers'"
    assert e.value.json_path == "$.stages[0].kind.servers"


def test_infinity_written_as_the_ir_writes_it_is_still_read():
    # "inf" is a number's value where the IR allows one (the horizon): not refused by the new words
    text = GOOD.replace('"horizon":100000.0', '"horizon":"inf"')
    assert text != GOOD
    assert serq_ir.decode(text).run.horizon == "inf"


def test_a_name_of_the_ir_not_among_them_lists_them():
    text = GOOD.replace('"dist":"exp"', '"dist":"expo"', 1)
    assert text != GOOD
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(text, name="bad.ir.json")
    path = e.value.json_path
    assert path.endswith(".dist")
    assert str(e.value) == (f"error: bad.ir.json: 'expo' is not one of bernoulli, det, erlang, exp, h2, uniform"
                            f" (did you mean `exp`?) - at '{path}'")


def _with_rate(rate):
    p = mm1()
    return msgspec.structs.replace(p, workload=msgspec.structs.replace(
        p.workload, arrive=msgspec.structs.replace(p.workload.arrive, rate=rate)))


@pytest.mark.parametrize("check", [codec.checked, codec.encode], ids=["checked", "encode"])
def test_a_program_built_in_python_with_a_number_as_text_is_told_so(check):
    # (serq_sim.run checks a Program it is given by codec.checked)
    with pytest.raises(serq_ir.IRError) as e:
        check(_with_rate("0.5"))
    assert str(e.value) == f"error: <program>: {WANTED}the text \"0.5\" - at '$.workload.arrive.rate'"


def test_a_value_of_the_right_type_keeps_the_validation_words():
    with pytest.raises(serq_ir.IRError) as e:
        codec.checked(_with_rate(-1.0))
    assert "an arrival rate is positive and finite, not -1.0" in str(e.value)


def test_a_constants_value_as_text_is_told_at_its_place():
    # a constant is written as a pair, ["lambda", 0.8]: its value is the pair's second place
    text = GOOD.replace('"version":2,', '"version":2,"constants":[["lam","0.8"]],', 1)
    assert text != GOOD
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(text, name="bad.ir.json")
    assert str(e.value) == f"error: bad.ir.json: {WANTED}the text \"0.8\" - at '$.constants[0][1]'"
