#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# Follow a guest's serial log while its VM runs and say where it is:
# each plan's start and end, with the checks passed and failed so far,
# and a line every minute inside a long plan (with the benchmark's latest
# result); the demo's section headers as they come.
#   tests/vm/vm-progress.py LOGFILE PID [LABEL]
# At the end, LOGFILE.times: each check with the seconds from the result
# before it (or its plan's start) to its own, the longest first, and each
# plan's tail after its last result: where the run's time goes, to the
# second (the log is read once a second when idle).
# Stops when process PID (the VM) is gone and the log is read to its end.
# Writes to standard output; tests/vm/vm-run.sh points it at fd 3.

import os
import re
import sys
import time

PLAN = re.compile(r"SMBD-PLAN: (begin|end) \S*/(\S+)(?: rc=(\d+))?")
TEST = re.compile(r"SMBD-TEST: (ok|not ok|skip) (.*?)(?: - |\r?$)")
BENCH = re.compile(r"SMBD-BENCH: provider=(\S+) group=(\S+) test=(\S+) rep=(\S+)")
DEMO = re.compile(r"^(==|--) ")
KTAP = re.compile(r"^\[\s*[\d.]+\] ( *)(ok|not ok) \d+\b")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def main(path, pid, label):
    t0 = time.monotonic()
    counts = {"ok": 0, "not ok": 0, "skip": 0}
    plan, plan_t, plan_counts, last_beat = None, 0.0, None, t0
    deeper = {}     # KTAP: indent -> a deeper result since the last here
    bench = [0, ""]  # results, the latest one
    buf = b""
    times = []      # (seconds since the result before, plan, check)
    last_mark = t0

    def say(msg):
        m, s = divmod(int(time.monotonic() - t0), 60)
        print("  %s %2d:%02d %s" % (label, m, s, msg), flush=True)

    def so_far():
        txt = "%d passed, %d failed" % (counts["ok"], counts["not ok"])
        if counts["skip"]:
            txt += ", %d skipped" % counts["skip"]
        return txt + " so far"

    while not os.path.exists(path) and alive(pid):
        time.sleep(0.5)
    with open(path, "rb") as f:
        while True:
            chunk = f.read(65536)
            if not chunk:
                if not alive(pid):
                    break
                now = time.monotonic()
                if plan and now - last_beat >= 60:
                    last_beat = now
                    extra = ""
                    if bench[0]:
                        extra = "; %d benchmark results, latest %s" % tuple(bench)
                    say("in %s for %d s: %s%s" % (plan, now - plan_t,
                                                  so_far(), extra))
                time.sleep(1)
                continue
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8", "replace").rstrip("\r")
                m = TEST.search(line)
                if m:
                    now = time.monotonic()
                    times.append((now - last_mark, plan or "-", m.group(2)))
                    last_mark = now
                    counts[m.group(1)] += 1
                    if m.group(1) == "not ok":
                        say("not ok %s" % m.group(2))
                    continue
                m = BENCH.search(line)
                if m:
                    bench[0] += 1
                    bench[1] = "%s %s %s (round %s)" % m.groups()
                    continue
                if DEMO.match(line):
                    say(line)
                    continue
                m = KTAP.match(line)
                if m:
                    # KUnit: only leaves count, as tests/vm/check-log.py
                    # counts them (a result with no deeper one before it).
                    ind = len(m.group(1))
                    leaf = not deeper.get(ind, False)
                    deeper = {k: True for k in range(ind)}
                    deeper[ind] = False
                    if leaf:
                        skip = re.search(r"\s#\s*SKIP\b", line, re.I)
                        counts["skip" if skip else m.group(2)] += 1
                    continue
                m = PLAN.search(line)
                if not m:
                    continue
                if m.group(1) == "begin":
                    plan, plan_t = m.group(2), time.monotonic()
                    plan_counts = dict(counts)
                    last_beat = last_mark = plan_t
                    say("%s begins" % plan)
                else:
                    d_ok = counts["ok"] - plan_counts["ok"]
                    d_nok = counts["not ok"] - plan_counts["not ok"]
                    say("%s ends (rc %s, %d s): %d passed, %d failed; %s"
                        % (m.group(2), m.group(3), time.monotonic() - plan_t,
                           d_ok, d_nok, so_far()))
                    now = time.monotonic()
                    times.append((now - last_mark, m.group(2),
                                  "(after its last result)"))
                    last_mark = now
                    plan = None
    if plan:
        times.append((time.monotonic() - last_mark, plan,
                      "(unfinished when the VM ended)"))
    try:
        with open(path + ".times", "w") as f:
            for t, p, name in sorted(times, key=lambda x: -x[0]):
                f.write("%.0f %s %s\n" % (t, p, name))
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: vm-progress.py LOGFILE PID [LABEL]")
    try:
        sys.exit(main(sys.argv[1], int(sys.argv[2]),
                      sys.argv[3] if len(sys.argv) > 3 else "vm"))
    except BrokenPipeError:
        sys.exit(0)    # nobody is watching any more
