#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# Turn the benchmark's console log (tests/guest/bench/plan-90-bench.sh,
# booted by scripts/bench.sh) into results:
#   bench-report.py LOG OUTDIR [--doc DOCDIR]
# OUTDIR/results.txt   the table: medians with their spread, ratios to
#                      stock cifs -> stock ksmbd and to raw verbs, targets
# OUTDIR/results.json  the same for tools, with every sample
# OUTDIR/chart.png     the ratios at a glance (python3-matplotlib)
# OUTDIR/profile.txt   the guest's perf profiles
# With --doc, DOCDIR/performance.png and the results block of
# DOCDIR/performance.rst (the literal block from SMBD-BENCH-BEGIN) are
# rewritten from this run; the page's prose stays as it is.
# --previous JSON is the previous landed run's ratios (the
# Documentation/performance.json that --doc or --baseline JSON writes,
# with --commit REV).
# Exit status 0 when the log held results and the summary passed (targets
# missed are reported, not an error); 3 when the summary failed: an SMB
# figure of an smbd pairing below stock's (by more than 5%, or in every
# round), or a ratio to stock fallen by more than 10% since the previous
# landed run; 1 without results.

import json
import re
import statistics
import sys

PAIRS = ["stock.stock", "smbd.stock", "stock.smbd", "smbd.smbd", "tcp"]
PAIR_NAMES = {
    "stock.stock": "stock cifs -> stock ksmbd",
    "smbd.stock": "cifs on smbd -> stock ksmbd",
    "stock.smbd": "stock cifs -> ksmbd on smbd",
    "smbd.smbd": "cifs on smbd -> ksmbd on smbd",
    "tcp": "SMB over TCP",
}
SMB_TESTS = ["write_1m_qd1", "write_1m_qd8", "read_1m_qd1", "read_1m_qd8",
             "randread_4k_qd16", "randwrite_4k_qd16", "randread_4k_qd1"]
# The RDMA operation that moves an SMB2 READ's or WRITE's data: the server
# pulls a WRITE with RDMA Read and pushes a READ with RDMA Write.
RAW_OF = {"write_1m_qd1": "read_bw", "write_1m_qd8": "read_bw",
          "read_1m_qd1": "write_bw", "read_1m_qd8": "write_bw"}


def parse(path):
    samples, profiles, errors, info = [], [], [], []
    prof = None
    with open(path, "rb") as f:
        lines = f.read().decode("utf-8", "replace").replace("\r", "").split("\n")
    for line in lines:
        if prof is not None:
            if line.startswith("SMBD-BENCH-PROFILE-END"):
                profiles.append(prof)
                prof = None
            else:
                prof["lines"].append(line)
            continue
        m = re.match(r"SMBD-BENCH-PROFILE-BEGIN (.*)", line)
        if m:
            prof = {"what": m.group(1), "lines": []}
            continue
        if line.startswith("SMBD-BENCH-ERROR: "):
            errors.append(line[len("SMBD-BENCH-ERROR: "):])
            continue
        if line.startswith(("SMBD-BENCH-BEGIN", "SMBD-BENCH-END", "SMBD-BENCH-INFO",
                            "SMBD-BENCH-COST-TOP", "SMBD-BENCH-COST-LEAF")):
            info.append(line)
            continue
        if line.startswith("SMBD-BENCH-COST: "):
            samples += cost_samples(line[len("SMBD-BENCH-COST: "):])
            continue
        if not line.startswith("SMBD-BENCH: "):
            continue
        body = line[len("SMBD-BENCH: "):]
        js = None
        if " json=" in body:
            body, js = body.split(" json=", 1)
        s = dict(kv.split("=", 1) for kv in body.split() if "=" in kv)
        if js is not None:
            try:
                # fio puts its warnings before the JSON
                fio = json.loads(js[js.find("{"):])
            except ValueError as e:
                errors.append("%s %s %s rep %s: fio JSON unreadable (%s)" %
                              (s.get("provider"), s.get("pair"), s.get("test"),
                               s.get("rep"), e))
                continue
            job = fio["jobs"][0][s["kind"]]
            s["bytes"] = job["io_bytes"]
            s["ios"] = job["total_ios"]
            if s["unit"] == "MB/s":
                s["value"] = job["bw_bytes"] / 1e6
            else:
                s["value"] = job["iops"]
            # The whole I/O, submission included: the stock client sends
            # (and waits for the send to complete) inside io_submit(), so
            # its completion latency alone leaves part of the I/O out.
            # Logs of runs before lat_percentiles have clat only.
            pct = job.get("lat_ns", {}).get("percentile") or \
                job.get("clat_ns", {}).get("percentile", {})
            s["p50_us"] = pct.get("50.000000", 0) / 1000
            s["p99_us"] = pct.get("99.000000", 0) / 1000
            s["slat_us"] = job.get("slat_ns", {}).get("mean", 0) / 1000
        for k in ("value", "cpu", "bytes", "ios", "secs"):
            if k in s:
                s[k] = float(s[k])
        samples.append(s)
    return samples, profiles, errors, info


# The cost part: which SMB Direct code plays each role in each pairing
# (cost.awk's components). smbd.ko serves both roles in smbd.smbd, where
# the two are not told apart.
COST_ROLES = {
    "stock.stock": (("stock", "client", "cifs-rdma"), ("stock", "server", "ksmbd-rdma")),
    "smbd.stock": (("smbd", "client", "smbd"), ("stock", "server", "ksmbd-rdma")),
    "stock.smbd": (("stock", "client", "cifs-rdma"), ("smbd", "server", "smbd")),
    "smbd.smbd": (("smbd", "both", "smbd"),),
}
COST_TESTS = ["randread_4k_qd1", "randread_4k_qd16", "write_1m_qd1", "read_1m_qd8"]


def cost_samples(body):
    """The figures of one cost line: CPU microseconds per I/O of each
    transport in the run (group "cost", pair "IMPL.ROLE@PAIRING"), and
    the transports' share of the busy time."""
    s = dict(kv.split("=", 1) for kv in body.split() if "=" in kv)
    try:
        ios, hz = float(s["ios"]), float(s["hz"])
        busy = float(s.get("busy", 0))
    except (KeyError, ValueError):
        return []
    if ios <= 0 or hz <= 0:
        return []
    out = []
    both = sched_both = 0.0

    def fig(pair, n, sched):
        return {"provider": s["provider"], "group": "cost", "rep": s.get("rep"),
                "pair": pair, "test": s["test"], "unit": "us/IO",
                "value": 1e6 * n / hz / ios, "code_us": 1e6 * (n - sched) / hz / ios,
                "samples": n, "busy_share": 100.0 * n / busy if busy else None}
    for impl, role, comp in COST_ROLES.get(s.get("pair"), ()):
        n = float(s.get(comp, 0))
        sched = float(s.get(comp + ":sched", 0))
        both += n
        sched_both += sched
        out.append(fig("%s.%s@%s" % (impl, role, s["pair"]), n, sched))
    # stock.stock's two roles together, against smbd.smbd's.
    if s.get("pair") == "stock.stock":
        out.append(fig("stock.both@stock.stock", both, sched_both))
    return out


def cost_fig(figs, prov, impl, role, test):
    """The cost of IMPL (smbd or stock) in ROLE (client, server, both):
    smbd's from the mixed pairing where it plays the role alone, stock's
    from stock.stock."""
    pairing = {("smbd", "client"): "smbd.stock", ("smbd", "server"): "stock.smbd",
               ("smbd", "both"): "smbd.smbd"}.get((impl, role), "stock.stock")
    return get(figs, prov, "cost", "%s.%s@%s" % (impl, role, pairing), test)


def key(s):
    return (s["provider"], s["group"], s.get("pair", ""), s["test"])


def aggregate(samples):
    groups = {}
    for s in samples:
        if s.get("rep") == "profile":
            continue
        groups.setdefault(key(s), []).append(s)
    figs = {}
    for k, ss in groups.items():
        vals = [s["value"] for s in ss]
        f = {"provider": k[0], "group": k[1], "pair": k[2], "test": k[3],
             "unit": ss[0]["unit"], "n": len(vals),
             "median": statistics.median(vals), "min": min(vals), "max": max(vals),
             "reps": [(str(s.get("rep")), s["value"]) for s in ss]}
        cpg = [s["cpu"] / (s["bytes"] / 1e9) for s in ss
               if s.get("bytes") and s.get("cpu") is not None and s["cpu"] > 0]
        cpk = [s["cpu"] / (s["ios"] / 1000) for s in ss
               if s.get("ios") and s.get("cpu") is not None and s["cpu"] > 0]
        if cpg:
            f["cpu_s_per_gb"] = statistics.median(cpg)
        if cpk:
            f["cpu_s_per_1000_ios"] = statistics.median(cpk)
        for p in ("p50_us", "p99_us", "slat_us", "perftest", "perftest_typical_us",
                  "perftest_p99_us", "busy_share", "code_us"):
            v = [float(s[p]) for s in ss if s.get(p) is not None]
            if v:
                f[p] = statistics.median(v)
        figs[k] = f
    return figs


def get(figs, prov, group, pair, test):
    return figs.get((prov, group, pair, test))


def ratio(a, b):
    return a / b if a is not None and b else None


def targets(figs, prov):
    """Each target of issue 13 for one provider: (name, value, goal, met)."""
    out = []
    med = lambda f: f["median"] if f else None
    raw = {t: med(get(figs, prov, "verbs", "", t))
           for t in ("send_bw", "write_bw", "read_bw")}
    for t in SMB_TESTS[:4]:
        ours = med(get(figs, prov, "smb", "smbd.smbd", t))
        stock = med(get(figs, prov, "smb", "stock.stock", t))
        goals = [g for g in (stock and 1.2 * stock,
                             raw[RAW_OF[t]] and 0.9 * raw[RAW_OF[t]]) if g]
        goal = min(goals) if goals else None
        out.append(("%s: smbd.smbd >= min(1.2 x stock, 0.9 x raw %s)" % (t, RAW_OF[t]),
                    ours, goal, ours is not None and goal is not None and ours >= goal))
    for t in SMB_TESTS[4:6]:
        ours = med(get(figs, prov, "smb", "smbd.smbd", t))
        stock = med(get(figs, prov, "smb", "stock.stock", t))
        goal = stock and 2 * stock
        out.append(("%s: smbd.smbd >= 2 x stock" % t, ours, goal,
                    ours is not None and goal is not None and ours >= goal))
    for t in ("bulk_up", "bulk_down"):
        ours = med(get(figs, prov, "api", "", t))
        goal = raw["send_bw"] and 0.9 * raw["send_bw"]
        out.append(("api %s >= 0.9 x raw send_bw" % t, ours, goal,
                    ours is not None and goal is not None and ours >= goal))
    ours = med(get(figs, prov, "api", "", "rr_4k"))
    stock = med(get(figs, prov, "smb", "stock.stock", "randread_4k_qd1"))
    goal = stock and 1.5 * stock
    out.append(("api rr_4k >= 1.5 x stock's SMB round trips (4 KiB read, depth 1)",
                ours, goal, ours is not None and goal is not None and ours >= goal))
    # Issue 24: a 4 KiB read at depth 1, in IOPS and in the latency of
    # the whole I/O (submission included).
    a = get(figs, prov, "smb", "smbd.smbd", "randread_4k_qd1")
    b = get(figs, prov, "smb", "stock.stock", "randread_4k_qd1")
    goal = b and 1.1 * b["median"]
    out.append(("randread_4k_qd1: smbd.smbd IOPS >= 1.1 x stock", med(a), goal,
                a is not None and goal is not None and a["median"] >= goal))
    ours = a and a.get("p50_us")
    goal = b and b.get("p50_us") and 0.9 * b["p50_us"]
    out.append(("randread_4k_qd1: smbd.smbd p50 latency <= 0.9 x stock", ours, goal,
                ours is not None and goal is not None and ours <= goal))
    # Issue 24: many connections.
    for t, what, better in SCALE_ROWS:
        a = med(get(figs, prov, "scale", "smbd.smbd", t))
        b = med(get(figs, prov, "scale", "stock.stock", t))
        if a is None and b is None:
            continue
        if better == "more":
            out.append(("scale %s: smbd.smbd >= stock" % t, a, b,
                        a is not None and b is not None and a >= b))
        else:
            out.append(("scale %s: smbd.smbd <= stock" % t, a, b,
                        a is not None and b is not None and a <= b))
    # Issue 41: the transport's own CPU per I/O, each role, at most half
    # of the stock SMB Direct code's.
    for t in COST_TESTS:
        for role in ("client", "server"):
            a = cost_fig(figs, prov, "smbd", role, t)
            b = cost_fig(figs, prov, "stock", role, t)
            if a is None and b is None:
                continue
            ours = a and a["median"]
            goal = b and 0.5 * b["median"]
            out.append(("cost %s %s: smbd's CPU per I/O <= 0.5 x stock's" % (t, role),
                        ours, goal, ours is not None and goal is not None and ours <= goal))
    for t in SMB_TESTS[:4]:
        a = get(figs, prov, "smb", "smbd.smbd", t)
        b = get(figs, prov, "smb", "stock.stock", t)
        ours = a and a.get("cpu_s_per_gb")
        goal = b and b.get("cpu_s_per_gb") and 0.7 * b["cpu_s_per_gb"]
        out.append(("%s: CPU s per GB <= 0.7 x stock" % t, ours, goal,
                    ours is not None and goal is not None and ours <= goal))
    return out


IDLE_RE = re.compile(r"idle|halt|mwait|cpuidle")
# Where a sample's time belongs, by the module (perf's dso) it hit.
GROUPS = [("smbd", ("[smbd]",)), ("siw/rxe", ("[siw]", "[rdma_rxe]")),
          ("cifs", ("[cifs]",)), ("ksmbd", ("[ksmbd]",))]


def profile_shares(prof):
    """Shares of one profile: (busy %, {group: % of busy time}, top symbols).

    The first block of a profile is perf's --sort dso, the second its
    --sort dso,sym (top 40); idle time is read off the symbols.
    """
    dso, syms = {}, []
    for l in prof["lines"]:
        m = re.match(r"\s*([\d.]+)%\s+(\S+)(?:\s+\[[k.]\]\s+(\S+))?", l)
        if not m:
            continue
        pct = float(m.group(1))
        if m.group(3):
            syms.append((pct, m.group(2), m.group(3)))
        else:
            dso[m.group(2)] = dso.get(m.group(2), 0.0) + pct
    if not dso:
        return None
    idle = sum(p for p, _, s in syms if IDLE_RE.search(s))
    busy = max(100.0 - idle, 1e-9)
    shares = {}
    rest = busy
    for g, names in GROUPS:
        v = sum(dso.get(n, 0.0) for n in names)
        shares[g] = 100.0 * v / busy
        rest -= v
    shares["kernel"] = 100.0 * max(rest - sum(
        v for d, v in dso.items() if not d.startswith("[")), 0.0) / busy
    shares["user"] = 100.0 * sum(v for d, v in dso.items() if not d.startswith("[")) / busy
    top = [(100.0 * p / busy, s) for p, _, s in syms if not IDLE_RE.search(s)][:6]
    return busy, shares, top


def profile_table(profiles):
    """Lines that say where the CPU went in each profiled run."""
    L = []
    rows = []
    for p in profiles:
        r = profile_shares(p)
        if r:
            rows.append((p["what"], r))
    if not rows:
        return L
    cols = [g for g, _ in GROUPS] + ["kernel", "user"]
    L.append("Where the CPU goes (perf in the guest, both ends; shares of busy time):")
    L.append("%-44s%6s" % ("run", "busy") + "".join("%9s" % c[:8] for c in cols))
    for what, (busy, shares, top) in rows:
        kv = dict(x.split("=", 1) for x in what.split() if "=" in x)
        name = "%s %s %s" % (kv.get("provider", "?"), kv.get("pair", "?"), kv.get("test", "?"))
        L.append("%-44s%5.0f%%" % (name, busy) +
                 "".join("%8.1f%%" % shares[c] for c in cols))
        L.append("    top: " + ", ".join("%s %.1f%%" % (s, v) for v, s in top))
    L.append("(busy: the share of both vCPUs not idle; smbd: smbd.ko, while the stock"
             " SMB Direct code counts in cifs and ksmbd; kernel: the rest of it, ib_core,"
             " rdma_cm, TCP/IP, the block and page layers, memcpy and crc)")
    L.append("")
    return [l.rstrip() for l in L]


def fmt(v, nd=1):
    if v is None:
        return "-"
    if abs(v) >= 1000:
        return "%.0f" % v
    return ("%%.%df" % nd) % v


def pct(v):
    return "-" if v is None else fmt(v) + "%"


def spread(f):
    if not f:
        return "-"
    if f["n"] < 2:
        return fmt(f["median"])
    return "%s (%s-%s)" % (fmt(f["median"]), fmt(f["min"]), fmt(f["max"]))


MC_TESTS = ("write_1m_qd8", "read_1m_qd8")


# The multichannel runs: label, heading
MC_RUNS = (("ch1", "1 channel"), ("d1ch2", "1 dev, 2 ch"),
           ("ch2", "2 dev, 1 ch each"), ("ch4", "2 dev, 2 ch each"))


def mc_devices(info):
    """Per provider, the multichannel runs' RDMA MiB and connections per
    device, from the plan's lines "SMBD-BENCH-INFO: P mc LABEL TEST rep N:
    RDMA MiB per device: ..." (not the one-channel runs).
    """
    out = {}
    for l in info:
        m = re.match(r"SMBD-BENCH-INFO: (\S+) mc (\S+) (\S+) rep (\S+): RDMA MiB per device: (.*)",
                     l)
        if m and m.group(2) != "ch1":
            out.setdefault(m.group(1), []).append("%s %s rep %s: %s" % (
                m.group(2), m.group(3), m.group(4), m.group(5).strip()))
    return out


mc_split = {}


def table(figs, providers):
    L = []
    for prov in providers:
        L.append("== %s" % prov)
        L.append("")
        L.append("SMB, fio on the mount, O_DIRECT (median (min-max) of the runs):")
        hdr = "%-18s" % "test" + "".join("%22s" % p for p in PAIRS) + \
            "%11s%11s" % ("ours/stock", "ours/raw")
        L.append(hdr)
        for t in SMB_TESTS:
            row = "%-18s" % t
            for p in PAIRS:
                f = get(figs, "tcp", "smb", "tcp", t) if p == "tcp" else \
                    get(figs, prov, "smb", p, t)
                row += "%22s" % spread(f)
            ours = get(figs, prov, "smb", "smbd.smbd", t)
            stock = get(figs, prov, "smb", "stock.stock", t)
            r = ratio(ours and ours["median"], stock and stock["median"])
            rawf = get(figs, prov, "verbs", "", RAW_OF.get(t, ""))
            rr = ratio(ours and ours["median"], rawf and rawf["median"])
            row += "%11s%11s" % (fmt(r, 2) + "x" if r else "-",
                                 fmt(rr, 2) + "x" if rr else "-")
            L.append(row)
        L.append("(1 MiB jobs in MB/s, 4 KiB jobs in IO/s; raw: ib_read_bw for writes,"
                 " ib_write_bw for reads)")
        L.append("")
        L += warmup_lines(figs, prov)
        L += cost_lines(figs, prov)
        L.append("Guest CPU seconds per GB moved (1 MiB) or per 1000 I/Os (4 KiB):")
        L.append("%-18s" % "test" + "".join("%22s" % p for p in PAIRS) + "%11s" % "ours/stock")
        for t in SMB_TESTS:
            row = "%-18s" % t
            k = "cpu_s_per_gb" if "_1m_" in t else "cpu_s_per_1000_ios"
            vals = {}
            for p in PAIRS:
                f = get(figs, "tcp", "smb", "tcp", t) if p == "tcp" else \
                    get(figs, prov, "smb", p, t)
                vals[p] = f and f.get(k)
                row += "%22s" % fmt(vals[p], 2)
            r = ratio(vals["smbd.smbd"], vals["stock.stock"])
            row += "%11s" % (fmt(r, 2) + "x" if r else "-")
            L.append(row)
        L.append("")
        L.append("4 KiB read at depth 1, latency of the whole I/O (submission and completion)"
                 " p50 / p99, and the mean time in io_submit() (us):")
        for p in PAIRS:
            f = get(figs, "tcp", "smb", "tcp", "randread_4k_qd1") if p == "tcp" else \
                get(figs, prov, "smb", p, "randread_4k_qd1")
            if f:
                L.append("  %-32s %8s / %-8s  submit %s" % (
                    PAIR_NAMES[p], fmt(f.get("p50_us")), fmt(f.get("p99_us")),
                    fmt(f.get("slat_us"))))
        L.append("")
        L.extend(variants(figs, prov))
        L.extend(secured(figs, prov))
        L.extend(trace_table(figs, prov))
        L.extend(scale_table(figs, prov))
        L.append("smbd API, smbd to smbd (smbd_test.ko):")
        send = get(figs, prov, "verbs", "", "send_bw")
        for t, what in (("bulk_up", "1 MiB messages, client to server (MB/s)"),
                        ("bulk_down", "1 MiB messages, server to client (MB/s)"),
                        ("rr_4k", "4 KiB request/response (round trips/s)"),
                        ("rr_4k_p50", "  p50 (us)"), ("rr_4k_p99", "  p99 (us)"),
                        ("connect", "connection setups/s")):
            f = get(figs, prov, "api", "", t)
            extra = ""
            if t.startswith("bulk") and f and send:
                extra = "   %.2fx raw ib_send_bw" % (f["median"] / send["median"])
            if t == "rr_4k" and f:
                st = get(figs, prov, "smb", "stock.stock", "randread_4k_qd1")
                if st:
                    extra = "   %.2fx stock's 4 KiB SMB round trips" % (f["median"] / st["median"])
            if f and f.get("cpu_s_per_gb") and t.startswith("bulk"):
                extra += "   %.2f CPU s/GB" % f["cpu_s_per_gb"]
            L.append("  %-42s %18s%s" % (what, spread(f), extra))
        L.append("")
        mc = [(t, [get(figs, prov, "mc", lab, t) for lab, _ in MC_RUNS])
              for t in MC_TESTS]
        if any(any(v) for _, v in mc):
            L.append("SMB3 multichannel, cifs on smbd to ksmbd on smbd, one or two %s devices"
                     " (fio 1 MiB, depth 8, MB/s; each against 1 channel):" % prov)
            L.append("%-14s" % "test" + "".join("%27s" % h for _, h in MC_RUNS))
            for t, v in mc:
                cells = []
                for i, f in enumerate(v):
                    r = ratio(f and f["median"], v[0] and v[0]["median"]) if i else None
                    cells.append("%27s" % (spread(f) + ((" %.2fx" % r) if r else "")))
                L.append("%-14s" % t + "".join(cells))
            L.append("RDMA MiB and ksmbd's connections per device in the multichannel runs"
                     " (its RDMA reads and writes):")
            for l in mc_split.get(prov, []):
                L.append("  " + l)
            L.append("")
        L.append("Raw verbs (perftest over rdma_cm; MB/s timed as a whole process, less a"
                 " short run's time; perftest's own figure after it):")
        for t in ("send_bw", "write_bw", "read_bw", "send_lat"):
            f = get(figs, prov, "verbs", "", t)
            if not f:
                continue
            if t == "send_lat":
                L.append("  %-10s %18s round trips/s  (perftest: typical %s us, 99%% %s us one way)" %
                         (t, spread(f), fmt(f.get("perftest_typical_us"), 2),
                          fmt(f.get("perftest_p99_us"), 2)))
            else:
                L.append("  %-10s %18s MB/s  (perftest: %s MB/s)%s" %
                         (t, spread(f), fmt(f.get("perftest")),
                          "   %.2f CPU s/GB" % f["cpu_s_per_gb"] if f.get("cpu_s_per_gb") else ""))
        mhz = get(figs, prov, "info", "", "cpu_mhz")
        if mhz:
            L.append("  (the guest reports %s MHz, perftest's clock for its own figures)" %
                     fmt(mhz["median"]))
        L.append("")
        L.append("Targets:")
        for name, v, goal, met in targets(figs, prov):
            L.append("  %-4s %-70s %10s  goal %s" % ("met" if met else "MISS", name,
                                                    fmt(v, 2), fmt(goal, 2)))
        L.append("")
    return [l.rstrip() for l in L]


def warmup_lines(figs, prov):
    """smbd.smbd's ratio to stock.stock round by round: a figure that
    rises round after round is still warming up."""
    L = []
    for t in SMB_TESTS:
        a = get(figs, prov, "smb", "smbd.smbd", t)
        b = get(figs, prov, "smb", "stock.stock", t)
        if not a or not b or a["n"] < 2:
            continue
        ra = {r: v for r, v in a.get("reps", [])}
        rb = {r: v for r, v in b.get("reps", [])}
        rs = [fmt(ra[r] / rb[r], 2) for r in sorted(ra, key=lambda x: int(x))
              if r in rb and rb[r]]
        if rs:
            L.append("  %-18s %s" % (t, " ".join(rs)))
    if L:
        L = ["smbd.smbd / stock.stock round by round (a warm-up shows as a rise):"] + L + [""]
    return L


def cost_lines(figs, prov):
    """The transports' own CPU per I/O, smbd against the stock code."""
    L = []
    for t in COST_TESTS:
        for role in ("client", "server", "both"):
            a = cost_fig(figs, prov, "smbd", role, t)
            b = cost_fig(figs, prov, "stock", role, t)
            if not a and not b:
                continue
            r = ratio(a and a["median"], b and b["median"])
            rc = ratio(a and a.get("code_us"), b and b.get("code_us"))
            L.append("%-18s%-8s%20s%20s%11s%9s%9s%11s%9s%9s" % (
                t, role, spread(b), spread(a), fmt(r, 2) + "x" if r else "-",
                fmt(b and b.get("code_us")), fmt(a and a.get("code_us")),
                fmt(rc, 2) + "x" if rc else "-",
                pct(b and b.get("busy_share")), pct(a and a.get("busy_share"))))
    if not L:
        return L
    return ["Transport CPU per I/O (cost part: us of CPU per I/O, median (min-max)):",
            "%-18s%-8s%20s%20s%11s%9s%9s%11s%9s%9s" % (
                "test", "role", "stock", "smbd", "smbd/stock", "code:st", "smbd",
                "smbd/stock", "stock%", "smbd%")] + L + [
        "(a cpu-clock profile with call chains; each sample is charged to the first",
        " SMB Direct function on its stack, the core kernel's functions it calls",
        " included (ib_core's and rdma_cm's, built in), the provider's, cifs's and",
        " ksmbd's own and interrupts not;",
        " client: smbd's in smbd.stock, server: in stock.smbd, both: smbd.smbd against",
        " stock.stock; code: less the switches of threads that slept in the transport;",
        " stock% and smbd%: shares of the busy time)", ""]


def top_lines(info, prov):
    """Per run of smbd.smbd and stock.stock, the transport functions
    charged most and the functions the time went to (the first round)."""
    tops = {}
    for l in info:
        m = re.match(r"SMBD-BENCH-COST-(TOP|LEAF): provider=(\S+) pair=(\S+) test=(\S+)"
                     r" (\S+) (\S+) (\d+)", l)
        if m and m.group(2) == prov and m.group(3) in ("smbd.smbd", "stock.stock"):
            # stock.stock has two transports: say whose each is.
            name = m.group(6) if m.group(3) == "smbd.smbd" else \
                "%s:%s" % (m.group(5), m.group(6))
            tops.setdefault((m.group(4), m.group(3), m.group(1)), []).append(
                (int(m.group(7)), name))
    L = []
    for (t, pair, kind), v in sorted(tops.items()):
        v.sort(reverse=True)
        L.append("  %s %s %s: %s" % (t, pair, "charged" if kind == "TOP" else "spent in",
                                     ", ".join("%s %d" % (n, c) for c, n in v[:6])))
    if L:
        L = ["Transport cost, where (samples of the first round; charged: the first"
             " SMB Direct function on the stack; spent in: the function sampled):"] + L + [""]
    return L


# Figures of the SMB part that must not fall below stock.stock, and the
# share a ratio may lose against the previous landed run's before the
# summary fails.
GATE_PAIRS = ("smbd.stock", "stock.smbd", "smbd.smbd")
FALL = 0.10
# Below stock means below by more than this, or with every round below
# every round of stock: a 0.99x whose rounds overlap stock's is noise.
NOISE = 0.05


def gate(figs, providers, previous):
    """The summary's verdict: (lines, failed). A figure of an smbd pairing
    below stock.stock's (by more than NOISE, or in every round) fails it;
    so does a ratio to stock that fell by more than FALL since the
    previous landed run (same kernel)."""
    L, failed = [], False
    below, near, fell = [], [], []
    prev = {}
    if previous:
        for f in previous.get("ratios", []):
            prev[(f["provider"], f["pair"], f["test"])] = f["ratio"]
    for prov in providers:
        for t in SMB_TESTS:
            b = get(figs, prov, "smb", "stock.stock", t)
            if not b or not b["median"]:
                continue
            for pair in GATE_PAIRS:
                a = get(figs, prov, "smb", pair, t)
                if not a:
                    continue
                r = a["median"] / b["median"]
                apart = a["max"] < b["min"]
                line = "  %-4s %-11s %-18s %.2fx%s" % (
                    prov, pair, t, r, "  (every round below)" if apart
                    else "  (the rounds overlap)")
                if r < 1.0 - NOISE or (r < 1.0 and apart):
                    below.append(line)
                elif r < 1.0:
                    near.append(line)
                pr = prev.get((prov, pair, t))
                if pr and r < (1.0 - FALL) * pr:
                    fell.append("  %-4s %-11s %-18s %.2fx, was %.2fx" % (prov, pair, t, r, pr))
    L.append("Summary:")
    if below:
        failed = True
        L.append("FAIL: below stock cifs -> stock ksmbd:")
        L += below
    else:
        L.append("ok: no SMB figure of an smbd pairing below stock")
    if near:
        L.append("below stock within the spread (less than %d%%, the rounds overlap):" %
                 (100 * NOISE))
        L += near
    if previous is None:
        L.append("(no previous landed run to compare with)")
    elif not previous.get("same_kernel", True):
        L.append("(the previous landed run, %s, was on another kernel (%s): not compared)" % (
            previous.get("commit", "?"), previous.get("kernel", "?")))
    elif fell:
        failed = True
        L.append("FAIL: fell by more than %d%% since the previous landed run (%s):" % (
            100 * FALL, previous.get("commit", "?")))
        L += fell
    else:
        L.append("ok: no ratio fell by more than %d%% since the previous landed run (%s)" % (
            100 * FALL, previous.get("commit", "?")))
    L.append("")
    return L, failed


def ratios(figs, providers):
    """Every smbd pairing's SMB figure as a ratio to stock, for the next run."""
    out = []
    for prov in providers:
        for t in SMB_TESTS:
            b = get(figs, prov, "smb", "stock.stock", t)
            for pair in GATE_PAIRS:
                a = get(figs, prov, "smb", pair, t)
                if a and b and b["median"]:
                    out.append({"provider": prov, "pair": pair, "test": t,
                                "ratio": round(a["median"] / b["median"], 3)})
    return out


TRACE_STEPS = [
    ("c_reg-c_send", "client: buffer registered, SMB2 READ to smbd_send"),
    ("c_send-rx1", "request: send posted to the server's receive completion"),
    ("rx1-s_req", "server: receive completion to ksmbd's connection thread"),
    ("s_req-s_work", "server: connection thread to ksmbd's worker"),
    ("s_work-s_rdma", "server: worker reads the file, to its RDMA Write"),
    ("s_rdma-s_rdma_r", "server: RDMA Write of the 4 KiB, posted and done"),
    ("s_rdma_r-s_write", "server: response built"),
    ("s_write-s_write_r", "server: response send call"),
    ("s_write_r-rx2", "response: send call returned to the client's completion"),
    ("rx2-c_recv_r", "client: receive completion to cifs's reader"),
    ("c_recv_r-c_cb", "client: reader to the read's callback"),
    ("c_cb-c_dereg", "client: callback to deregistration"),
    ("c_dereg-c_dereg_r", "client: deregistration"),
    ("c_dereg_r-end", "client: I/O completed to fio, next one issued"),
]
TRACE_COUNTS = ["switch", "wakeup", "work", "irq_poll", "send_post",
                "recv_post", "send_done", "recv_done"]


def pairs_of(figs, prov, group):
    seen = []
    for (pv, g, pair, _t) in figs:
        if pv == prov and g == group and pair not in seen:
            seen.append(pair)
    order = {p: i for i, p in enumerate(PAIRS)}
    return sorted(seen, key=lambda p: (order.get(p.split(":")[0], 9), p))


def variants(figs, prov):
    """Pairings run with other smbd parameters (CLIENT.SERVER:NAME=VALUE)."""
    L = []
    vs = [p for p in pairs_of(figs, prov, "smb") if ":" in p]
    if not vs:
        return L
    L.append("smbd with other parameters (median (min-max); p50 / p99 us at depth 1):")
    for p in vs:
        for t in SMB_TESTS:
            f = get(figs, prov, "smb", p, t)
            if not f:
                continue
            base = get(figs, prov, "smb", p.split(":")[0], t)
            stock = get(figs, prov, "smb", "stock.stock", t)
            r1 = ratio(f["median"], base and base["median"])
            r2 = ratio(f["median"], stock and stock["median"])
            lat = ""
            if t == "randread_4k_qd1":
                lat = "   %s / %s us" % (fmt(f.get("p50_us")), fmt(f.get("p99_us")))
            L.append("  %-34s %-18s %22s %7s %s  %7s stock%s" % (
                p, t, spread(f), fmt(r1, 2) + "x" if r1 else "-",
                p.split(":")[0], fmt(r2, 2) + "x" if r2 else "-", lat))
    L.append("")
    return L


# Per (provider, pairing): what smbd's connections moved in each round,
# from the plan's "SMBD-BENCH-INFO: P rdma PAIR rep N: reads R (B bytes)
# writes W (B bytes) mrs M sent C S bytes" (C: sent by smbd's initiators,
# the client's; S: by its responders, the server's).
rdma_rounds = {}


def rdma_moved(info):
    out = {}
    for l in info:
        m = re.match(r"SMBD-BENCH-INFO: (\S+) rdma (\S+) rep (\S+): reads (\d+) \((\d+) bytes\)"
                     r" writes (\d+) \((\d+) bytes\) mrs (\d+) sent (\d+) (\d+) bytes", l)
        if m:
            out.setdefault((m.group(1), m.group(2)), []).append(
                {"rep": m.group(3), "rdma_bytes": int(m.group(5)) + int(m.group(7)),
                 "mrs": int(m.group(8)), "client_sent": int(m.group(9)),
                 "server_sent": int(m.group(10))})
    return out


def secured(figs, prov):
    """Pairings mounted with sign or seal (CLIENT.SERVER-OPTION, without
    smbd parameters): each figure against the same pairing without the
    option, the stock pair with it, and the same pairing with the RDMA
    transform turned off (OPTION~noxform), and what smbd moved by RDMA
    and in messages."""
    L = []
    ps = [p for p in pairs_of(figs, prov, "smb") if "-" in p and ":" not in p]
    if not ps:
        return L
    L.append("Signed and sealed mounts (CLIENT.SERVER-OPTION; median (min-max);"
             " against the pairing without the option, the stock pair with it,"
             " and the pairing without the RDMA transform, ~noxform):")
    for p in ps:
        base, opt = p.split("-", 1)
        for t in SMB_TESTS:
            f = get(figs, prov, "smb", p, t)
            if not f:
                continue
            sec = opt.split("~")[0]
            plain = get(figs, prov, "smb", base, t)
            stock = get(figs, prov, "smb", "stock.stock-" + sec, t)
            nox = get(figs, prov, "smb", p + "~noxform", t) if "~" not in opt else None
            r1 = ratio(f["median"], plain and plain["median"])
            r2 = ratio(f["median"], stock and stock["median"]) if base != "stock.stock" else None
            r3 = ratio(f["median"], nox and nox["median"])
            L.append("  %-22s %-18s %22s %7s %-11s %7s stock-%-5s %7s ~noxform" % (
                p, t, spread(f), fmt(r1, 2) + "x" if r1 else "-", base,
                fmt(r2, 2) + "x" if r2 else "-", sec,
                fmt(r3, 2) + "x" if r3 else "-"))
    L.append("What smbd moved in each round (its server's RDMA reads and writes,"
             " its client's registrations, the message bytes each of its ends sent;"
             " an end on the stock code counts nothing):")
    for p in [p for p in pairs_of(figs, prov, "smb")
              if not p.startswith("stock.stock") and ":" not in p]:
        for r in rdma_rounds.get((prov, p), []):
            L.append("  %-22s rep %s: RDMA %8.1f MiB, %6d MRs; messages: client %8.1f MiB,"
                     " server %8.1f MiB" % (
                         p, r["rep"], r["rdma_bytes"] / 1048576.0, r["mrs"],
                         r["client_sent"] / 1048576.0, r["server_sent"] / 1048576.0))
    L.append("")
    return L


def trace_table(figs, prov):
    """The qd1 trace: per step, the median over the I/Os traced."""
    L = []
    ps = pairs_of(figs, prov, "trace")
    if not ps:
        return L
    L.append("One 4 KiB read at depth 1, step by step (median us over the I/Os traced,"
             " kprobe events; tests/guest/bench/trace-qd1.awk):")
    L.append("%-20s" % "step" + "".join("%14s" % p.replace("smbd.smbd:", "")[:13]
                                        for p in ps))
    for t, what in TRACE_STEPS:
        row = "%-20s" % t
        for p in ps:
            f = get(figs, prov, "trace", p, t)
            row += "%14s" % (fmt(f["median"]) if f else "-")
        L.append(row + "   " + what)
    for t, what in (("c_reg-end", "the whole I/O"),
                    ("c_send-c_send_r", "client: the request's send call")):
        row = "%-20s" % t
        for p in ps:
            f = get(figs, prov, "trace", p, t)
            row += "%14s" % (fmt(f["median"]) if f else "-")
        L.append(row + "   " + what)
    L.append("Per I/O (mean):")
    for t in TRACE_COUNTS:
        row = "%-20s" % t
        for p in ps:
            f = get(figs, prov, "tracecount", p, t)
            row += "%14s" % (fmt(f["median"], 2) if f else "-")
        L.append(row)
    L.append("(switch, wakeup: the scheduler's; work: work items run; irq_poll: completion"
             " softirqs; posts and completions of sends and receives, both ends)")
    L.append("")
    return L


SCALE_ROWS = [
    ("setup", "mounts/s, one session and RDMA connection each", "more"),
    ("release", "umounts/s, until rdma_cm holds no connection", "more"),
    ("mem", "KiB in use per connection, both ends (cifs, ksmbd)", "less"),
    ("slab", "  of which slab", "less"),
    ("iops_c1", "4 KiB random read, depth 1, 1 connection (IO/s)", "more"),
    ("iops_c4", "  4 connections at once", "more"),
    ("iops_c16", "  16 connections", "more"),
    ("iops_c64", "  64 connections", "more"),
    ("held", "connections one listener held", "more"),
]


def scale_table(figs, prov):
    """Many connections to one listener: stock.stock against smbd.smbd."""
    ps = pairs_of(figs, prov, "scale")
    if not ps:
        return []
    L = ["Many connections to one ksmbd (a cifs mount with nosharesock each;"
         " median (min-max)):",
         "%-52s" % "" + "".join("%20s" % p[:19] for p in ps) + "%12s" % "ours/stock"]
    for t, what, better in SCALE_ROWS:
        row = "%-52s" % what
        for p in ps:
            row += "%20s" % spread(get(figs, prov, "scale", p, t))
        a = get(figs, prov, "scale", "smbd.smbd", t)
        b = get(figs, prov, "scale", "stock.stock", t)
        r = ratio(a and a["median"], b and b["median"])
        L.append(row + "%12s" % (fmt(r, 2) + "x" if r else "-"))
    L.append("(held: mounts made until one failed or the cap was reached; the"
             " SMBD-BENCH-INFO lines say which)")
    L.append("")
    return L


def chart(figs, providers, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(len(providers), 1, figsize=(12, 4.2 * len(providers)),
                             squeeze=False)
    colors = ["#888888", "#6baed6", "#9ecae1", "#08519c", "#e6550d"]
    for ax, prov in zip(axes[:, 0], providers):
        w = 0.16
        for i, p in enumerate(PAIRS):
            ys = []
            for t in SMB_TESTS:
                f = get(figs, "tcp", "smb", "tcp", t) if p == "tcp" else \
                    get(figs, prov, "smb", p, t)
                b = get(figs, prov, "smb", "stock.stock", t)
                ys.append(f["median"] / b["median"] if f and b and b["median"] else 0)
            xs = [j + (i - 2) * w for j in range(len(SMB_TESTS))]
            ax.bar(xs, ys, w, label=PAIR_NAMES[p], color=colors[i])
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(SMB_TESTS)))
        ax.set_xticklabels(SMB_TESTS, fontsize=8)
        ax.set_ylabel("x stock -> stock (higher is faster)")
        ax.set_title("SMB over %s: fio on the mount, median of runs" % prov)
        ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return True


def rst(lines, doc):
    """Replace the results block of DOC/performance.rst with this run's.

    The block is the literal block that starts with the SMBD-BENCH-BEGIN
    line; the prose around it (how the figures were made, how to read the
    targets, the figures of narrower runs) is the page's own and stays.
    """
    path = doc + "/performance.rst"
    with open(path) as f:
        old = f.read().split("\n")
    start = next((i for i, l in enumerate(old)
                  if l.startswith("   SMBD-BENCH-BEGIN")), None)
    if start is None:
        print("bench-report: no SMBD-BENCH-BEGIN block in %s; not rewritten" % path,
              file=sys.stderr)
        return False
    end = start + 1
    while end < len(old) and (not old[end] or old[end].startswith("   ")):
        end += 1
    # Keep the blank line that ends the literal block.
    while end > start + 1 and not old[end - 1]:
        end -= 1
    body = ["   " + l if l else "" for l in lines]
    with open(path, "w") as f:
        f.write("\n".join(old[:start] + body + old[end:]))
    return True


def main():
    args = sys.argv[1:]
    opts = {}
    while len(args) > 2 and args[-2] in ("--doc", "--previous", "--commit", "--baseline"):
        opts[args[-2]] = args[-1]
        args = args[:-2]
    if len(args) != 2:
        print("usage: bench-report.py LOG OUTDIR [--doc DOCDIR] [--previous JSON]"
              " [--commit REV]", file=sys.stderr)
        return 2
    log, outdir = args
    doc = opts.get("--doc")
    samples, profiles, errors, info = parse(log)
    if not samples:
        print("bench-report: no results in %s" % log, file=sys.stderr)
        for e in errors:
            print("  " + e, file=sys.stderr)
        return 1
    figs = aggregate(samples)
    providers = [p for p in ("siw", "rxe") if any(k[0] == p for k in figs)]
    begin = [l for l in info if l.startswith("SMBD-BENCH-BEGIN")]
    m = re.search(r"kernel=(\S+)", begin[0]) if begin else None
    kernel = m.group(1) if m else "?"
    previous = None
    if opts.get("--previous"):
        try:
            with open(opts["--previous"]) as f:
                previous = json.load(f)
            previous["same_kernel"] = previous.get("kernel") == kernel
        except (OSError, ValueError):
            previous = None
    lines = list(begin)
    mc_split.update(mc_devices(info))
    rdma_rounds.update(rdma_moved(info))
    lines += table(figs, providers)
    for prov in providers:
        lines += top_lines(info, prov)
    lines += profile_table(profiles)
    verdict, failed = gate(figs, providers, previous)
    lines += verdict
    if errors:
        lines.append("Problems during the run:")
        lines += ["  " + e for e in errors]
    with open(outdir + "/results.txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    res = {"figures": list(figs.values()),
           "targets": {p: [{"target": n, "value": v, "goal": g, "met": m}
                           for n, v, g, m in targets(figs, p)] for p in providers},
           "errors": errors,
           "samples": [{k: v for k, v in s.items()} for s in samples]}
    with open(outdir + "/results.json", "w") as f:
        json.dump(res, f, indent=1)
    with open(outdir + "/profile.txt", "w") as f:
        for p in profiles:
            f.write("== %s\n%s\n\n" % (p["what"], "\n".join(p["lines"])))
    if not chart(figs, providers, outdir + "/chart.png"):
        print("bench-report: no matplotlib (python3-matplotlib): no chart", file=sys.stderr)
    if doc and rst(lines, doc):
        chart(figs, providers, doc + "/performance.png")
    # What the next run's summary compares its ratios with.
    baseline = opts.get("--baseline") or (doc and doc + "/performance.json")
    if baseline:
        with open(baseline, "w") as f:
            json.dump({"commit": opts.get("--commit", "?"), "kernel": kernel,
                       "ratios": ratios(figs, providers)}, f, indent=1)
            f.write("\n")
    return 3 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
