"""A ``choose`` whose computed count is no whole number from 1 to 100 000: the run-time error points at the
count's expression (it pointed at the statement) and shows the count as other run-time values are shown
(``0.970373``; it printed ``0.9703734415769844``), on both tiers."""

import pytest
import serq_frontend
import serq_sim

SRC = """stage s[2] : delay;
workload { arrive batch(1); }
session {
  set n = now + COUNT;
  choose j in n + 0 by (queue(s[j]));
  run s[0] (1);
}
run { horizon 10; }
"""


def _error(src: str, tier: str, monkeypatch, tmp_path) -> str:
    path = tmp_path / "c.sq"
    path.write_text(src)
    if tier:
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
    else:
        monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(serq_frontend.compile(path=str(path)))
    return str(e.value)


@pytest.mark.parametrize("count, shown", [("0.9703734415769844", "0.970373"), ("-0.9703734415769844", "-0.970373"),
                                          ("2.5", "2.5"), ("0", "0"), ("1e9", "1000000000")])
@pytest.mark.parametrize("tier", ["", "general"])
def test_a_computed_count_is_told_at_the_count(count, shown, tier, monkeypatch, tmp_path):
    text = _error(SRC.replace("COUNT", count), tier, monkeypatch, tmp_path)
    lines = text.splitlines()
    # line 5, column 15: the `n` of `n + 0` (the statement's `choose` is at column 3)
    assert lines[0] == (f"{tmp_path / 'c.sq'}:5:15: error: at t=0, session 0: choose j: the count of candidates is "
                        f"{shown}, not a whole number from 1 to 100000")
    assert lines[1] == "    choose j in n + 0 by (queue(s[j]));"
    assert lines[2] == " " * 16 + "^"


def test_a_constant_count_is_still_quoted_whole(tmp_path):
    """The linker's message of a constant count quotes it as written (all its digits)."""
    from serq_ir.rules import choose_problem

    assert choose_problem(0.9703734415769844) == ("the count of candidates is 0.9703734415769844, not a whole number "
                                                  "from 1 to 100000")
    assert choose_problem(0.9703734415769844, exact=False).startswith("the count of candidates is 0.970373,")
