"""language.txt §2 and §3 and pool-reference.txt by hand, round 40, the forms this round's simulation cases
use, each broken once: refused at its place with a caret (`⟨` marks where the error must point).

* §2: "kind := fifo [ ( c ) ] | ps ( expr ) | delay | step { … }"; "choose NAME in expr by ( expr , ... )";
  "run STAGE , STAGE [, STAGE]* ( expr )"; §3, Stages: "Every stage of such a run is ps(φ) with a constant φ
  above 0 …, a run names each stage array once …, and a program with one declares its share, which has no
  default"; "the mode is required on a step stage and forbidden elsewhere".
* pool-reference.txt: `preempt by (key, …) [requeue head | tail]`, its keys "may not draw, read
  budget_left(…), or read computed"; `queue by` keys "may not draw"; `waited` a queue key's, `position` a
  preemption key's; `reserve held` an option without argument; §2's context variables "reading it anywhere
  else is a link error rather than a 0".
* program-reference.txt, run: arrivals "a positive integer … Only with an open workload".
"""

from __future__ import annotations

import pytest
from sqhelpers import refused

pytestmark = pytest.mark.timeout(120)

B = "stage d : delay;\nworkload { arrive batch(1); }\n"
H = "session { hold p (1) { run d (1); } }\nrun { horizon 10; }\n"


def pool(opts: str) -> str:
    return f"pool p {{ cap 4; {opts} }}\n" + B + H


REFUSED = [
    # stage kinds and their arguments
    ("stage s : ps(⟨);\n" + B + "session { run s (1); }\n", "unexpected `)`"),
    ("stage s : ps(present⟨, 2);\n" + B + "session { run s (1); }\n",
     "unexpected `,`: `ps` takes one expression, its capacity, and found 2: `ps(capacity)`"),
    ("stage s : fifo(2⟨, 3);\n" + B + "session { run s (1); }\n",
     "unexpected `,`: `fifo` takes one expression, its number of servers, and found 2"),
    ("stage s : delay⟨(2);\n" + B + "session { run s (1); }\n", "a stage declaration ends after its kind"),
    ("stage s : fifo(⟨0);\n" + B + "session { run s (1); }\n", "a fifo has a whole number of servers, at least 1"),
    ("stage s : fifo(⟨2.5);\n" + B + "session { run s (1); }\n", "a fifo has a whole number of servers, at least 1"),
    ("stage s[⟨0] : fifo;\n" + B + "session { run s[0] (1); }\n", "the size of stage `s` must be an integer of at least 1"),
    # choose
    ("stage s[2] : fifo;\n" + B + "session { choose j in 2 by (⟨); run s[j] (1); }\n", "`by` takes its keys, one at least"),
    ("stage s[2] : fifo;\n" + B + "session { choose j in ⟨0 by (j); run s[j] (1); }\n",
     "choose j: the count of candidates is 0"),
    ("stage s : ps(1);\n" + B + "session { ⟨choose s in 2 by (s); run s (1); }\n", "`s` is a stage (at 1:7); an attribute needs another name"),
    # runs over several stages and their share
    ("stage s : ps(1);\nstage t : ps(2);\n" + B + "session { ⟨run s, t (1); }\n",
     "a run over several stages needs the program's `share maxmin;` or `share bottleneck;`"),
    ("stage s : ps(1);\nstage t : ps(present);\n" + B + "session { run s, ⟨t (1); }\nshare maxmin;\n",
     "`t` in a run over several stages: every stage of such a run is ps(φ) with a constant φ above 0"),
    ("stage s : ps(1);\nstage t : fifo;\n" + B + "session { run s, ⟨t (1); }\nshare maxmin;\n",
     "every stage of such a run is ps(φ)"),
    ("stage s : ps(1);\n" + B + "session { run s, ⟨s (1); }\nshare maxmin;\n", "`s` is named twice in one run"),
    ("stage s : ps(1);\n" + B + "session { run s (1); }\n⟨share maxmin;\n", "`share` with no run over several stages"),
    # the mode of a run
    ("stage s : ps(1);\n" + B + "session { ⟨run s prefill (1); }\n", "`s` is no step stage; a mode is for a step stage only"),
    ("stage e : step { budget 4; cost 1; }\n" + B + "session { ⟨run e (1); }\n", "`e` is a step stage, and a run there says"),
    # step options: one serve, keys that do not draw, context variables in their place
    ("stage e : step { budget 4; cost 1; serve by (remaining); ⟨serve decode first; }\n" + B
     + "session { run e prefill (1); }\n", "`serve` is given twice in this step stage"),
    ("stage e : step { budget 4; cost 1; serve by (⟨~exp(1)); }\n" + B + "session { run e prefill (1); }\n",
     "a step stage's serve key may not draw"),
    ("stage e : step { budget ⟨tokens; cost 1; }\n" + B + "session { run e prefill (1); }\n",
     "`tokens` is not readable in a step stage's budget or chunk"),
    ("stage e : step { budget 4; cost 1; chunk ⟨attention; }\n" + B + "session { run e prefill (1); }\n",
     "`attention` is not readable in a step stage's budget or chunk"),
    # preempt by, queue by, reserve held
    (pool("preempt by (⟨);"), "`by` takes its keys, one at least"),
    (pool("preempt by (admission) requeue⟨;"), "unexpected `;`: `requeue` names where a preempted request waits again"),
    (pool("preempt by (admission) requeue ⟨middle;"), "unexpected `middle` (expected head, tail)"),
    (pool("preempt lifo ⟨requeue tail;"), "`preempt lifo` is `preempt by (-admission) requeue head`"),
    (pool("preempt by (admission); ⟨preempt none;"), "pool `p`: `preempt` is given twice"),
    (pool("preempt by (⟨computed);"), "a preemption key may not read `computed`"),
    (pool("preempt by (⟨~exp(1));"), "a preemption key may not draw"),
    (pool("preempt by (⟨waited);"), "`waited` is not readable in a preemption key"),
    (pool("queue by (⟨~exp(1));"), "a pool's queue key may not draw"),
    (pool("queue by (⟨position);"), "`position` is not readable in a pool's queue key"),
    (pool("queue by (waited); ⟨queue fifo;"), "pool `p`: `queue` is given twice"),
    (pool("evict by (⟨waited);"), "`waited` is not readable in an eviction key"),
    (pool("reserve⟨;"), "a pool's option is `reserve held;`"),
    (pool("reserve ⟨all;"), "a pool's option is `reserve held;`"),
    (pool("reserve held; ⟨reserve held;"), "pool `p`: `reserve held` is given twice"),
    ("pool p { cap 4; queue by (⟨o); }\nstage d : delay;\nworkload { arrive batch(1); hidden o; }\n"
     "session { set o = 1; hold p (1) { run d (1); } }\n", "`o` is hidden: a pool's queue key is the scheduler's"),
    ("pool p { cap 4; }\n" + B + "session { set x = ⟨waited; hold p (1) { run d (1); } }\n",
     "`waited` is not readable in a session statement"),
    # run { arrivals }
    ("stage d : delay;\nworkload { arrive closed(2); }\nsession { run d (1); }\nrun { horizon 10; ⟨arrivals 3; }\n",
     "`arrivals` needs an open workload"),
    ("stage d : delay;\nworkload { arrive none; }\nsession { run d (1); }\nrun { horizon 10; ⟨arrivals 3; }\n",
     "`arrivals` needs an open workload"),
    ("stage d : delay;\nworkload { arrive renewal(1); }\nsession { run d (1); }\nrun { horizon 10; arrivals ⟨1e20; }\n",
     "arrivals is a whole number from 1 to 2**53 - 1"),
    # an arrival gap has no session
    ("stage d : delay;\nworkload { arrive renewal(⟨serial); }\nsession { run d (1); }\nrun { horizon 10; }\n",
     "an arrival gap has no session: `serial` is a session attribute"),
]


@pytest.mark.parametrize("src, message", REFUSED, ids=[f"r{i}" for i in range(len(REFUSED))])
def test_refused_at_their_place(src, message):
    refused(src, message)
