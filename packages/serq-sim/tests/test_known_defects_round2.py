"""Known defects, each checked against the language's rules (docs/language.md, docs/simulator.md) on small
programs whose answers are worked out by hand."""

from __future__ import annotations

import pytest
import serq_frontend
from serq.cli import main
from serq_ir.rules import SHOWN_WHOLE, show_number
from serq_sim.errors import fmt_time
from tiers import run_on_tier

pytestmark = pytest.mark.timeout(60)

TIERS = ["general", ""]


def serq(argv, capsys) -> tuple[int, str]:
    """``serq ARGV``: its exit status and what it wrote (stdout and stderr)."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    out = capsys.readouterr()
    return info.value.code, out.out + out.err


# ---------------------------------------------------------------- one rule of a whole number in a message
#
# docs/language.md, "A message shows a number short": a whole number below 10**16 in size is shown in its
# digits, any other number as %g. The simulator's times, the linker's constants, a draw's parameters and a
# run setting's option held a limit of their own, 10**15: a time of 2e15 read `t=2e+15`, an option
# `--warmup 2000000000000000.0`.

@pytest.mark.parametrize("x, shown", [
    (2e15, "2000000000000000"), (9007199254740992.0, "9007199254740992"), (-1.5e15, "-1500000000000000"),
    (1e16, "1e+16"), (2.5, "2.5"), (float("inf"), "inf"), (float("nan"), "NaN"),
])
def test_a_time_is_shown_as_any_number(x, shown):
    assert SHOWN_WHOLE == 1e16
    assert fmt_time(x) == show_number(x) == shown


@pytest.mark.parametrize("tier", TIERS)
def test_a_run_time_error_at_a_time_below_1e16_names_it_in_digits(tier):
    src = """stage s : delay;
workload { arrive batch(1); }
session {
  run s (2e15);
  run s (0 - serial - 1);
}
run { horizon inf; }
"""
    _, outcome, _ = run_on_tier(serq_frontend.compile(source=src), tier)
    assert outcome[0] == "error"
    assert "at t=2000000000000000, session 0: the run's work is negative (-1)" in outcome[2]


def test_the_linker_shows_a_whole_constant_below_1e16_in_digits():
    src = "stage s : delay;\nworkload { arrive batch(1); }\nsession {\n  branch (1.5e15) {\n    run s (1);\n  }\n}\n"
    with pytest.raises(Exception) as info:
        serq_frontend.compile(source=src + "run { horizon inf; }\n")
    assert "the guard is the constant 1500000000000000; a guard is a test" in str(info.value)


def test_a_run_setting_given_as_an_option_is_quoted_as_a_message_shows_a_number(tmp_path, capsys):
    p = tmp_path / "p.sq"
    p.write_text("stage s : delay;\nworkload { arrive batch(1); }\nsession {\n  run s (1);\n}\n"
                 "run { horizon inf; }\n")
    code, out = serq(["run", "--horizon", "1.5e15", "--warmup", "2e15", str(p)], capsys)
    assert code == 1
    assert ("--warmup 2000000000000000: warmup 2000000000000000 is not below the horizon 1500000000000000 "
            "(--horizon 1500000000000000)") in out
    code, out = serq(["run", "--horizon", "1e300", "--warmup", "1e301", str(p)], capsys)
    assert code == 1
    assert "--warmup 1e+301: warmup 1e+301 is not below the horizon 1e+300 (--horizon 1e+300)" in out


def test_a_draw_parameter_keeps_every_digit_but_a_whole_one_below_1e16_is_digits():
    from serq_ir.rules import draw_problem

    assert draw_problem("uniform", [2e15, 0.30000000000000004]) == (
        "~uniform(2000000000000000, 0.30000000000000004): the low bound is above the high bound")
    assert draw_problem("exp", [-1e16]) == "~exp(-1e+16): the mean is negative"


# ---------------------------------------------------------------- out of memory: the hint fits where
#
# `serq run` told every MemoryError that reached it "(--max-samples N bounds the samples a run holds)",
# one while the program was compiled or its run set up too, before any sample existed: --max-samples
# bounds nothing there. Where a run held samples the hint stays; a partial report's note says the same.

OBSERVED = ("stage s : delay;\nworkload { arrive poisson(1); }\nsession {\n  run s (1);\n"
            "  observe x = 1;\n}\nrun { horizon 50; }\n")
BEFORE = "compiling the program, before its run began (--max-samples bounds only the samples a run holds)"


def _out_of_memory(*a, **k):
    raise MemoryError


@pytest.mark.parametrize("tier", TIERS)
def test_memory_out_setting_up_the_run_is_told_before_the_run(tmp_path, monkeypatch, capsys, tier):
    from serq_sim import engine

    (tmp_path / "p.sq").write_text(OBSERVED)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    monkeypatch.setattr(engine.Simulation, "__init__", _out_of_memory)
    code, out = serq(["run", "--no-progress", str(tmp_path / "p.sq")], capsys)
    assert (code, out) == (1, f"error: out of memory {BEFORE}\n")


@pytest.mark.parametrize("tier", TIERS)
def test_memory_out_after_a_run_that_held_samples_names_max_samples(tmp_path, monkeypatch, capsys, tier):
    from serq_sim import report

    (tmp_path / "p.sq").write_text(OBSERVED)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    monkeypatch.setattr(report, "build_report", _out_of_memory)  # the samples are held: ~50 of x
    code, out = serq(["run", "--no-progress", str(tmp_path / "p.sq")], capsys)
    assert (code, out) == (1, "error: out of memory (--max-samples N bounds the samples a run holds)\n")


def test_a_run_out_of_memory_holding_no_samples_does_not_name_max_samples(monkeypatch):
    import serq_sim
    from serq_sim import engine

    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    monkeypatch.setattr(engine.Simulation, "_start", _out_of_memory)  # the first arrivals: no sample yet
    r = serq_sim.run(serq_frontend.compile(source=OBSERVED))
    assert r.result.partial == "memory" and r.exit_status == 3
    assert any(n.startswith("note: out of memory holding no samples (--max-samples bounds only the samples a "
                            "run holds)") for n in r.result.notes), r.result.notes


# ---------------------------------------------------------------- time-weighted means near 1e308
#
# A time-weighted mean is the level's integral over the run's span. Two sessions present for 1e308 make
# an integral of 2e308, beyond the largest double: the report said inf of a mean of 2 (mean live, a stage's
# present, a pool's used, queue, holders). A span of 2**512 or more is integrated apart in its units
# (serq_sim.stats.HUGE_SPAN), so the mean is the level's, on both tiers.

def _report(src: str, tier: str) -> dict:
    """The JSON report of ``src`` run as serq_sim.run runs it under SERQ_SIM_TIER=``tier`` (the default tier:
    the fast one where the program allows it, tier.py's run_on_tier being the general engine's own run, with
    or without the step engine's shortcuts), the same report by the general engine besides."""
    import json
    import os

    import serq_sim
    from serq_report.json import encode_json

    program = serq_frontend.compile(source=src)
    old = os.environ.get("SERQ_SIM_TIER")
    os.environ["SERQ_SIM_TIER"] = tier
    try:
        got = encode_json(serq_sim.run(program))
    finally:
        if old is None:
            del os.environ["SERQ_SIM_TIER"]
        else:
            os.environ["SERQ_SIM_TIER"] = old
    _, outcome, _ = run_on_tier(program, tier)
    assert outcome == ("report", got), (outcome, got)
    return json.loads(got)


HELD = """stage s : delay;
pool p { cap 4; }
workload { arrive batch(3); }
session {
  hold p (2) {
    run s (1e308);
  }
}
run { horizon inf; WARM }
"""


@pytest.mark.parametrize("tier", TIERS)
def test_means_over_a_span_of_1e308_are_the_levels(tier):
    # sessions 0 and 1 hold 2 units each over [0, 1e308]; session 2 waits for the pool for ever: 3 live,
    # 2 present at s (a delay: busy while one is), 4 units used, 2 holders, 1 waiting, over the whole run
    r = _report(HELD.replace("WARM", ""), tier)
    assert r["end"] == 1e308 and r["mean_live"] == 3.0
    (s,) = r["stages"]
    assert (s["present"], s["utilisation"], s["completions"]) == (2.0, 1.0, 2)
    (p,) = r["pools"]
    assert (p["used"], p["cached"], p["queue"], p["holders"]) == (4.0, 0.0, 1.0, 2.0)


@pytest.mark.parametrize("tier", TIERS)
def test_a_huge_span_before_the_warm_up_is_not_counted(tier):
    # the span [0, 1e300] (of 2**512 or more) is before the warm-up: counting it would make the means
    # 1e308 / (1e308 - 1e300) times the levels, 1.00000001 times
    r = _report(HELD.replace("WARM", "warmup 1e300;"), tier)
    assert r["mean_live"] == 3.0
    assert (r["stages"][0]["present"], r["pools"][0]["used"], r["pools"][0]["holders"]) == (2.0, 4.0, 2.0)


@pytest.mark.parametrize("tier", TIERS)
def test_ordinary_and_huge_spans_add_up(tier):
    # session 0 leaves at 1, sessions 1 and 2 at 1e308: 3 live over [0, 1], 2 over [1, 1e308]: the integral
    # 3 + 2 * (1e308 - 1), over 1e308: 2 (the ordinary part 3 / 1e308 is below the mean's precision).
    # On a fifo of one server, the second job of 1e308 would end past the largest double: it never does
    src = """stage s : delay;
stage f : fifo;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    run s (1);
  } else {
    run s (1e308);
  }
}
run { horizon inf; }
"""
    r = _report(src, tier)
    assert r["mean_live"] == 2.0 and r["stages"][0]["present"] == 2.0
    r = _report(src.replace("run s (1e308)", "run f (1e308)"), tier)
    assert r["end"] == 1e308 and r["mean_live"] == 2.0
    f = r["stages"][1]
    assert (f["present"], f["utilisation"], f["completions"]) == (2.0, 1.0, 1)


# ---------------------------------------------------------------- a run-time error in a definition's body
#
# docs/language.md, "Diagnostics": told at the body's statement with the time and the session (the IR keeps
# one span a node: the use that expanded it is not in the IR). Session 1's second use runs -1 at t = 1.

@pytest.mark.parametrize("tier", TIERS)
def test_a_run_time_error_in_a_definition_body_is_told_at_the_body_with_time_and_session(tier):
    src = ("def go(w) {\n  run s (w);\n}\nstage s : delay;\nworkload { arrive batch(2); }\nsession {\n  go(1);\n"
           "  go(0 - serial);\n}\nrun { horizon inf; }\n")
    _, outcome, _ = run_on_tier(serq_frontend.compile(source=src), tier)
    assert outcome[0] == "error"
    assert outcome[2].splitlines()[0] == "<source>:2:3: error: at t=1, session 1: the run's work is negative (-1)"


@pytest.mark.parametrize("tier", TIERS)
def test_waits_and_services_near_1e308_have_their_mean(tier):
    # two hold 1 unit of 2 over [0, 9e307]; the other two wait 9e307 for them and then run for 9e307, past
    # the largest double: the run ends at 9e307. Services 9e307 + 9e307 and waits 0 + 0 + 9e307 + 9e307
    # summed to inf: the means are 9e307 and 4.5e307
    src = HELD.replace("cap 4", "cap 2").replace("batch(3)", "batch(4)").replace("(2)", "(1)")
    r = _report(src.replace("1e308", "9e307").replace("WARM", ""), tier)
    assert (r["end"], r["mean_live"]) == (9e307, 4.0)
    s, p = r["stages"][0], r["pools"][0]
    assert (s["completions"], s["wait"], s["service"], s["present"]) == (2, 0.0, 9e307, 2.0)
    assert (p["admissions"], p["wait"], p["used"], p["queue"], p["holders"]) == (4, 4.5e307, 2.0, 2.0, 2.0)


@pytest.mark.parametrize("tier", TIERS)
def test_a_fifo_after_2_to_the_512_sums_its_waits_and_services(tier):
    # one server, three jobs of 6e307: [0, 6e307], [6e307, 1.2e308] (waited 6e307), and the third's end,
    # 1.8e308, is past the largest double: 2 completions, waits 0 and 6e307, services 6e307 each; 3 live
    # and present over [0, 6e307], 2 over [6e307, 1.2e308]: 2.5
    src = """stage f : fifo;
workload { arrive batch(3); }
session {
  run f (6e307);
}
run { horizon inf; }
"""
    r = _report(src, tier)
    f = r["stages"][0]
    assert (r["end"], r["mean_live"]) == (1.2e308, 2.5)
    assert (f["completions"], f["wait"], f["service"], f["present"], f["utilisation"]) == (2, 3e307, 6e307, 2.5, 1.0)


@pytest.mark.parametrize("tier", TIERS)
def test_the_backlog_bins_read_the_whole_live_integral(tier):
    # 2 live over [0, 1e300], 1 over [1e300, 2e300]: the backlog's 20 bins (notes.steadiness) hold 2, then 1
    # (to rounding at 1e300), its integral's spans of 2**512 or more counted as the mean live counts them
    src = "stage s : delay;\nworkload { arrive batch(2); }\nsession {\n  run s ((serial + 1) * 1e300);\n}\n" \
          "run { horizon 2e300; }\n"
    sim, outcome, _ = run_on_tier(serq_frontend.compile(source=src), tier)
    assert outcome[0] == "report"
    assert sim.backlog.means() == pytest.approx([2.0] * 10 + [1.0] * 10, rel=1e-14)


@pytest.mark.parametrize("tier", TIERS)
def test_a_pool_of_1e300_units_has_its_mean_used(tier):
    # 1e300 units held over the whole run [0, 1e10]: 1e300 * 1e10 was inf; the mean is 1e300
    src = ("stage s : delay;\npool p { cap inf; }\nworkload { arrive batch(1); }\nsession {\n  hold p (1e300) {\n"
           "    run s (1e10);\n  }\n}\nrun { horizon inf; }\n")
    r = _report(src, tier)
    p = r["pools"][0]
    assert (r["end"], p["used"], p["holders"], p["queue"]) == (1e10, 1e300, 1.0, 0.0)


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("horizon", ["2e10", "1e200"])
def test_a_pool_of_1e300_units_under_a_horizon_has_its_mean_used(tier, horizon):
    # the same under a horizon below 2**512 (the code then written without the test of a span's size, the
    # pool's units still tested: its cap is beyond 2**256), and two members of a family, one of a cap below
    # (the code of its integrations without either test): 1e300 over [0, 1e10] of the horizon, 1 over it all
    src = ("stage s : delay;\npool p[2] { cap 1e301; }\npool q { cap 10; }\nworkload { arrive batch(1); }\n"
           "session {\n  hold p[0] (1e300), q (1) {\n    run s (1e10);\n  }\n  hold q (1) {\n    run s (inf);\n"
           f"  }}\n}}\nrun {{ horizon {horizon}; }}\n")
    r = _report(src, tier)
    span = float(horizon)
    p0, p1, q = r["pools"]
    assert [(x["name"], x["index"]) for x in (p0, p1, q)] == [("p", 0), ("p", 1), ("q", None)]
    assert p0["used"] == pytest.approx(1e300 * (1e10 / span), rel=1e-15) and p1["used"] == 0.0
    assert p0["holders"] == pytest.approx(1e10 / span, rel=1e-15)
    assert q["used"] == q["holders"] == 1.0


@pytest.mark.parametrize("tier", TIERS)
def test_an_admission_after_a_span_of_1e308_integrates_it_in_its_units(tier):
    # s0 holds 2 of 4 over [0, 1.5e308]; s1 arrives at the pool at 1e308 (its admission brings the pool's sums
    # up to then: 2 units over a span of 1e308, 2e308 as a plain product) and holds 2 until 1.1e308: used 2, 4,
    # 2 over [0, 1e308, 1.1e308, 1.5e308], holders 1, 2, 1, no wait
    src = ("pool p { cap 4; }\nstage d : delay;\nworkload { arrive batch(2); }\nsession {\n"
           "  branch (serial == 1) {\n    run d (1e308);\n  }\n"
           "  hold p (2) {\n    run d (serial == 0 ? 1.5e308 : 1e307);\n  }\n}\nrun { horizon inf; }\n")
    r = _report(src, tier)
    p = r["pools"][0]
    assert r["end"] == 1.5e308
    assert p["used"] == pytest.approx(2.0 * (1e308 / 1.5e308) + 4.0 * (1e307 / 1.5e308) + 2.0 * (4e307 / 1.5e308),
                                      rel=1e-14)
    assert p["holders"] == pytest.approx(1e308 / 1.5e308 + 2.0 * (1e307 / 1.5e308) + 4e307 / 1.5e308, rel=1e-14)
    assert (p["wait"], p["admissions"]) == (0.0, 2)


@pytest.mark.parametrize("tier", TIERS)
def test_a_gauge_held_over_1e308_has_its_mean(tier):
    # the gauge of used(p) is 4 over [0, 1e308] (two holders of 2): 4e308 was summed to inf, the mean 4
    src = HELD.replace("pool p { cap 4; }", "pool p { cap 4; }\ngauge g = used(p);").replace("batch(3)", "batch(2)")
    r = _report(src.replace("WARM", ""), tier)
    g = r["gauges"]["g"]
    assert (g["mean"], g["min"], g["max"], r["pools"][0]["used"]) == (4.0, 4.0, 4.0, 4.0)
