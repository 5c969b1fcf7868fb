"""Runs a command and fails when it leaves a process running after it ends.

    python3 scripts/leftovers.py COMMAND [ARG]...

The command runs with this process as its subreaper (Linux's PR_SET_CHILD_SUBREAPER): a process
it starts and abandons (a server started in the background, a child a test did not kill) is
reparented here instead of to init, so it cannot slip away. After the command ends, and a grace
period for exits already under way, every process still running under this one is listed with
its command line, killed, and the exit status is 1 (or the command's own, when it failed).
"""

import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
GRACE_SECONDS = 5.0


def children(pid):
    """The pids whose parent is `pid`, read from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        state, ppid = fields[0], int(fields[1])
        if ppid == pid and state != b"Z":
            found.append(int(entry))
    return found


def reap():
    """Reaps every exited child, so that a zombie is not counted as a process left running."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("leftovers: this system cannot make a subreaper (prctl failed)", file=sys.stderr)
        return 2
    status = subprocess.call(sys.argv[1:])
    me = os.getpid()
    deadline = time.monotonic() + GRACE_SECONDS
    while True:
        reap()
        left = children(me)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if not left:
        return status
    print(f"leftovers: {len(left)} process(es) still running after `{' '.join(sys.argv[1:])}` ended:",
          file=sys.stderr)
    # A leftover's own children come to this process when it dies: kill them too, round by round.
    for _ in range(20):
        for pid in left:
            print(f"  {pid}: {command_line(pid)}", file=sys.stderr)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.2)
        reap()
        left = children(me)
        if not left:
            break
    return status or 1


if __name__ == "__main__":
    sys.exit(main())
