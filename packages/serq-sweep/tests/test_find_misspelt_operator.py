"""``--find 'x =< 1'`` (an operator misspelt) names the operator the user meant.

The condition is FIGURE OP NUMBER with OP one of ``<= < >= > == !=`` (docs/sweep.md); ``=<``, ``=>``,
``<>``, a single ``=`` and the like were refused with the generic shape alone, leaving the user to find
which part was wrong.
"""

from __future__ import annotations

import pytest
from serq.errors import UsageError

pytestmark = pytest.mark.timeout(60)

EXPECTED = "expected FIGURE OP NUMBER, OP one of <= < >= > == != (e.g. 'ttft.p99 <= 1')"


@pytest.mark.parametrize("text, op, meant", [
    ("ttft.p99 =< 1", "=<", "<="),
    ("ttft.p99 => 1", "=>", ">="),
    ("ttft.p99 <> 1", "<>", "!="),
    ("ttft.p99 = 1", "=", "=="),
    ("ttft.p99=1", "=", "=="),
    ("ttft.p99 === 1", "===", "=="),
    ("ttft.p99 =! 1", "=!", "!="),
    ("ttft.p99 ≤ 1", "≤", "<="),
    ("ttft.p99 ≥ 1", "≥", ">="),
    ("ttft.p99 ≠ 1", "≠", "!="),
    ("ttft.p99 =<", "=<", "<="),
])
def test_a_misspelt_operator_is_named_with_the_one_meant(text, op, meant):
    from serq_sweep.search import parse_condition

    with pytest.raises(UsageError) as info:
        parse_condition(text)
    assert str(info.value) == f"error: --find {text!r}: `{op}` is no operator (did you mean `{meant}`?); {EXPECTED}"


def test_an_operator_nothing_is_meant_by_is_named_alone_and_the_six_still_read():
    from serq_sweep.search import parse_condition

    with pytest.raises(UsageError) as info:
        parse_condition("ttft.p99 <=> 1")
    assert str(info.value) == f"error: --find 'ttft.p99 <=> 1': `<=>` is no operator; {EXPECTED}"
    for op in ("<=", "<", ">=", ">", "==", "!="):
        assert parse_condition(f"ttft.p99 {op} 1") == ("ttft.p99", op, 1.0)


def test_the_command_says_it_with_status_2(tmp_path, monkeypatch, capsys):
    from serq.cli import main

    (tmp_path / "p.sq").write_text("let lam = 0.5;\nstage s : delay;\nworkload { arrive poisson(lam); }\n"
                                   "session { run s (1); }\nrun { horizon 5; }\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["sweep", "p.sq", "--find", "arrivals =< 3", "--over", "lam", "0.1:1", "--workers", "0",
              "--no-progress"])
    assert info.value.code == 2
    assert "`=<` is no operator (did you mean `<=`?)" in capsys.readouterr().err
