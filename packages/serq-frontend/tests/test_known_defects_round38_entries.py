"""Known defects, round 38, in the frontend: a queue's entry.

10. `run decode (5);` in a queue's entry was ``unknown stage `decode` `` alone: it says that the serving form
    finds its stage and that the kernel's run names the queue's step engine with the mode (`run D decode`);
    both forms it names link, to one program.
"""

from __future__ import annotations

import pytest
import serq_frontend
from sqhelpers import compile_src, ir_bytes, located, refused

pytestmark = pytest.mark.timeout(60)

# ---------------------------------------------------------------- 10. `run decode (…)` in a queue's entry

QUEUE = ("queue D : decode { pool kv { cap 100; block 4; preempt lifo; admit via D; } "
         "serve step { budget 8; cost 1; memory kv; } decode (prompt) "
         "{ hold kv (prompt) { prefill (prompt) growing kv; BODY } } }\n"
         "queue gw : gateway { route { D.decode (prompt); } }\n"
         "workload { arrive poisson(1); hidden o; turn { set prompt = 10; set o = 3; } "
         "session { turn; request gw; end; } }\nrun { horizon 5; }\n")


def test_run_decode_in_an_entry_names_the_queues_engine():
    src = QUEUE.replace("BODY", "run ⟨decode (o);")
    e = refused(src, "unknown stage `decode`: no stage is named `decode`; the serving form `decode (…);` runs on "
                     "the stage it finds (a step engine's iteration), and the kernel's run on a step engine says "
                     "its mode, `run D decode (…);`")
    assert "in the expansion of `D.decode`" in str(e)


def test_the_two_forms_it_names_compile_to_one_program():
    a = compile_src(QUEUE.replace("BODY", "decode (o) growing kv;"))
    b = compile_src(QUEUE.replace("BODY", "run D decode (o) growing kv;"))
    assert ir_bytes(a) == ir_bytes(b)


def test_run_prefill_outside_a_queue_names_the_one_step_engine():
    src = ("pool kv { cap 100; block 4; preempt lifo; }\nstage E : step { budget 8; cost 1; memory kv; }\n"
           "workload { arrive poisson(1); }\nsession { hold kv (1) { run ⟨prefill (2) growing kv; } }\n"
           "run { horizon 5; }\n")
    refused(src, "unknown stage `prefill`: no stage is named `prefill`; the serving form `prefill (…);` runs on "
                 "the stage it finds (a step engine's iteration), and the kernel's run on a step engine says its "
                 "mode, `run E prefill (…);`")


def test_a_stage_named_decode_is_run_as_any_other():
    text, _, _ = located("stage decode : delay;\nworkload { arrive poisson(1); }\nsession { run decode (1); }\n"
                         "run { horizon 5; }\n⟨")
    assert compile_src(text).stages[0].name == "decode"
    with pytest.raises(serq_frontend.CompileError, match="unknown stage `decod`"):
        compile_src(text.replace("run decode", "run decod"))
