"""Known defects of the frontend, round 10, each found wrong by hand, then fixed at its cause.

1. A message about a definition's name or one of its parameters put its caret under `def`; the project's rule
   is a caret under the offending token. The name's and each parameter's place are kept (``DefItem.name_pos``,
   ``DefItem.param_pos``) and the messages are at them, their words unchanged."""

from __future__ import annotations

import pytest
from sqhelpers import refused

pytestmark = pytest.mark.timeout(60)

S = "stage s : fifo;\n"


# --- 1. the caret under the offending name of a definition ------------------------------------------------------

@pytest.mark.parametrize("src, message", [
    # a parameter that is a keyword or a function: the second parameter, not the first, not `def`
    (S + "def f(a, ⟨run) = 1;\nsession { run s (f(1, 2)); }\n", "`run` cannot be a parameter of `f`: it is a keyword"),
    (S + "def f(a,\n      ⟨floor) = 1;\nsession { run s (f(1, 2)); }\n",
     "`floor` cannot be a parameter of `f`: it is a function"),
    # a parameter given twice: at its second writing
    (S + "def f(x, y, ⟨x) = 1;\nsession { run s (f(1, 2, 3)); }\n", "`f` has two parameters named `x`"),
    # a parameter the body assigns: at that parameter
    (S + "def f(y, ⟨x) { set x = 1; run s (x + y); }\nsession { f(1, 2); }\n",
     "`x` is a parameter of `f` and its body assigns it"),
    (S + "def  f(⟨x) { choose x in 2 by (1); run s (x); }\nsession { f(1); }\n",
     "`x` is a parameter of `f` and its body assigns it"),
])
def test_a_parameters_error_is_at_the_parameter(src, message):
    refused(src, message)


@pytest.mark.parametrize("src, message", [
    (S + "def   ⟨hold(x) = 1;\nsession { run s (1); }\n", "`hold` is a keyword; a definition needs another name"),
    (S + "def ⟨sqrt(x) = 1;\nsession { run s (1); }\n", "`sqrt` is a function of the language"),
    (S + "def\n⟨s(x) = 1;\nsession { run s (1); }\n", "`s` is a stage; a definition needs another name"),
    # the words name the first definition's place, its `def`, as before; the caret is under the second name
    (S + "def f(x) = 1;\ndef ⟨f(x) { run s (x); }\nsession { run s (f(1)); }\n",
     "`f` is defined twice (first at <source>:2:1)"),
])
def test_a_definitions_name_error_is_at_the_name(src, message):
    refused(src, message)
