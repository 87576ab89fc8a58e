"""One quoting style in a program's messages, one wording of an arity:

- a number literal beyond the doubles or too close to 0 for one (`horizon 1e400;`, `cap 1e-400;`) quoted its
  text with Python's single quotes ('1e400'), where every other message of a program quotes source text
  between backquotes; it is now `1e400`, and the words it offers (`inf`, `-inf`, `0`) are quoted so too (a
  value given on the command line, `--set x=1e400`, keeps the command line's quotes);
- a plugin's registration hook that calls ``register`` with another number of arguments was told "register(name,
  object) takes 2 argument(s), not 1"; it is now in the words of every arity (serq_ir.rules.takes): "`register`
  takes two arguments, `register(name, object)`, and got 1".
"""

from __future__ import annotations

import pluggy
import pytest
from serq.errors import PluginError
from serq.numbers import below_doubles, beyond_doubles
from serq.plugins import collect
from sqhelpers import refused, told_in

BASE = """pool kv { cap 100; }
stage tool : delay;
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon 10; }
"""
BEYOND = ("is beyond the range of a double (at most about 1.8e308 in size); an infinite value is written `inf` or "
          "`-inf`")
BELOW = ("is too close to 0 for a double (the nearest to 0 is about 4.9e-324 in size) and would be read as 0; zero "
         "is written `0`")


@pytest.mark.parametrize("old, new, said", [
    ("horizon 10;", "horizon ⟨1e400;", f"`1e400` {BEYOND}"),
    ("cap 100;", "cap ⟨1E999;", f"`1E999` {BEYOND}"),
    ("tool (1);", "tool (-⟨2e308);", f"`2e308` {BEYOND}"),
    ("horizon 10;", "horizon ⟨1e-400;", f"`1e-400` {BELOW}"),
    ("tool (1);", "tool (1 + ⟨3e-330);", f"`3e-330` {BELOW}"),
])
def test_a_literal_out_of_the_doubles_is_quoted_as_source_text(old, new, said):
    assert told_in(BASE, old, new) == said


def test_a_literal_of_400_digits_is_quoted_cut_between_backquotes():
    digits = "1" + "0" * 400
    refused(BASE.replace("horizon 10;", f"horizon ⟨{digits};"), f"error: `{digits[:40]}...` {BEYOND}")


def test_the_command_line_keeps_its_quotes():
    # (a flag's value is no source text: its messages quote it as the command line's others do)
    assert beyond_doubles("1e400").startswith("'1e400' is beyond")
    assert beyond_doubles("1e400").endswith("written inf or -inf")
    assert below_doubles("1e-400").startswith("'1e-400' is too close")


_spec = pluggy.HookspecMarker("serq")
_impl = pluggy.HookimplMarker("serq")


class _Spec:
    @_spec
    def serq_sim_register_stage_kinds(self, register): ...


@pytest.mark.parametrize("args, key, said", [
    (("never",), None, "`register` takes two arguments, `register(name, object)`, and got 1"),
    ((), None, "`register` takes two arguments, `register(name, object)`, and got none"),
    (("never", object, 3), None, "`register` takes two arguments, `register(name, object)`, and got 3"),
    (("never", object), str, "`register` takes one argument, `register(object)`, and got 2"),
])
def test_a_registration_of_another_arity_is_told_in_the_words_of_every_arity(args, key, said):
    class Plugin:
        @_impl
        def serq_sim_register_stage_kinds(self, register):
            register(*args)

    pm = pluggy.PluginManager("serq")
    pm.add_hookspecs(_Spec)
    pm.register(Plugin(), name="acme")
    with pytest.raises(PluginError) as e:
        collect(pm, "serq_sim_register_stage_kinds", "stage kind", key=key)
    first = str(e.value).splitlines()[0]
    assert first == f"error: plugin 'acme' registers a stage kind wrongly in serq_sim_register_stage_kinds: {said}"
    assert "argument(s)" not in str(e.value)
