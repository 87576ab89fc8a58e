"""Claims the docs make that are cheap to check, checked against hand-computed values.

Each test names the document and the claim; the truth is the doc's text or a value worked out by hand,
never what the code printed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

#: two requests of one session: TTFT 1 and 3, E2E 3 and 5, 5 output tokens each, prompts 10 and 20.
TWO_REQUESTS = """\
workload { arrive batch(1); }
session {
  record request { sent = 0; first_token = 1; last_token = 3; output = 5; prompt = 10; }
  record request { sent = 0; first_token = 3; last_token = 5; output = 5; prompt = 20; }
}
run { horizon 10; }
"""


@pytest.fixture(scope="module")
def two_requests(tmp_path_factory):
    import serq_frontend
    import serq_sim

    path = tmp_path_factory.mktemp("claims") / "two.sq"
    path.write_text(TWO_REQUESTS)
    return serq_sim.run(serq_frontend.compile(str(path)))


@pytest.mark.timeout(60)
def test_request_metrics_std_is_the_population_std_and_totals_are_sums(two_requests):
    # docs/language.md: `std` is vLLM's (np.std, the population standard deviation); docs/vllm.md:
    # requests.total_input_tokens / total_output_tokens are the benchmark's totals (report version 4).
    import serq_report

    m = two_requests.result.requests
    assert m.ttft.std == 1.0  # values 1 and 3: sqrt(((1-2)^2 + (3-2)^2) / 2)
    assert m.e2el.std == 1.0  # values 3 and 5
    assert (m.total_input_tokens, m.total_output_tokens) == (30, 10)
    assert two_requests.result.report_version >= 4  # (5 added the attainment)
    csv = serq_report.render(two_requests, "csv").splitlines()
    assert "requests,,total_input_tokens,30.0" in csv and "requests,ttft,std,1.0" in csv


@pytest.mark.timeout(60)
def test_the_text_report_excerpt_has_the_reporters_request_lines(two_requests):
    # packages/serq-report/README.md's text excerpt: the requests line and the metric table's header.
    import serq_report

    readme = (ROOT / "packages/serq-report/README.md").read_text()
    shown_header = next(line for line in readme.splitlines() if line.startswith("metric "))
    text = serq_report.render(two_requests, "text").splitlines()
    printed_header = next(line for line in text if line.startswith("metric "))
    assert shown_header.split() == printed_header.split()
    assert "requests (request): completed 2 over 10 s  (30 input, 10 output tokens)  0.2 req/s  output 1 tok/s" \
        "  total 4 tok/s" in text
    shown = re.search(r"^requests \(request\): completed \d+ over \d+ s  \(\d+ input, \d+ output tokens\)  ", readme,
                      re.M)
    assert shown, "the README's requests line gives the input and output tokens as the reporter does"


@pytest.mark.timeout(60)
def test_the_simulators_bounds_are_the_figures_docs_simulator_md_gives():
    # docs/simulator.md, "Bounds" and the guards: each constant as the text states it
    from serq_sim import compile as comp
    from serq_sim import engine

    assert engine.STALL_EVENTS == 1_000_000 and engine.STALL_PER_SESSION == 1_000  # "No progress"
    assert engine.ZENO == 2.0 ** -40 and 9e-13 < engine.ZENO < 1e-12  # "2⁻⁴⁰: about 1e-12 s near 0"
    assert engine.TICK == 20_000  # "checks it every 20 000 events"
    assert engine.DEFAULT_MAX_SAMPLES == 100_000_000  # --max-samples's default
    assert comp.REDO_LIMIT == 10_000  # "preempted and re-executed 10000 times at one instant"
    assert comp.SPIN_LIMIT == 1_000_000 and comp.PULSE == 2_048
    assert comp.PULSE_FIRST == 1 and comp.PULSE_SECONDS == 0.01  # "starts at 1 unit", "longer than 10 ms"


#: the programs of the no-progress messages docs/simulator.md quotes ("a loop of `run d (1e-300)` from 0,
#: arrivals at rate 1e300"), by the words each quote begins with
NO_PROGRESS = {
    "no progress: more than 1000000 events in": "stage d : delay;\nworkload { arrive batch(1); }\n"
                                                "session { loop { run d (1e-300); } }\nrun { horizon 10; }\n",
    "no progress: more than 10000 arrivals in": "stage d : delay;\nworkload { arrive poisson(1e300); }\n"
                                                "session { run d (1); }\nrun { horizon 10; }\n",
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tier", ["", "general"])
def test_the_no_progress_messages_docs_simulator_md_quotes_are_what_serq_says(tmp_path, monkeypatch, tier):
    # docs/simulator.md, the no-progress guard: each message it quotes, its times as serQ writes every time in a
    # message (serq_sim.errors.fmt_time: `1.99885e-296 s`, where the page said `2e-296 s`), `…` for what it
    # leaves out
    import serq_frontend
    import serq_sim

    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    text = " ".join((ROOT / "docs" / "simulator.md").read_text().split())
    for start, program in NO_PROGRESS.items():
        quotes = re.findall(rf"`({re.escape(start)}[^`]*)`", text)
        assert quotes, f"docs/simulator.md quotes `{start} …`"
        path = tmp_path / "p.sq"
        path.write_text(program)
        with pytest.raises(serq_sim.SimError) as info:
            serq_sim.run(serq_frontend.compile(str(path)))
        said = str(info.value).splitlines()[0]
        for quote in quotes:
            assert re.search(re.escape(quote).replace(re.escape("…"), ".*?"), said), (quote, said)


@pytest.mark.timeout(60)
def test_the_replay_examples_files_are_what_its_readme_says():
    # examples/replay/README.md: 333 sessions and 3 321 requests, columns session,turn,new,out,think,forced;
    # the fit over 3 022 iterations with the terms c, d, e, a, b and a MAPE per composition
    import csv
    import json

    folder = ROOT / "examples/replay"
    with open(folder / "short_base.csv", newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    assert reader.fieldnames == ["session", "turn", "new", "out", "think", "forced"]
    assert (len(rows), len({r["session"] for r in rows})) == (3321, 333)
    fit = json.loads((folder / "a100_step_fit.json").read_text())
    assert fit["n"] == 3022 and set(fit["sum"]) == set("cdeab")
    assert set(fit["sum_mape"]) == {"decode", "prefill", "mixed"}
    assert "let spacing" in (folder / "vllm_replay.sq").read_text()  # "--set spacing=3"


@pytest.mark.timeout(60)
def test_serq_vllm_scenario_prints_the_fields_docs_vllm_md_names():
    # docs/vllm.md, "The oracle": `serq vllm scenario NAME` prints first, done, preempted, cached, preemptions
    # and steps, with the scenario's config (budget, max_seqs, chunk, block_size, num_blocks)
    import json
    import subprocess
    import sys

    text = " ".join((ROOT / "docs" / "vllm.md").read_text().split())
    said = re.search(r"prints (`first`.*?`steps`) in the oracle's conventions, with the scenario's `config` \((.*?)\)",
                     text)
    assert said, "docs/vllm.md names what serq vllm scenario prints"
    fields = re.findall(r"`(\w+)`", said.group(1))
    config = re.findall(r"`(\w+)`", said.group(2))
    serq = Path(sys.executable).parent / "serq"
    p = subprocess.run([str(serq), "vllm", "scenario", "vllm/preempt"], capture_output=True, text=True, timeout=50)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert sorted(out) == sorted([*fields, "config"])
    assert sorted(out["config"]) == sorted(config)


def test_the_workspace_has_as_many_distributions_as_docs_architecture_md_says():
    # docs/architecture.md: "serQ is a uv workspace of N distributions under `packages/`"; dev.py: "the N parts"
    words = {"five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
    parts = [p for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file()]
    arch = re.search(r"a uv workspace of (\w+) distributions", (ROOT / "docs" / "architecture.md").read_text())
    dev = re.search(r"with the (\w+) parts", (ROOT / "dev.py").read_text())
    assert arch and dev
    assert words[arch.group(1)] == words[dev.group(1)] == len(parts)


@pytest.mark.timeout(60)
def test_the_pool_table_is_the_columns_docs_simulator_md_lists(tmp_path):
    # docs/simulator.md, "Pools": the pool table's columns, each named; on a hand-worked case: three sessions
    # at 0 hold one unit of a pool of 2 around a unit of work on fifo(1): two admitted at 0 (done at 1 and 2),
    # the third admitted at 1, done at 3; over a horizon of 10, used (2 + 2 + 1) / 10, queue 1 / 10, wait 1 / 3
    import subprocess
    import sys

    text = " ".join((ROOT / "docs" / "simulator.md").read_text().split())
    said = re.search(r"The report's pool table \(.*?\), per pool member over \[warmup, end\]: (.*?)`check_invariants", text)
    assert said
    named = set(re.findall(r"`(\w+)`", said.group(1)))
    prog = tmp_path / "p.sq"
    prog.write_text("pool p { cap 2; }\nstage s : fifo(1);\nworkload { arrive batch(3); }\n"
                    "session { hold p (1) { run s (1); } }\nrun { horizon 10; }\n")
    serq = Path(sys.executable).parent / "serq"
    p = subprocess.run([str(serq), "run", str(prog)], capture_output=True, text=True, timeout=50)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("pool "))
    header, row = lines[i].split()[1:], lines[i + 1].split()
    assert set(header) <= named
    values = dict(zip(header, row[1:], strict=True))
    assert float(values["used"]) == 0.5 and float(values["queue"]) == 0.1 and float(values["holders"]) == 0.5
    assert float(values["wait"]) == pytest.approx(1 / 3, rel=1e-5) and values["admissions"] == "3"


@pytest.mark.timeout(120)
def test_serq_compare_out_has_the_columns_docs_sweep_md_names(tmp_path):
    # docs/sweep.md, `serq compare`: --out's columns as the text lists them, `b` the mean of the arm named in
    # `arm`, `a` that of the first arm, `base`; the printed block is headed `ARM - BASE`. Hand-computed: a
    # constant observe x = c under --set c=1,3 has the means 1 and 3, the difference 2, at every seed.
    import csv
    import subprocess
    import sys

    text = " ".join((ROOT / "docs" / "sweep.md").read_text().split())
    said = re.search(r"`--out` \(and `compare\(\)`'s DataFrame\) holds a row per arm after the first and figure, "
                     r"its columns (.*?): `arm`", text)
    assert said, "docs/sweep.md lists the columns of serq compare --out"
    columns = re.findall(r"`(\w+)`", said.group(1))
    (tmp_path / "p.sq").write_text("let c = 1;\nworkload { arrive batch(1); }\nsession { observe x = c; }\n"
                                   "run { horizon 10; }\n")
    serq = Path(sys.executable).parent / "serq"
    p = subprocess.run([str(serq), "compare", "p.sq", "--set", "c=1,3", "--seeds", "1..2", "--workers", "0",
                        "--no-progress", "--figure", "x.mean", "-o", "c.csv"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=100)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].startswith("c=3 - c=1, paired over 2 seeds")
    with open(tmp_path / "c.csv", newline="") as f:
        reader = csv.DictReader(f)
        (row,) = list(reader)
    assert reader.fieldnames == columns
    assert (row["arm"], row["base"], row["figure"], float(row["a"]), float(row["b"]), float(row["diff"])) == \
        ("c=3", "c=1", "observes.x.mean", 1.0, 3.0, 2.0)


@pytest.mark.timeout(60)
def test_the_names_lib_vllm_sq_takes_are_those_docs_vllm_md_lists(tmp_path):
    # docs/vllm.md: lib/vllm.sq has four definitions, and vllm_request sets the attributes it lists, so a
    # let of one of them is refused; the truth is the library's own text (its defs and its set statements)
    import serq_frontend
    from serq_frontend.diagnostics import CompileError

    lib = (ROOT / "packages/serq-vllm/src/serq_vllm/lib/vllm.sq").read_text()
    code = "\n".join(line.split("//")[0] for line in lib.splitlines())
    text = " ".join((ROOT / "docs" / "vllm.md").read_text().split())
    assert "with four definitions:" in text and len(re.findall(r"^def (\w+)", code, re.M)) == 4
    said = re.search(r"They set the session's attributes (.*?) \(the library's header", text)
    assert said, "docs/vllm.md lists the attributes vllm_request sets"
    listed = re.findall(r"`(\w+)`", said.group(1))
    assert sorted(listed) == sorted(set(re.findall(r"\bset (\w+) =", code)))
    engine = (ROOT / "docs" / "tutorial" / "engine.sq").read_text()
    for name in listed:
        path = tmp_path / f"{name}.sq"
        path.write_text(engine.replace("let rate = 2;", f"let rate = 2;\nlet {name} = 3;"))
        with pytest.raises(CompileError, match=f"`{name}` is a `let`"):  # (a set's words, or an admission binding's)
            serq_frontend.compile(str(path))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tier", ["", "general"])
def test_the_refused_on_re_admission_warning_docs_vllm_md_quotes_is_what_serq_says(monkeypatch, tier):
    # docs/vllm.md, "A request refused after its first token": the pool's warning it quotes word for word is
    # that of `packages/serq-vllm/tests/peer_programs15/load.sq --arrivals 200 --set blocks=40`, whose counts
    # it gives: 598 `ttft` and `hit` samples, 597 records, one refusal on re-admission (598 = 597 + 1) and the
    # engine table's 598 requests; the truth is the page's own text and its arithmetic
    import serq_frontend
    import serq_sim

    text = (ROOT / "docs" / "vllm.md").read_text()
    said = re.search(r"counts it apart from the requests rejected when they first joined the queue \(which have no "
                     r"sample\):\n\n```\n(warning: [^\n]*)\n```\n\nThat is `([^`]*) --arrivals (\d+) --set blocks=(\d+)`: "
                     r"(\d+) `ttft` and\n`hit` samples, (\d+) records and one refusal on re-admission \((\d+) = (\d+) \+ "
                     r"1\), and the engine table's (\d+)\nrequests", text)
    assert said, "docs/vllm.md quotes the refused-on-re-admission warning and the command that prints it"
    quoted, program, arrivals, blocks = said.group(1), said.group(2), int(said.group(3)), int(said.group(4))
    samples, records, total, of_records, engine = (int(said.group(i)) for i in range(5, 10))
    assert (total, of_records) == (samples, records) and samples == records + 1 == engine
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(serq_frontend.compile(str(ROOT / program), sets={"blocks": blocks}), arrivals=arrivals)
    assert [n for n in r.result.notes if n.startswith("warning: pool kv rejected")] == [quoted]
    assert (len(r.observe("ttft")), len(r.observe("hit")), r.result.requests.completed) == (samples, samples, records)
    assert r.stage("engine").requests == engine
