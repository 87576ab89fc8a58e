"""Figures and names the docs give of the code, each checked against the code it describes.

The truth is the doc's own text, read here: a constant changed without its doc (or a doc changed without
its constant) fails.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")


def _flat(path: str) -> str:
    return " ".join((ROOT / path).read_text(encoding="utf-8").split())


@pytest.mark.timeout(60)
def test_the_csv_writers_chunk_is_the_one_the_docs_give():
    # packages/serq-report/README.md ("written 2¹⁴ cells at a time") and docs/simulator.md ("formats 2¹⁴ cells at a
    # time"); the README said 2¹⁸ rows, the chunk of before serq_report.csv.CHUNK counted cells
    from serq_report import csv

    for doc, pattern in (("packages/serq-report/README.md", r"written 2([⁰¹²³⁴⁵⁶⁷⁸⁹]+) cells at a time"),
                         ("docs/simulator.md", r"formats 2([⁰¹²³⁴⁵⁶⁷⁸⁹]+) cells at a time")):
        said = re.search(pattern, _flat(doc))
        assert said, f"{doc} gives the CSV writer's chunk"
        assert csv.CHUNK == 2 ** int(said.group(1).translate(SUPERSCRIPT)), doc


@pytest.mark.timeout(60)
def test_the_functions_the_serq_report_readme_lists_take_the_arguments_it_shows():
    # packages/serq-report/README.md, "API": each line `serq_report.NAME(ARGS)`; every argument shown is a
    # parameter of that name (in that order, the positional ones), and every parameter it leaves out has a default
    import serq_report

    text = (ROOT / "packages/serq-report/README.md").read_text(encoding="utf-8")
    api = text[text.index("## API"):text.index("## Adding a format")]
    lines = re.findall(r"^serq_report\.(\w+)\((.*?)\)(?: ->|\s{2,}#|$)", api, re.M)
    assert len(lines) >= 10
    for name, args in lines:
        fn = getattr(serq_report, name)
        shown = [a.split("=")[0].split(":")[0].strip() for a in args.split(",") if a.strip() not in ("", "*")]
        params = inspect.signature(fn).parameters
        assert list(params)[:len(shown)] == shown, (name, shown, list(params))
        left = [p for p in list(params.values())[len(shown):] if p.default is inspect.Parameter.empty]
        assert not left, (name, left)


@pytest.mark.timeout(60)
def test_the_first_party_order_and_entry_points_docs_hooks_md_gives_are_serqs():
    # docs/hooks.md, start-up: "serQ's own distributions first, in the order `serq`, …" is serq.plugins.FIRST_PARTY,
    # and the entry-point names SERQ_DISABLED_PLUGINS takes are those of these distributions (it left out
    # serq-sweep and its `sweep`)
    from importlib.metadata import distribution

    from serq.plugins import FIRST_PARTY

    text = _flat("docs/hooks.md")
    order = re.search(r"serQ's own distributions first, in the order (.*?) \(`serq\.plugins\.FIRST_PARTY`\)", text)
    names = re.search(r"\(comma-separated entry-point names: (.*?), or yours\)", text)
    assert order and names
    assert tuple(re.findall(r"`([\w-]+)`", order.group(1))) == FIRST_PARTY
    entry_points = {ep.name for dist in FIRST_PARTY for ep in distribution(dist).entry_points if ep.group == "serq"}
    assert set(re.findall(r"`(\w+)`", names.group(1))) == entry_points


@pytest.mark.timeout(60)
def test_docs_simulator_md_lists_every_module_of_serq_sim():
    # docs/simulator.md, "Modules": a row names each module (`engine.py`), a package's row each of its modules by
    # name (`pools/`: `model` (…), …); fast.py, records.py, memguard.py and eleven more were in no row
    import serq_sim

    text = (ROOT / "docs" / "simulator.md").read_text(encoding="utf-8")
    table = text[text.index("## Modules"):text.index("## Configuration")]
    rows = {}
    for line in table.splitlines():
        cells = line.split("|")
        if len(cells) > 2:
            for name in re.findall(r"`([\w/.]+)`", cells[1]):
                rows[name] = cells[2]
    src = Path(serq_sim.__file__).parent
    for path in sorted(src.rglob("*.py")):
        if path.name == "__init__.py":
            continue
        rel = path.relative_to(src)
        if len(rel.parts) == 1:
            assert rel.name in rows, f"docs/simulator.md, Modules: no row names {rel.name}"
        else:
            package = f"{rel.parts[0]}/"
            assert package in rows, f"docs/simulator.md, Modules: no row names {package}"
            assert re.search(rf"`{path.stem}(?:\.py)?`", rows[package]), f"the {package} row does not name {path.stem}"


@pytest.mark.timeout(60)
def test_the_serq_frontend_readme_names_every_module():
    # packages/serq-frontend/README.md, "Modules: `parser.py` (…), …": consts.py, names.py, reach.py, stale.py and
    # hookspecs.py were not among them (__init__.py is the package's facade, serq_frontend.compile)
    import serq_frontend

    text = (ROOT / "packages/serq-frontend/README.md").read_text(encoding="utf-8")
    said = set(re.findall(r"`(\w+\.py|\w+/)`", text[text.index("Modules:"):]))
    src = Path(serq_frontend.__file__).parent
    modules = {p.name for p in src.glob("*.py") if p.name != "__init__.py"} | {
        f"{p.name}/" for p in src.iterdir() if p.is_dir() and any(p.glob("*.py"))}
    assert modules <= said, sorted(modules - said)


@pytest.mark.timeout(60)
def test_the_moments_table_of_docs_language_md_is_the_irs_rules():
    # docs/language.md, "Moments": a row a moment of serq_ir.rules.CONTEXT, its context variables those, its Draws
    # column `yes` for the moments of DRAWS_AT; the Arrival moment (`arrive renewal`'s gap: now, draws) had no row
    from serq_ir import rules

    text = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    table = text[text.index("| Moment | Where |"):text.index("A gauge may not read")]
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6:
            rows[cells[0]] = cells
    assert set(rows) == set(rules.CONTEXT)
    for name, cells in rows.items():
        shown = set(" ".join(re.findall(r"`([^`]*)`", cells[2])).split())
        assert shown == set(rules.CONTEXT[name].split()), name
        assert (cells[4] == "yes") == (name in rules.DRAWS_AT), name


@pytest.mark.timeout(60)
def test_the_draws_functions_and_observables_docs_language_md_lists_are_the_languages():
    # docs/language.md, "Expressions": "Draws: `~exp(mean) …`. Functions: `min max …`. Observables: `queue(s) …`, and
    # `blocksize(p)`": the names serq_frontend.names knows, no more and no fewer
    from serq_frontend import names

    text = _flat("docs/language.md")
    said = re.search(r"Draws: `(.*?)`\. Functions: `(.*?)`\. Observables: `(.*?)`, and `(\w+)\(p\)`", text)
    assert said
    assert set(re.findall(r"~(\w+)\(", said.group(1))) == set(names.DRAWS)
    assert set(said.group(2).split()) == set(names.FUNCTIONS)
    assert set(re.findall(r"(\w+)\(", said.group(3))) | {said.group(4)} == set(names.OBSERVABLES)


@pytest.mark.timeout(60)
def test_the_parts_readme_md_says_a_part_depends_on_are_in_its_dependencies():
    # README.md, "How the parts fit": the table's "depends on" column names, for each distribution, only what its
    # pyproject.toml requires (serq-vllm's "the parts above" took in serq-report, which it does not require)
    import tomllib

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(serq[\w-]*)` \| .*? \| (.*?) \|$", text, re.M)
    assert len(rows) == 7
    for dist, depends in rows:
        meta = tomllib.loads((ROOT / "packages" / dist / "pyproject.toml").read_text())["project"]
        required = {re.match(r"[\w-]+", d).group(0) for d in meta["dependencies"]}
        extras = {re.match(r"[\w-]+", d).group(0) for ds in meta.get("optional-dependencies", {}).values() for d in ds}
        for name in re.findall(r"[a-z][\w-]*", depends.split("(")[0]):
            assert name in required, f"README.md: {dist} depends on {name}, which its pyproject.toml does not require"
        for name in re.findall(r"[a-z][\w-]*", depends.split("(", 1)[1] if "(" in depends else ""):
            if name not in ("as", "extras"):
                assert name in extras, f"README.md: {dist}'s extra {name} is none of its optional dependencies"


@pytest.mark.timeout(60)
def test_the_scheduler_class_a_target_names_is_what_docs_vllm_md_says_of_it():
    # docs/vllm.md: `serve by (…)` names `serq_vllm.SerqScheduler`, "a name for it, not an attribute of the package
    # `serq_vllm`" (the bridge makes the class for one serve order, serq_vllm.real); it read as a class vLLM could load
    import serq_vllm
    from serq_vllm import target

    text = _flat("docs/vllm.md")
    assert "names `serq_vllm.SerqScheduler`" in text
    assert "a name for it, not an attribute of the package `serq_vllm`" in text
    assert '"serq_vllm.SerqScheduler"' in Path(target.__file__).read_text(encoding="utf-8")
    assert not hasattr(serq_vllm, "SerqScheduler")


@pytest.mark.timeout(60)
def test_the_signature_docs_language_md_gives_serq_frontend_compile_is_its_own():
    # docs/language.md, "Commands and API": `serq_frontend.compile(path=None, *, …)`, each default as the function's
    # (it showed sets={} and defs={}, whose defaults are None)
    import serq_frontend

    said = re.search(r"`serq_frontend\.compile\((.*?)\) -> serq_ir\.Program`", _flat("docs/language.md"))
    assert said
    actual = inspect.signature(serq_frontend.compile).parameters
    shown = [p.strip() for p in said.group(1).split(",")]
    assert shown[1] == "*" and [p.split("=")[0] for p in shown if p != "*"] == list(actual)
    for p in shown:
        if "=" in p:
            name, default = p.split("=")
            assert repr(actual[name].default) == default, name


@pytest.mark.timeout(60)
def test_the_parts_table_of_docs_architecture_md_is_each_parts_plugin_and_hookspecs():
    # docs/architecture.md, "The parts and their hooks": a row a distribution, its plugin module the module of its
    # entry point, and the hooks it specifies those of its hookspecs module (`…_eviction_orders` read with the prefix
    # of the name before it); a part that specifies none says `—`
    import importlib
    from importlib.metadata import distribution

    from serq.plugins import FIRST_PARTY

    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(serq[\w-]*)` \| `([\w.]+)` \| .*? \| (.*?) \|$", text, re.M)
    assert sorted(d for d, _, _ in rows) == sorted(FIRST_PARTY)
    for dist, module, specifies in rows:
        (entry,) = [ep for ep in distribution(dist).entry_points if ep.group == "serq"]
        assert entry.value == module, dist
        named, prefix = [], ""
        for name in re.findall(r"`((?:…)?\w+)`", specifies.split("(")[0]):
            if name.startswith("…"):
                name = prefix + name[1:]
            else:
                prefix = name[:name.index("register_") + len("register")] if "register_" in name else ""
            named.append(name)
        package = module.split(".")[0]
        try:
            specs = importlib.import_module(f"{package}.hookspecs")
        except ModuleNotFoundError:
            specs = None
        actual = sorted(n for n, f in inspect.getmembers(specs, inspect.isfunction) if hasattr(f, "serq_spec")) \
            if specs else []
        assert sorted(named) == actual, (dist, named, actual)


def _shown(x: float, like: str) -> str:
    """``x`` written with as many decimals as ``like`` has."""
    return f"{x:.{len(like.split('.')[1]) if '.' in like else 0}f}"


@pytest.mark.timeout(300)
def test_the_replay_tables_this_program_column_is_what_the_replay_gives():
    # docs/vllm.md, "The A100 replay": the table's "this program" TTFT and follow-up full-hit at each spacing, and
    # the same figures in examples/replay/vllm_replay.sq's header, are its run's means (seed 1, its run block), to
    # the digits shown; the full-hit at 3.0 s was given as 0.786 where the run's mean is 0.78548
    import serq_frontend
    import serq_sim

    program = ROOT / "examples" / "replay" / "vllm_replay.sq"
    text = (ROOT / "docs" / "vllm.md").read_text(encoding="utf-8")
    table = text[text.index("## The A100 replay"):]
    rows = re.findall(r"^\| ([\d.]+) s[^|]*\| ([\d.]+) / [^|]*\| ([\d.]+) / [^|]*\|", table, re.M)
    assert [s for s, _, _ in rows] == ["5", "4.2", "3.5", "3.0", "2.5"]
    header = re.search(r"^// \(this program: (.*?)\), and$", program.read_text(encoding="utf-8"), re.M)
    assert header
    pairs = [re.findall(r"[\d.]+", pair) for pair in header.group(1).split(";")]
    assert pairs == [[ttft, hit] for _, ttft, hit in rows]
    for spacing, ttft, hit in rows:
        observes = serq_sim.run(serq_frontend.compile(str(program), sets={"spacing": float(spacing)})).result.observes
        assert (_shown(observes["ttft"].mean, ttft), _shown(observes["full_hit"].mean, hit)) == (ttft, hit), spacing


@pytest.mark.timeout(300)
def test_the_throughputs_past_the_knee_are_what_docs_vllm_md_gives():
    # docs/vllm.md, "Past the knee": on rate_knee.sq (seeds 1..3, 300 s, warm-up 30 s) the engine's request
    # throughput is the same figure from 8 req/s on, and the requests table's falls from 8 to 14; the means over
    # the seeds to the digits the text gives
    import serq_sweep

    said = re.search(r"the engine's is ([\d.]+) req/s from (\d+) req/s on, while the requests table's is ([\d.]+) at "
                     r"(\d+) and ([\d.]+) at (\d+)\.", _flat("docs/vllm.md"))
    assert said
    engine, low, at_low, low2, at_high, high = said.groups()
    assert low == low2
    table = serq_sweep.sweep(str(ROOT / "packages/serq-sim/tests/peer_programs39/rate_knee.sq"),
                             sets={"Lambda": [int(low), int(high)]}, seeds="1..3", horizon=300, warmup=30, workers=0,
                             progress=False)
    means = table.groupby("Lambda")[["stages.engine.request_throughput", "requests.request_throughput"]].mean()
    for rate in (int(low), int(high)):
        assert _shown(means.loc[rate, "stages.engine.request_throughput"], engine) == engine, rate
    assert _shown(means.loc[int(low), "requests.request_throughput"], at_low) == at_low
    assert _shown(means.loc[int(high), "requests.request_throughput"], at_high) == at_high


@pytest.mark.timeout(120)
def test_the_no_end_refusals_docs_language_md_quotes_are_what_serq_run_says(tmp_path):
    # docs/language.md, "A run needs a horizon where it runs": the refusal of a run with no end, for `--horizon inf`
    # and at the run block's `horizon inf;`, each quote up to its `…` the start of what serq run prints; the page
    # gave the first as `p.sq: error: …` where serq run said `error: p.sq: …`, then the page as serq run said it; now
    # serq run says it in the form of every other message at a file, `p.sq: error: …`
    import subprocess
    import sys

    text = _flat("docs/language.md")
    by_option = re.search(r"``(p\.sq: error: the run has no end: .*?)…`` for `--horizon inf`", text)
    at_block = re.search(r"``(p\.sq:4:7: error: run \{ horizon inf; \}: the run has no end: )…``", text)
    assert by_option and at_block
    serq = Path(sys.executable).parent / "serq"
    head = "stage d : delay;\nworkload { arrive poisson(1); }\nsession { run d (1); }\n"
    for said, block, args in ((by_option, "run { horizon 10; }\n", ["--horizon", "inf"]),
                              (at_block, "run { horizon inf; }\n", [])):
        (tmp_path / "p.sq").write_text(head + block)
        p = subprocess.run([str(serq), "run", "p.sq", *args], cwd=tmp_path, capture_output=True, text=True, timeout=100)
        assert p.returncode == 1 and p.stderr.startswith(said.group(1)), (said.group(1), p.stderr)


@pytest.mark.timeout(120)
def test_the_missing_file_message_docs_hooks_md_quotes_is_what_serq_sweep_says(tmp_path):
    # docs/hooks.md, serq_register_loaders: a FILE that is not there is told as a missing `.sq` file is, the quote
    # what `serq sweep find x.sq` prints (it ends with the sweep's point, which the quote left out); and the test
    # the page names as the one that fails when a hookspec is missing is test_docs.py's
    import subprocess
    import sys

    text = _flat("docs/hooks.md")
    said = re.search(r"\(`(error: find: [^`]*)` of `serq sweep find x\.sq`", text)
    assert said
    serq = Path(sys.executable).parent / "serq"
    p = subprocess.run([str(serq), "sweep", "find", "x.sq", "--workers", "0", "--no-progress"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=100)
    assert p.returncode != 0 and p.stderr.strip() == said.group(1)
    named = re.search(r"`(test_\w+)` in `packages/serq/tests/test_docs\.py` fails when a hookspec", text)
    assert named and f"def {named.group(1)}(" in (ROOT / "packages/serq/tests/test_docs.py").read_text()


@pytest.mark.timeout(60)
def test_the_sugar_layers_docs_language_md_numbers_are_serq_frontends_in_their_order():
    # docs/language.md, "Sugar": "The built-in layers apply in this order", a numbered item a layer; the layers
    # serq-frontend registers, in registration order (`branch with` is the layer branch_with)
    import json
    import subprocess
    import sys

    text = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    section = text[text.index("## Sugar"):text.index("### Queues")]
    listed = [name.replace(" ", "_") for name in re.findall(r"^\d+\. \*\*([\w ]+)\*\*", section, re.M)]
    p = subprocess.run([str(Path(sys.executable).parent / "serq"), "plugins"], capture_output=True, text=True,
                       timeout=50)
    assert p.returncode == 0, p.stderr
    (frontend,) = [plugin for plugin in json.loads(p.stdout) if plugin["distribution"] == "serq-frontend"]
    assert listed == frontend["registers"]["sugar layers"]


@pytest.mark.timeout(60)
def test_the_definitions_docs_vllm_md_writes_out_are_lib_vllm_sqs():
    # docs/vllm.md's list of lib/vllm.sq's definitions: `reusable(…) = …` and `long_prefill(…) = …` as the library
    # writes them, and vllm_request's parameters, vllm_request_at's the same and `match, threshold`
    text = _flat("docs/vllm.md")
    lib = " ".join((ROOT / "packages/serq-vllm/src/serq_vllm/lib/vllm.sq").read_text(encoding="utf-8").split())
    for name in ("reusable", "long_prefill"):
        said = re.search(rf"- `({name}\(.*?\) = .*?)`:", text)
        assert said and f"def {said.group(1)};" in lib, name
    call = re.search(r"- `vllm_request\((.*?)\)` and the general `vllm_request_at\(…, (.*?)\)`", text)
    assert call
    assert f"def vllm_request({call.group(1)}) {{" in lib
    assert f"def vllm_request_at({call.group(1)}, {call.group(2)}) {{" in lib


@pytest.mark.timeout(60)
def test_the_signature_docs_simulator_md_opens_with_is_serq_sim_runs():
    # docs/simulator.md's first line: `serq_sim.run(program, *, …) -> Report`, every parameter in its order (it
    # left out progress, trace, pm and trace_digest)
    import serq_sim

    said = re.search(r"`serq_sim\.run\((.*?)\) -> Report`", (ROOT / "docs" / "simulator.md").read_text(encoding="utf-8"))
    assert said
    shown = [p.strip() for p in said.group(1).split(",")]
    assert shown[1] == "*"
    assert [p for p in shown if p != "*"] == list(inspect.signature(serq_sim.run).parameters)
