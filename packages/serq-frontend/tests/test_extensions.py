"""A plugin's stage kind, eviction order, preemption policy and share policy, named from source as
``@name(args)`` (``share name;``), resolved at link time against what the plugins register."""

from __future__ import annotations

import pytest
import serq
import serq_frontend
import serq_sim.plugin
from serq_frontend.fmt import format_source
from serq_ir import nodes as ir
from sqhelpers import compile_src, make_pm, refused


def unbuilt(*_args):
    """What a kind or policy registers here (the linker checks names only; nothing is built): callable as
    every registration hook's object is called (serq.plugins.CALLABLE_HOOKS)."""


class Kinds:
    """Registers one of each: names only matter to the linker."""

    @serq.hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("batch", unbuilt)
        register("vacation", unbuilt)

    @serq.hookimpl
    def serq_sim_register_eviction_orders(self, register):
        register("largest", unbuilt)

    @serq.hookimpl
    def serq_sim_register_preemption_policies(self, register):
        register("youngest", unbuilt)

    @serq.hookimpl
    def serq_sim_register_share_policies(self, register):
        register("fair", unbuilt)


@pytest.fixture(scope="module")
def pm():
    return make_pm(serq_sim.plugin, Kinds())


TAIL = "workload { arrive poisson(0.5); }\nsession { run svc (~exp(1)); }\n"


def test_a_plugins_stage_kind_with_positional_arguments(pm):
    p = compile_src("let n = 2;\nstage svc : @batch(4, n * 3, inf);\n" + TAIL, pm=pm)
    assert p.stages[0].kind == ir.Extension(name="batch", params=[4.0, 6.0, "inf"])


def test_named_arguments_are_an_object_and_sets_apply(pm):
    p = compile_src("let v = 2;\nstage svc : @vacation(vacation = v, k = 1);\n" + TAIL, pm=pm, sets={"v": 5})
    assert p.stages[0].kind == ir.Extension(name="vacation", params={"vacation": 5.0, "k": 1.0})


def test_no_arguments_no_params(pm):
    assert compile_src("stage svc : @batch;\n" + TAIL, pm=pm).stages[0].kind == ir.Extension(name="batch")


def test_a_plugins_eviction_order_and_preemption_policy(pm):
    p = compile_src("pool kv { cap 4; evict @largest(1); preempt @youngest; }\nstage svc : fifo;\n" + TAIL,
                    pm=pm)
    assert p.pools[0].evict == ir.Extension(name="largest", params=[1.0])
    assert p.pools[0].preempt == ir.Extension(name="youngest")


SHARED = ("stage a : ps(1);\nstage b : ps(2);\n{share}\nworkload {{ arrive poisson(0.5); }}\n"
          "session {{ run a, b (~exp(1)); }}\n")


def test_a_plugins_share_policy_by_its_name(pm):
    assert compile_src(SHARED.format(share="share fair;"), pm=pm).share == "fair"
    assert compile_src(SHARED.format(share="share maxmin;"), pm=pm).share == "maxmin"


def test_an_unknown_share_policy_lists_the_registered_ones(pm):
    refused(SHARED.format(share="⟨share fiar;"), pm=pm,
            message="`share fiar`: unknown share policy `fiar` (plugins register: fair; built in: maxmin, bottleneck)")


def test_an_unknown_stage_kind_is_positioned_and_lists_the_registered_ones(pm):
    refused("stage svc : ⟨@bacth(4);\n" + TAIL, pm=pm,
            message="stage `svc`: unknown stage kind `@bacth` (plugins register: batch, vacation; built in: "
                    "fifo, ps, delay, step)")


def test_an_unknown_eviction_order_and_preemption_policy(pm):
    refused("pool kv { cap 4; evict ⟨@smallest; }\nstage svc : fifo;\n" + TAIL, pm=pm,
            message="pool `kv`: unknown eviction order `@smallest` (plugins register: largest; built in: lru, "
                    "by (…))")
    refused("pool kv { cap 4; preempt ⟨@oldest; }\nstage svc : fifo;\n" + TAIL, pm=pm,
            message="pool `kv`: unknown preemption policy `@oldest` (plugins register: youngest; built in: "
                    "none, lifo, by (…))")


def test_with_no_plugin_the_message_says_so():
    pm = make_pm(serq_sim.plugin)
    refused("pool kv { cap 4; evict ⟨@largest; }\nstage svc : fifo;\n" + TAIL, pm=pm,
            message="unknown eviction order `@largest` (no plugin registers eviction orders; built in")


def test_without_the_simulator_a_plugin_name_names_the_missing_part():
    pm = make_pm()  # the host and the frontend: serq-sim's hooks are not there
    refused("stage svc : ⟨@batch(4);\n" + TAIL, pm=pm,
            message="stage `svc`: `@batch` names a plugin's stage kind, and no installed part registers stage "
                    "kinds: serq-sim owns the hook serq_sim_register_stage_kinds; install serq-sim (pip install "
                    "serq-sim)")
    refused(SHARED.format(share="⟨share fair;"), pm=pm,
            message="`share fair`: `fair` names a plugin's share policy, and no installed part registers")
    # the language's own names need no simulator
    assert compile_src(SHARED.format(share="share bottleneck;"), pm=pm).share == "bottleneck"


def test_the_irs_tags_are_not_plugin_names(pm):
    refused("stage svc : ⟨@Step;\n" + TAIL, pm=pm,
            message="`@Step` is the IR's tag of a built-in stage kind, not a plugin's")


def test_arguments_are_all_named_or_all_positional_and_constant(pm):
    refused("stage svc : @batch(4, ⟨k = 1);\n" + TAIL, pm=pm, message="all named or all positional")
    refused("stage svc : @batch(k = 1, ⟨4);\n" + TAIL, pm=pm, message="all named or all positional")
    refused("stage svc : @batch(k = 1, ⟨k = 2);\n" + TAIL, pm=pm, message="argument `k` is given twice")
    refused("stage svc : @batch(⟨now);\n" + TAIL, pm=pm, message="argument 1 of `@batch` must be a constant")


def test_a_plugin_stage_is_no_step_stage(pm):
    refused("stage svc : @batch;\nworkload { arrive poisson(0.5); }\nsession { ⟨run svc prefill (1); }\n", pm=pm,
            message="`svc` is no step stage")


def test_a_plugin_name_cannot_be_a_builtin_form(pm):
    # `evict lru;` and `stage s : fifo;` stay the built-ins even when a plugin registers the same word
    class Shadow:
        @serq.hookimpl
        def serq_sim_register_stage_kinds(self, register):
            register("fifo", unbuilt)

        @serq.hookimpl
        def serq_sim_register_eviction_orders(self, register):
            register("lru", unbuilt)

    pm2 = make_pm(serq_sim.plugin, Shadow())
    p = compile_src("pool kv { cap 4; evict lru; }\nstage svc : fifo;\n" + TAIL, pm=pm2)
    assert p.stages[0].kind == ir.Fifo() and p.pools[0].evict == ir.EvictLru()
    p = compile_src("pool kv { cap 4; evict @lru; }\nstage svc : @fifo;\n" + TAIL, pm=pm2)
    assert p.stages[0].kind == ir.Extension(name="fifo") and p.pools[0].evict == ir.Extension(name="lru")


def test_the_formatter_keeps_a_plugin_name_whole():
    src = "pool kv {\n  cap 4;\n  evict @largest(k=2);\n}\nstage svc : @batch(4);\n"
    out = format_source(src)
    assert out == "pool kv {\n  cap 4;\n  evict @largest(k = 2);\n}\nstage svc : @batch(4);\n"
    assert format_source(out) == out
    serq_frontend.parse(source=out)


def test_a_queues_serve_takes_a_plugin_kind(pm):
    src = ("queue P : prefill { serve @batch(2); prefill (p) { run (p); } }\nworkload { arrive poisson(0.5); }\n"
           "session { P.prefill (1); }\n")
    p = compile_src(src, pm=pm)
    assert ir.Extension(name="batch", params=[2.0]) in [s.kind for s in p.stages]


def test_the_compile_cache_key_covers_the_plugins_that_register_kinds(pm):
    from serq_frontend.cache import compute_key

    with_kinds = compute_key("p.sq", "/p.sq", "stage svc : @batch;", {}, {}, pm, [])
    without = compute_key("p.sq", "/p.sq", "stage svc : @batch;", {}, {}, make_pm(serq_sim.plugin), [])
    assert with_kinds != without


def test_a_stage_kind_a_sugar_layer_leaves_is_refused_not_taken_for_a_step(pm):
    # a layer whose builder makes a Kind the kernel does not have, and whose rewrite leaves it
    from serq_frontend import ast as A
    from serq_frontend.sugar import SugarLayer

    def build(b, pos, children):
        return A.Kind("odd", pos)

    layer = SugarLayer("odd_kind", '%extend plain_kind: "odd" -> kind_odd\n', {"kind_odd": build},
                       lambda module, ctx: module)

    class Odd:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            register(layer)

    refused("stage svc : ⟨odd;\n" + TAIL, pm=make_pm(serq_sim.plugin, Odd()),
            message="stage `svc`: a stage kind the kernel does not have ('odd'), left by the sugar layer 'odd_kind' ")
