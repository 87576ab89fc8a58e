"""Imported last by the fork server of a sweep's local pool, as the last module it preloads (serq_sweep.engines).

The pool starts the server ignoring SIGINT, so that a Ctrl-C at the terminal while the server imports the
modules it preloads prints no traceback (engines._start_forkserver_deaf_to_ctrl_c). Past its preload the
server's loop ignores SIGINT itself, and a process it forks takes the handler the server had when its loop
began: this puts back Python's own there, so that the processes the server starts for anyone else in the
same session (a pool of the caller's own, once a sweep started the server) take Ctrl-C as Python's do. A
sweep's workers ignore it in their initializer (serq_sweep.worker.ignore_sigint), as before.
"""

import signal

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
