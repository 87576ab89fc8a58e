"""Every number option of every installed command refuses NaN, and inf or a negative value where it means
nothing, as a usage error naming the option (status 2): `serq run F --horizon nan` said "warmup 0 is not
below the horizon nan", `serq ir F --horizon nan` wrote `"horizon": null` (no horizon at all), and a NaN
`--warmup` slipped past every comparison (serq.options.Number, Integer)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner
from host_helpers import commands, mm1_ir, run_serq
from serq.cli import build_cli
from serq.options import Integer, Number
from serq.plugins import get_plugin_manager


def _number_options():
    cli = build_cli(get_plugin_manager())
    ctx = click.Context(cli)
    for name, cmd in commands(cli, ctx):
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.is_flag and isinstance(
                    p.type, click.types.FloatParamType | click.types.IntParamType | Number | Integer):
                yield name, max(p.opts, key=len), p.type


OPTIONS = list(_number_options())


def test_every_number_option_is_serqs():
    # click's FLOAT takes 'nan'; every float option is a Number, every whole-number one an Integer or a
    # click.IntRange (whose values cannot be NaN)
    found = {(" ".join(name), opt) for name, opt, _ in OPTIONS}
    for name, opt, t in OPTIONS:
        assert isinstance(t, Number | Integer | click.IntRange), (name, opt, t)
    for cmd in ("run", "ir", "sweep", "compare"):
        for opt in ("--horizon", "--warmup", "--arrivals", "--seed" if cmd in ("run", "ir") else "--arrivals"):
            assert (cmd, opt) in found, (cmd, opt)
    assert ("run", "--max-wall") in found and ("sweep", "--max-wall") in found and ("sweep", "--tol") in found


@pytest.mark.parametrize("name, opt", [(name, opt) for name, opt, t in OPTIONS if isinstance(t, Number)])
def test_nan_is_a_usage_error_naming_the_option(tmp_path, name, opt):
    f = str(mm1_ir(tmp_path))
    cli = build_cli(get_plugin_manager())
    for value in ("nan", "-nan", "NaN"):
        r = CliRunner().invoke(cli, [*name, opt, value, f])
        assert r.exit_code == 2, (r.output, r.exception)
        assert f"Invalid value for '{opt}': {value} is not " in r.output, r.output
        assert "Traceback" not in r.output


@pytest.mark.parametrize("name, opt, value, ok", [
    (("run",), "--horizon", "inf", True), (("run",), "--horizon", "0", False), (("run",), "--horizon", "-1", False),
    (("run",), "--horizon", "-inf", False), (("run",), "--warmup", "inf", False),
    (("run",), "--warmup", "1e999", False), (("run",), "--warmup", "-0.5", False), (("run",), "--warmup", "0", True),
    (("run",), "--max-wall", "inf", False), (("run",), "--max-wall", "0", False),
    (("run",), "--seed", "-1", False), (("run",), "--seed", str(2**64), False), (("run",), "--seed", str(2**64 - 1), True),
    (("run",), "--arrivals", "0", False), (("run",), "--arrivals", "1.5", False),
    (("ir",), "--horizon", "-2", False), (("sweep",), "--warmup", "-1", False), (("compare",), "--horizon", "0", False),
    (("sweep",), "--tol", "inf", False), (("sweep",), "--tol", "0", False), (("sweep",), "--max-wall", "-3", False),
])
def test_values_that_mean_nothing(name, opt, value, ok):
    t = next(t for n, o, t in OPTIONS if n == name and o == opt)
    if ok:
        t.convert(value, None, None)
    else:
        with pytest.raises(click.BadParameter) as e:
            t.convert(value, None, None)
        # (1e999: beyond the doubles, refused as such, serq.numbers.beyond_doubles)
        assert " is not " in str(e.value.message) or " is beyond the range of a double " in str(e.value.message)


@pytest.mark.parametrize("args, message", [
    (["run", "{f}", "--horizon", "nan"], "invalid value for '--horizon': nan is not a positive number of seconds, or inf"),
    (["ir", "{f}", "--warmup", "nan"], "invalid value for '--warmup': nan is not a finite number of seconds, at least 0"),
    (["run", "{f}", "--seed", "-1"], "invalid value for '--seed': -1 is not a seed, a whole number from 0 to 2**64 - 1"),
])
def test_through_the_command(tmp_path, args, message):
    r = run_serq(*[a.format(f=mm1_ir(tmp_path)) for a in args])
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.stdout == ""


def test_a_nan_set_is_refused_at_the_set(tmp_path):
    src = tmp_path / "p.sq"
    src.write_text("let g = 1;\nstage s : delay;\nworkload { arrive poisson(1); }\nsession { observe x = g; "
                   "run s (1); }\nrun { horizon 5; }\n")
    for cmd in ("run", "check", "ir"):
        r = run_serq(cmd, str(src), "--set", "g=nan")
        # a usage error (status 2), as a bad value of every other flag is (serq.errors.UsageError)
        assert r.returncode == 2 and r.stderr == "error: --set g=nan: NaN is not the value of a constant (a number " \
            "or inf)\n", r.stderr
    assert run_serq("run", str(src), "--set", "g=inf").returncode == 0


def test_the_api_refuses_the_run_overrides_too(tmp_path):
    # what the sweep and other callers hand serq.loading.apply_run_overrides
    import serq_ir
    from serq.errors import UserError
    from serq.loading import apply_run_overrides

    program = serq_ir.load(str(mm1_ir(tmp_path)))
    for kw, message in ((dict(horizon=float("nan")), "--horizon nan: is not a positive number of seconds, or inf"),
                        (dict(horizon=0.0), "--horizon 0: is not a positive"),
                        (dict(warmup=float("nan")), "--warmup nan: is not a finite number"),
                        (dict(warmup=float("inf")), "--warmup inf: is not a finite number")):
        with pytest.raises(UserError, match=message.replace("(", r"\(")):
            apply_run_overrides(program, **kw)
    assert apply_run_overrides(program, horizon=float("inf")).run.horizon == "inf"
