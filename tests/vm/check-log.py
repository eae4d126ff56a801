#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# Judge a smbd test VM console log: tests/vm/check-log.sh runs this (see there
# for what is counted and what is printed).

import re
import signal
import sys

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under "| head"

MAX_REPORT_LINES = 40

raw = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
raw = raw.replace("\r", "").replace("\x00", "")

# A kernel console line starts with "[ seconds.micros] ". Kernel output can
# land in the middle of a line a guest program was writing: split there,
# so that each logical line is either kernel (ts set) or user (ts None).
TS = re.compile(r"\[\s*(\d+\.\d{6})\] ")
lines = []  # (lineno, ts, text)
for n, line in enumerate(raw.split("\n"), 1):
    pos = 0
    for m in TS.finditer(line):
        if m.start() > pos:
            lines.append((n, None, line[pos:m.start()]))
        pos = m.start()
    rest = line[pos:]
    m = TS.match(rest)
    if m:
        lines.append((n, m.group(1), rest[m.end():]))
    elif rest or pos == 0:
        lines.append((n, None, rest))

passed, failed, skipped = 0, 0, 0
failures = []  # (kind, name, detail)
out = []

def fail(kind, name, detail=""):
    global failed
    failed += 1
    failures.append((kind, name, detail))

# ---------------------------------------------------------------- markers
# The name runs to the end of the line or to " - " (the reason).
RES = re.compile(r"SMBD-TEST: (ok|not ok|skip) (.+?)(?: +- +(.*?))?\s*$")
EXPECT = re.compile(r"SMBD-KUNIT-EXPECT: (\S+)")
PLAN_END = re.compile(r"SMBD-PLAN: end (\S+) rc=(\d+)")
done = False
expect = []
plan_results = []
for n, ts, text in lines:
    if ts is None and "SMBD-GUEST-DONE" in text:
        done = True
    m = RES.search(text) if ts is None else None
    if m:
        st, name, why = m.group(1), m.group(2), (m.group(3) or "").strip()
        plan_results.append((st, name, why))
        if st == "ok":
            passed += 1
        elif st == "skip":
            skipped += 1
        else:
            fail("test", name, why)
    m = EXPECT.search(text) if ts is None else None
    if m and m.group(1) not in expect:
        expect.append(m.group(1))
    # A plan that died (killed, out of memory, a shell error) fails even
    # when every check it printed passed.
    m = PLAN_END.search(text) if ts is None else None
    # (124 and 143 are timeouts: the guest already printed a not ok.)
    if m and m.group(2) not in ("0", "124", "143"):
        fail("plan", m.group(1), "exited with status %s" % m.group(2))

# ---------------------------------------------------------------- KTAP
# Kernel lines only. A result with no deeper result since its previous
# sibling is a leaf; its suite is the outermost open "# Subtest:".
KT_RES = re.compile(r"^( *)(ok|not ok) (\d+)(?: (?:- )?(.*))?$")
KT_SUB = re.compile(r"^( *)# Subtest: (\S+)")
SKIP_DIR = re.compile(r"\s#\s*SKIP\b(.*)$", re.I)
headers = []  # (indent, name)
deeper = {}   # indent -> a deeper result was seen since the last one here
suites = {}   # suite -> [passed, failed, skipped]
suite_order = []
kunit_fail = []
for n, ts, text in lines:
    if ts is None:
        continue
    m = KT_SUB.match(text)
    if m:
        ind = len(m.group(1))
        headers = [h for h in headers if h[0] < ind] + [(ind, m.group(2))]
        continue
    m = KT_RES.match(text)
    if not m:
        continue
    ind, st, desc = len(m.group(1)), m.group(2), (m.group(4) or "")
    leaf = not deeper.get(ind, False)
    deeper = {k: True for k in range(ind)}
    deeper[ind] = False
    sk = SKIP_DIR.search(desc)
    name = SKIP_DIR.sub("", desc).strip() if sk else desc.strip()
    outer = [h for h in headers if h[0] <= ind]
    suite = outer[0][1] if outer else name
    path = "/".join([h[1] for h in outer[1:]] + [name]) if outer else name
    headers = [h for h in headers if h[0] <= ind]
    if not leaf:
        continue
    if suite not in suites:
        suites[suite] = [0, 0, 0]
        suite_order.append(suite)
    if sk:
        suites[suite][2] += 1
        skipped += 1
    elif st == "ok":
        suites[suite][0] += 1
        passed += 1
    else:
        suites[suite][1] += 1
        fail("kunit", suite if path == suite else suite + ":" + path)

for s in expect:
    if s not in suites:
        fail("kunit", s, "expected suite printed no result")

# ---------------------------------------------------------------- reports
# Kernel lines only, anchored right after the timestamp, in the formats
# the kernel prints; (kind, regex). Follow-on lines of a report already
# open (the Oops after a BUG, the panic after an Oops, the WARNING after a
# "cut here") are not counted again.
REPORTS = [
    ("KASAN", r"BUG: KASAN: "),
    ("KFENCE", r"BUG: KFENCE: "),
    ("UBSAN", r"UBSAN: "),
    ("lockdep", r"WARNING: (possible circular locking|possible recursive locking|"
                r"inconsistent lock state|possible irq lock inversion|"
                r"\S+-safe -> \S+-unsafe lock order|bad unlock balance|"
                r"held lock freed|lock held when returning|suspicious RCU usage|"
                r"lock held at task exit|Nested lock was not taken|"
                r"bad contention detected|lockdep)"),
    ("lockdep", r"BUG: (MAX_LOCKDEP|looking up invalid subclass|key \S+ has not been registered|"
                r"held lock freed)"),
    ("lockdep", r"INFO: trying to register non-static key"),
    ("sleep-in-atomic", r"BUG: (sleeping function called from invalid context|"
                        r"scheduling while atomic|workqueue leaked lock|"
                        r"using smp_processor_id\(\) in preemptible)"),
    ("soft-lockup", r"watchdog: BUG: soft lockup"),
    ("hard-lockup", r"watchdog: Watchdog detected hard LOCKUP"),
    ("workqueue-lockup", r"BUG: workqueue lockup"),
    ("hung-task", r"INFO: task \S.* blocked for more than \d+ seconds"),
    ("rcu-stall", r"rcu: INFO: \S+ (self-)?detected stalls?"),
    ("rcu-stall", r"INFO: rcu[_ ]\S* (self-)?detected stall"),
    ("kernel-BUG", r"kernel BUG at "),
    ("BUG", r"BUG: "),
    ("WARNING", r"WARNING: CPU: \d+ PID: \d+ at "),
    ("WARNING", r"WARNING: "),
    ("Oops", r"Oops(: |\b)"),
    ("general-protection", r"general protection fault"),
    ("panic", r"Kernel panic - not syncing"),
    ("kmemleak-disabled", r"kmemleak: Kernel memory leak detector disabled"),
    ("out-of-memory", r"Out of memory: Killed process"),
    ("alloc-failure", r"\S+: page allocation failure: "),
    ("cut-here", r"-+\[ cut here \]-+"),
]
REPORTS = [(k, re.compile(r)) for k, r in REPORTS]
WINDOW = 300  # kernel lines within which a panic belongs to the report

reports = []  # [kind, first line text, index into lines]
last = None   # kernel line number of the last report start
kn = 0
# A guest booted with smbdtest.kmemleak=off turns kmemleak off itself
# (tests/guest/init.sh) and says so first: the one "disabled" line that
# follows is that request, not kmemleak giving up.
KML_OFF = "SMBD-SETUP: ok kmemleak off by request"
kml_off = False
for i, (n, ts, text) in enumerate(lines):
    if ts is None:
        if text.startswith(KML_OFF):
            kml_off = True
        continue
    kn += 1
    for kind, rx in REPORTS:
        if rx.match(text):
            break
    else:
        continue
    if kind == "kmemleak-disabled" and kml_off:
        kml_off = False
        continue
    if reports:
        gap, prev = kn - last, reports[-1]
        if prev[0] == "cut-here" and gap <= 5:
            prev[0], prev[1], prev[2] = kind, text, i  # named after the splat
            last = kn
            continue
        if kind in ("Oops", "general-protection") and gap <= 15:
            continue  # the Oops line of a BUG: / kernel BUG at report
        if kind == "panic" and gap <= WINDOW:
            continue  # oops=panic / panic_on_warn after a report
    reports.append([kind, text, i])
    last = kn

# The plan that was running at line i (the last "SMBD-PLAN: begin" before it).
def plan_at(i):
    for n, ts, t in reversed(lines[:i]):
        if ts is None and t.startswith("SMBD-PLAN: begin "):
            return t.split()[-1].rsplit("/", 1)[-1]
    return "boot"

# Where a report is, for its name: the CI log may show only the summary.
# "WARNING: CPU: 1 PID: 77 at drivers/x.c:12 foo+0x1/0x2 [mod]" gives
# "drivers/x.c:12 foo [mod]"; other kinds give their first line.
def where(first):
    m = re.search(r" at (\S+) (\S+?)\+0x[0-9a-f]+/0x[0-9a-f]+( \[\w+\])?", first)
    if m:
        return m.group(1) + " " + m.group(2) + (m.group(3) or "")
    return first[:120]

# The first stack frame of a module, for reports whose first line names
# no place (hung task, KASAN): "in recv_done [cifs]".
FRAME = re.compile(r"^\s*(?:\? )?(\w[\w.]*)\+0x[0-9a-f]+/0x[0-9a-f]+ \[(\w+)\]")
def module_frame(text):
    # Reliable frames first; "? " ones are stale stack words at worst.
    for reliable in (True, False):
        for t in text[1:]:
            m = FRAME.match(t)
            if m and (not reliable or "? " not in t[:m.start(1)]):
                return " in %s [%s]" % (m.group(1), m.group(2))
    return ""

# Report text: its kernel lines up to the next report or guest marker. A
# hung task reported again (every 60 s while it stays blocked) counts once.
hung_seen = set()
for r, (kind, first, i) in enumerate(reports):
    end = reports[r + 1][2] if r + 1 < len(reports) else len(lines)
    text = [first]
    for n, ts, t in lines[i + 1:end]:
        if len(text) >= MAX_REPORT_LINES:
            break
        if ts is None and t.startswith("SMBD-"):
            break
        if ts is not None:
            text.append(t)
    if kind == "hung-task":
        task = re.search(r"task (\S+)", first).group(1)
        if task in hung_seen:
            continue
        hung_seen.add(task)
    at = where(first)
    if " at " not in first:
        at += module_frame(text)
    fail("kernel", "%s in %s: %s" % (kind, plan_at(i), at),
         "\n".join(text))

# ---------------------------------------------------------------- kmemleak
inblk, leaks, cur = False, [], None
for n, ts, text in lines:
    if ts is None and "SMBD-KMEMLEAK-BEGIN" in text:
        inblk = True
        continue
    if ts is None and "SMBD-KMEMLEAK-END" in text:
        inblk = False
        continue
    if not inblk or ts is not None:
        continue
    if re.match(r"\s*unreferenced object 0x[0-9a-f]+ \(size \d+\)", text):
        cur = [text.strip()]
        leaks.append(cur)
    elif cur is not None and len(cur) < MAX_REPORT_LINES:
        cur.append(text)
# Every leak fails, the providers' too: the two siw/iw_cm leaks the
# tests used to count as skips are mended in the test kernel
# (tests/kernel/siw-preaccept-cep-leak.patch, tests/kernel/iwcm-dropped-conn-req.patch).
for rec in leaks:
    m = re.search(r"comm \"([^\"]*)\"", "\n".join(rec))
    fail("kmemleak", "leak" + (" (comm %s)" % m.group(1) if m else ""), "\n".join(rec))

if not done:
    fail("guest", "SMBD-GUEST-DONE missing", "guest crashed, hung or timed out")

# ---------------------------------------------------------------- summary
def p(s=""):
    print(s)

p("== guest plan results: %d" % len(plan_results))
for st, name, why in plan_results:
    p("  %-6s %s%s" % (st, name, (" - " + why) if why else ""))
p("== KUnit suites: %d" % len(suite_order))
for s in suite_order:
    ps, fs, ss = suites[s]
    p("  %s: %d cases, %d passed, %d failed, %d skipped" % (s, ps + fs + ss, ps, fs, ss))
for s in expect:
    if s not in suites:
        p("  %s: expected, NO RESULTS" % s)
p("== kernel reports: %d, kmemleak records: %d" % (len(reports), len(leaks)))
if failures:
    p("== FAILURES: %d" % len(failures))
    for kind, name, detail in failures:
        p("-- [%s] %s" % (kind, name))
        if detail and kind in ("kernel", "kmemleak"):
            for l in detail.split("\n"):
                p("   | " + l)
        elif detail:
            p("   " + detail)
tail = "%d passed, %d failed" % (passed, failed)
if skipped:
    tail += ", %d skipped" % skipped
p(tail)
sys.exit(1 if failed else 0)
