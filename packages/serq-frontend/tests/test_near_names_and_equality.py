"""A call of an expression definition spelt one letter off suggests the definition (it suggested only the
built-in functions, so `servce()` beside `def service()` got no hint); `=` where an expression wants an
operator, as in `branch (x = 1)`, says that equality is `==`."""

from __future__ import annotations

from sqhelpers import refused

HEAD = "stage svc : fifo;\nworkload { arrive poisson(1); }\n"


def test_a_misspelt_expression_definition_is_suggested():
    refused("def service() = ~exp(1);\n" + HEAD + "session {\n  run svc (⟨servce());\n}\n",
            "unknown function `servce` (did you mean `service`?)")


def test_a_misspelt_definition_with_a_parameter_is_suggested_too():
    refused("def twice(x) = 2 * x;\n" + HEAD + "session {\n  run svc (⟨twise(1));\n}\n",
            "(did you mean `twice`?)")


def test_assignment_for_equality_in_a_branch_test():
    refused(HEAD + "session {\n  set x = 1;\n  branch (x ⟨= 1) { run svc (1); }\n}\n", "a test of equality is `==`")
    refused(HEAD + "session {\n  set x = 1;\n  observe y = x ⟨= 1;\n}\n", "a test of equality is `==`")


def test_a_definition_named_without_its_call():
    # `run svc (service);` for `run svc (service());`: it was 'unknown name `service`', as if there were none
    refused("def service() = ~exp(1);\n" + HEAD + "session {\n  run svc (⟨service);\n}\n",
            "`service` is a definition, not a value; call it, `service(…)`")
