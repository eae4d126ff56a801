#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# smbd's files call each other one way only: read which object defines
# each symbol another object uses (nm), and fail on any cycle among them.
# The pure protocol objects (PURE below: wire encode and decode,
# segmentation and reassembly, credits, keep-alive, descriptors) must
# also use nothing of another smbd object and no verbs or rdma_cm call,
# so that KUnit reaches all of them without a device.
#   scripts/check-layers.py OBJ...
# Prints the edges ("a -> b: symbols") and, on failure, each cycle and
# each pure object's outside symbol.

import subprocess
import sys

PURE = ("smbd_negotiate", "smbd_frag", "smbd_credits", "smbd_keepalive",
        "smbd_desc")
# the RDMA stack's symbols: ib_core, rdma_cm, iw_cm
VERBS = ("ib_", "__ib_", "rdma_", "iw_", "__rdma_")


def nm(obj, *args):
    out = subprocess.run(["nm", *args, obj], check=True,
                         capture_output=True, text=True).stdout
    return out.split("\n")


def main(objs):
    name = {o: o.rsplit("/", 1)[-1].removesuffix(".o") for o in objs}
    defined = {}
    for o in objs:
        for line in nm(o, "--defined-only"):
            f = line.split()
            if len(f) == 3 and f[1].isupper():
                defined[f[2]] = name[o]
    edges = {}
    for o in objs:
        for line in nm(o, "-u"):
            f = line.split()
            if len(f) == 2 and f[1] in defined and defined[f[1]] != name[o]:
                edges.setdefault(name[o], {}).setdefault(
                    defined[f[1]], []).append(f[1])
    for a in sorted(edges):
        for b in sorted(edges[a]):
            print("%s -> %s: %s" % (a, b, " ".join(sorted(edges[a][b]))))

    # Depth-first search; a grey node reached again closes a cycle.
    cycles, colour, path = [], {}, []

    def visit(n):
        colour[n] = "grey"
        path.append(n)
        for m in sorted(edges.get(n, {})):
            if colour.get(m) == "grey":
                cycles.append(path[path.index(m):] + [m])
            elif m not in colour:
                visit(m)
        path.pop()
        colour[n] = "black"

    for n in sorted(name.values()):
        if n not in colour:
            visit(n)
    for c in cycles:
        print("cycle: " + " -> ".join(c))

    impure = []
    for o in objs:
        if name[o] not in PURE:
            continue
        for line in nm(o, "-u"):
            f = line.split()
            if len(f) != 2:
                continue
            if f[1] in defined and defined[f[1]] != name[o]:
                impure.append("%s uses %s of %s" %
                              (name[o], f[1], defined[f[1]]))
            elif f[1].startswith(VERBS):
                impure.append("%s calls %s" % (name[o], f[1]))
    missing = set(PURE) - set(name.values())
    for p in sorted(missing):
        impure.append("%s.o was not given" % p)
    for i in impure:
        print("pure: " + i)
    return 1 if cycles or impure else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: check-layers.py OBJ...", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
