"""`corral secret set` at a terminal, for tests/secrets.rs: runs it on a
pseudo-terminal, types VALUE at the prompt (MODE "type": then Enter;
"interrupt": part of it, then Ctrl-C), and prints whether the terminal
echoed while it asked and after it ended, its exit code and what the
terminal showed.

    prompt.py CORRAL STORE_FILE VALUE MODE
"""

import os
import pty
import select
import sys
import termios
import time

corral, store, value, mode = sys.argv[1:5]
pid, fd = pty.fork()
if pid == 0:
    os.environ["CORRAL_SECRETS_FILE"] = store
    os.execv(corral, [corral, "secret", "set", "hostile-secrets", "TOKEN"])

shown = b""


def read(until=None, timeout=20.0):
    global shown
    end = time.time() + timeout
    while time.time() < end and (until is None or until not in shown):
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            if until is None:
                return
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            return
        if not chunk:
            return
        shown += chunk


read(until=b"not echoed")
time.sleep(0.2)
echo_while_asking = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
if mode == "interrupt":
    os.write(fd, value.encode()[:5] + b"\x03")
else:
    os.write(fd, value.encode() + b"\n")
_, status = os.waitpid(pid, 0)
read()
echo_after = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
print("echo while asking:", echo_while_asking)
print("echo after:", echo_after)
print("exit:", os.waitstatus_to_exitcode(status))
print("shown:", shown.decode(errors="replace").replace("\r", ""))
