"""Every door that takes a name of the user's offers the near name the program has, in another case too.

``serq run p.sq --set r=2`` of a program whose let is ``R`` said only "the program has no `let r`", and
``--slo TTFT=1`` (the metric is ``ttft``) listed the metrics without pointing at one: the one helper of a
near name (``serq.errors.did_you_mean``) compared names case-sensitively (``R`` and ``r`` share no letter
to difflib), and several doors did not call it at all (``--def``, ``--slo``, ``--over``, ``--zip``, a
figure of ``--find``/``--show``/``--figure``/``--y``, ``--x``/``--hue`` of serq plot, a dump's observe of
``--cdf``, ``--format``, a shipped scenario of ``serq vllm scenario``, and the report's
``observe()``/``pool()``/``stage()``/``stats()``/``set_slo()`` and ``serq_report.render()`` in Python).
"""

from __future__ import annotations

import pytest
from serq.errors import UserError

pytestmark = pytest.mark.timeout(120)

# the program's names: let R, let Cap, def service, observe response, pool slots, stage svc
PROGRAM = """def service() = ~exp(1);
let R = 0.5;
let Cap = 2;
pool slots { cap Cap; }
stage svc : delay;
workload { arrive poisson(R); }
session {
  set t0 = now;
  hold slots(1) { run svc (service()); }
  observe response = now - t0;
  end;
}
run { horizon 20; seed 1; }
"""

TABLE = "point,R,seed,status,observes.response.mean\n0,0.1,1,ok,1.5\n1,0.2,1,ok,2.5\n"


@pytest.fixture(autouse=True)
def _here(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "t.csv").write_text(TABLE)
    monkeypatch.chdir(tmp_path)


def _serq(capsys, *args: str) -> tuple[int, str]:
    from serq.cli import main

    with pytest.raises(SystemExit) as info:
        main(list(args))
    return info.value.code, capsys.readouterr().err


SWEEP = ("--workers", "0", "--no-progress")


@pytest.mark.parametrize("args, meant", [
    (("run", "p.sq", "--set", "r=2"), "R"),
    (("run", "p.sq", "--set", "cap=2"), "Cap"),
    (("run", "p.sq", "--def", "Service=~det(1)"), "service"),
    (("run", "p.sq", "--slo", "TTFT=1"), "ttft"),
    (("run", "p.sq", "--slo", "ttf=1"), "ttft"),
    (("sweep", "p.sq", "--set", "r=0.1,0.2", *SWEEP), "R"),
    (("compare", "p.sq", "--set", "r=0.1,0.2", *SWEEP), "R"),
    (("sweep", "p.sq", "--set", "R=0.1,0.2", "--set", "Cap=1,2", "--zip", "R,cap", *SWEEP), "Cap"),
    (("sweep", "p.sq", "--set", "R=0.1,0.2", "--show", "Response.mean", *SWEEP), "response.mean"),
    (("compare", "p.sq", "--set", "R=0.1,0.2", "--figure", "Response.mean", *SWEEP), "response.mean"),
    (("sweep", "p.sq", "--find", "RESPONSE.mean <= 3", "--over", "Cap", "1:4", *SWEEP), "response.mean"),
    (("sweep", "p.sq", "--find", "response.mean <= 3", "--over", "cap", "1:4", *SWEEP), "Cap"),
    (("plot", "t.csv", "--x", "r", "--y", "response.mean", "-o", "x.svg"), "R"),
    (("plot", "t.csv", "--x", "R", "--y", "response.Mean", "-o", "x.svg"), "response.mean"),
    (("run", "p.sq", "--format", "JSON"), "json"),
    (("vllm", "scenario", "vllm/Preempt"), "vllm/preempt"),
])
def test_a_flag_naming_what_the_program_has_in_another_case_is_pointed_at_it(capsys, args, meant):
    if args[0] == "plot":
        pytest.importorskip("matplotlib")
    code, err = _serq(capsys, *args)
    assert code in (1, 2), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.endswith(f" (did you mean `{meant}`?)\n") or f" (did you mean `{meant}`?) " in err, err


def test_the_report_s_look_ups_point_at_the_near_name():
    import serq_frontend
    import serq_report
    import serq_sim

    r = serq_sim.run(serq_frontend.compile("p.sq"), horizon=5)
    for call, meant in [(lambda: r.observe("Response"), "response"), (lambda: r.stats("respons"), "response"),
                        (lambda: r.pool("Slots"), "slots"), (lambda: r.stage("SVC"), "svc"),
                        (lambda: r.set_slo({"TTFT": 1.0}), "ttft"),
                        (lambda: serq_report.render(r, "Text"), "text")]:
        with pytest.raises((KeyError, ValueError, UserError)) as info:
            call()
        assert f"(did you mean `{meant}`?)" in str(info.value)


def test_a_member_of_a_name_the_program_has_is_not_pointed_elsewhere():
    """``pool("slots", 2)`` names the program's pool (its index is what is wrong): no other name is offered."""
    import serq_frontend
    import serq_sim

    r = serq_sim.run(serq_frontend.compile("p.sq"), horizon=5)
    with pytest.raises(KeyError) as info:
        r.pool("slots", 2)
    assert "did you mean" not in str(info.value)


def test_the_helper_prefers_the_name_in_another_case_and_offers_nothing_far():
    from serq.errors import did_you_mean

    assert did_you_mean("r", ["R", "rr"]) == " (did you mean `R`?)"
    assert did_you_mean("TTFT", ["ttft", "tpot", "e2el"]) == " (did you mean `ttft`?)"
    assert did_you_mean("lamda", ["lambda", "mu"]) == " (did you mean `lambda`?)"
    assert did_you_mean("x", ["lambda", "mu"]) == ""
    assert did_you_mean("R", ["R"]) == ""


def test_a_share_policy_in_another_case_is_pointed_at_the_registered_one(tmp_path, capsys):
    """A registered name a program gives (a share policy, a plugin's stage kind or order) goes through the same
    helper: ``share Maxmin;`` listed the registered policies without pointing at ``maxmin``."""
    (tmp_path / "s.sq").write_text("stage a : ps(1);\nstage b : ps(2);\nshare Maxmin;\n"
                                   "workload { arrive poisson(0.5); }\nsession { run a, b (~exp(1)); }\n"
                                   "run { horizon 10; }\n")
    code, err = _serq(capsys, "check", "s.sq")
    assert code == 1
    assert err.splitlines()[0] == ("s.sq:3:1: error: `share Maxmin`: unknown share policy `Maxmin` (no plugin registers "
                                   "share policies; built in: maxmin, bottleneck) (did you mean `maxmin`?)")
