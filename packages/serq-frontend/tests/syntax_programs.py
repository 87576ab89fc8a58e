"""The minimal programs of language.txt §2's productions (test_conformance_syntax.py's PROGRAMS), shared with
the tests that run every production through other checks (test_conformance_round21.py): test modules do not
import one another."""

W = "workload { arrive poisson(1); turn { set n = 10; } }\n"
S = "stage s : fifo;\n"
E = "pool kv { cap 100; block 4; preempt lifo; }\nstage E : step { budget 8; cost 1; memory kv; }\n"

# -- the stations of a disaggregated path: prefill family, decode family, gateway, pull ---------------

WL = ("workload { arrive poisson(1); hidden o; turn { set prompt = 10; set o = 3; } "
      "session { turn; request gw; end; } }\n")
PQ = ("queue P[2] : prefill { pool kv { cap 100; } serve fifo; nic ps(5); prefill (prompt) "
      "{ hold kv (prompt) { run (prompt); } cache (prompt) lease kv (inf); } }\n")
QQ = PQ.replace("queue P[2]", "queue Q")
DQ = ("queue D[2] : decode { pool kv { cap 100; } serve fifo; nic ps(5); decode (prompt) from src "
      "{ hold kv (prompt) { transfer (prompt) from src to kv (prompt); run (o); } } }\n")
GW = ("queue gw : gateway { route { choose i in 2 by (queue(P[i])); P[i].prefill (prompt); "
      "choose j in 2 by (queue(D[j])); D[j].decode (prompt) from P[i]; } }\n")
PULL = "D pull P latency 0.5 share maxmin;\n"
PD = PQ + QQ + DQ + GW + PULL + WL

PRODUCTIONS = {
    "let_def_use_of_expression": "let K = 2;\ndef f(x) = x * K + 1;\ndef g(y) { run s (f(y)); }\n" + S + W
    + "session { turn; g(n); end; }\n",
    "pool_and_stage_arrays": "pool kv[2] { cap 4; }\nstage d[2] : delay;\n" + W
    + "session { turn; choose k in 2 by (used(kv[k]), -k); hold kv[k] (1) { run d[k] (1); } end; }\n",
    "every_plain_kind": "share bottleneck;\nstage a : fifo;\nstage b : fifo(3);\nstage c : ps(min(present, 4));\n"
    "stage d : delay;\nstage x : ps(2);\nstage y : ps(3);\n" + W
    + "session { turn; run a (1); run b (1); run c (1); run d (1); run x, y (1); end; }\n",
    "step_with_every_clause": "pool reqs { cap 2; admit via E; }\n"
    "pool kv { cap 100; block 4; evict by (age, -size); preempt by (-admission, serial) requeue tail; "
    "queue by (-waited, serial); reserve held; }\n"
    "stage E : step { budget 8; cost 0.1 + tokens + attention + decoders + kv_decode + kv_prefill; chunk 4; "
    "serve by (remaining, decoding, admission); memory kv; }\n" + W
    + "session { turn; hold reqs (1), kv (1) reserve (n) reuse (0) { run E prefill (n) growing kv; "
    "run E decode (2) growing kv; } cache (n); end; }\n",
    "serve_decode_first": E.replace("memory kv;", "serve decode first; memory kv;") + W
    + "session { turn; hold kv (1) { run E decode (n) growing kv; } end; }\n",
    "serve_exclusive_prefill": E.replace("memory kv;", "serve exclusive prefill; memory kv;") + W
    + "session { turn; hold kv (1) { run E prefill (n) growing kv; } end; }\n",
    "spill_grow_drop_load_release": "stage s : fifo;\nstage up : delay;\npool host { cap 1000; }\n"
    "pool kv { cap 100; block 4; preempt none; queue fifo; evict lru; "
    "spill host via up (size / 10) when (size > 4 && waiting >= 0); }\npool b { cap 50; }\n" + W
    + "session { turn; hold kv (1) { grow kv (2); run s (1); } cache (3) lease kv (5); "
    "hold b (2) { load b (1); release kv; run s (1); } drop kv; end; }\n",
    "every_arrival": "".join(f"workload {{ arrive {a}; }}\n" for a in ["renewal(~h2(2, 4))"])
    + S + "session { run s (1); end; }\n",
    "closed_batch_none_workloads": S + "workload { arrive closed(3); init { set K = 0; } "
    "turn { set K = K + 1; } hidden K; }\nsession { turn; run s (K); branch (K > 2) { end; } }\n",
    "arrive_batch": S + "workload { arrive batch(4); }\nsession { run s (1); }\n",
    "arrive_none": S + "workload { arrive none; }\nsession { run s (1); }\n",
    "expressions": S + W + "session { turn; set a = (1 + 2 * 3 - 4 / 2) % 5; set b = (a < 3) + (a <= 3) + (a > 3)"
    " + (a >= 3) + (a == 3) + (a != 3); set c = !(a > 0) || (b > 1 && a < 9) ? 1 : 0; "
    "set d = ~exp(1) + ~det(2) + ~uniform(0, 1) + ~erlang(2, 1) + ~h2(1, 4) + ~bernoulli(0.5); "
    "set e = min(1, 2) + max(1, 2, 3) + abs(-1) + floor(1.5) + ceil(1.5) + sqrt(4) + exp(0) + ln(1) "
    "+ pow(2, 3) + queue(s) + busy(s) + work(s) + est_lambda(s) + est_rho(s) + est_wait(s) + now; "
    "observe x = e + turn_no + serial + cached + computed; end; }\n",
    "pool_observables_and_gauges": "pool p { cap 8; block 2; }\n" + S + W
    + "gauge u = used(p) + free(p) + holders(p) + queued(p) + blocksize(p);\n"
    "gauge z = max j in 2 (j) - min j in 2 (j) + sum j in 2 (j);\n"
    "session { turn; hold p (1) { set c = cachedin(p); run s (1); } end; }\n",
    "price_and_budget_left": E + "stage h : ps(4);\n" + W
    + "session { turn; set q = price(h, 1, 2); hold kv (min(n, budget_left(E))) { run E prefill (n) growing kv; } "
    "end; }\n",
    "branch_loop_choose_end": "stage s[3] : fifo;\n" + W
    + "session { turn; loop { choose j in 3 by (queue(s[j]), j); run s[j] (1); "
    "branch with (0.5) { end; } else { turn; } } }\n",
    "run_block": S + W + "session { turn; run s (1); end; }\nrun { horizon 100; warmup 1; seed 3; arrivals 5; }\n",
    "the_two_sides": S + "workload { arrive poisson(1); turn { set n = 1; } session { turn; loop { request; "
    "branch (n > 3) { end; } turn; } } }\nserver { set m = n; run s (m); }\n",
    "queues_pull_and_gateway": PD,
    "queue_family_of_one_self_and_mark": "queue D[1] : decode { pool kv { cap 10; } serve fifo; "
    "decode (prompt) { hold kv (prompt) { run (prompt + self); mark ft; run (1); } } }\n"
    "queue gw : gateway { route { D[0].decode (prompt); set t = D.ft; } }\n"
    "gauge g = used(D.kv) + used(D[0].kv);\n"
    "workload { arrive poisson(1); turn { set prompt = 1; } session { turn; request gw; end; } }\n",
    "link_queue_transfer_entry_and_to": "pool a { cap 9; }\npool b { cap 9; }\n"
    "queue L : link { serve ps(10); transfer (m) { run (m); } }\n"
    "queue gw : gateway { route { hold a (1) { run L (1); } lease a (inf); "
    "hold b (1) { L.transfer (3) from a to b (1); } } }\n"
    "workload { arrive poisson(1); session { request gw; end; } }\n",
}


#: productions whose program test_conformance_syntax compiles by other means (a trace file beside it, a link's
#: latency): every other check takes them too
EXTRA = {
    "trace_ordered": S + 'workload { arrive poisson(1); trace "t.csv" ordered; }\n'
    "session { turn; run s (out + new + think + more + forced); end; }\n",
    "link_latency": ("queue L[2] : link { serve ps(10) latency 0.25; }\npool a { cap 9; }\npool b { cap 9; }\n"
                     "share maxmin;\nstage M : ps(5);\nworkload { arrive none; }\n"
                     "session { hold b (1) { transfer on L[1], M (3) from a to b (1); } }\n"),
}

#: every production's program
PROGRAMS = {**PRODUCTIONS, **EXTRA}
