# SPDX-License-Identifier: GPL-2.0
#
# The transport's own CPU per I/O (Documentation/performance.rst,
# "Transport cost per I/O"), from a system-wide cpu-clock profile with
# call chains:
#   perf script -F comm,tid,ip,sym,dso |
#     awk -v client=smbd|stock -v server=smbd|stock -f cost.awk SYMS -
# SYMS (written by scripts/bench.sh from the objects it built) has lines
# "COMPONENT DSO SYMBOL": the functions of each SMB Direct implementation,
# smbd (smbd.ko and the adapters' objects in cifs.ko and ksmbd.ko),
# cifs-rdma (stock cifs's smbdirect.o) and ksmbd-rdma (stock ksmbd's
# transport_rdma.o). SYMBOL "*" takes every function of DSO.
#
# A sample is walked from its leaf towards the root. The first frame in a
# component's function charges the sample to it. The kernel's own
# functions on the way (memcpy, the allocator, locks, wake-ups, DMA
# mapping) are passed over, so a transport is charged what it calls into
# the core kernel; ib_core and rdma_cm are built into the bench kernels,
# so theirs are too (rdma_rw, MR mapping). Any other module (the
# provider, the rest of cifs or ksmbd), user space, and an interrupt,
# softirq or worker entry stop the walk: that time is not the
# transport's, even when the interrupt came while a transport function
# ran.
#
# Output: one line per component with samples,
#   cost COMPONENT SAMPLES
#   cost COMPONENT:sched SAMPLES   (those of them in a switch of the
#                                   thread that slept in the component)
# and "cost busy N" (samples not in the idle loop), "cost total N",
# "cost top COMPONENT SYMBOL N" for the functions charged, and
# "cost leaf COMPONENT SYMBOL N" for the functions the time was spent in
# (the transport's own, or the core kernel's it called).

# The map, less the side of each module that is not loaded: cifs.ko on
# smbd implements cifs's SMB Direct calls under their stock names, as
# ksmbd.ko on smbd does ksmbd's, so a name of [cifs] or [ksmbd] is smbd's
# or the stock code's by the pairing (-v client=smbd|stock server=...).
FNR == NR {
	if (NF < 3)
		next
	if ($2 == "[cifs]" && ($1 == "smbd") != (client == "smbd"))
		next
	if ($2 == "[ksmbd]" && ($1 == "smbd") != (server == "smbd"))
		next
	comp[$2 " " $3] = $1
	next
}

function boundary(s) {
	return s ~ /^(asm_|sysvec_|__sysvec_|common_interrupt|irq_exit|__irq_exit|handle_softirqs|__do_softirq|do_softirq|run_ksoftirqd|process_one_work|worker_thread|kthread|ret_from_fork|entry_SYSCALL|do_syscall_64|irq_poll_softirq|handle_irq_event|__handle_irq)/
}

function finish(   c) {
	if (!depth)
		return
	total++
	if (leaf !~ /idle|halt|mwait|cpuidle/)
		busy++
	if (charged != "") {
		n[charged]++
		if (slept)
			n[charged ":sched"]++
		top[charged " " chsym]++
		spent[charged " " leaf]++
	}
	depth = 0
}

# a sample's first line: "comm tid"
/^[^[:space:]]/ {
	finish()
	done = 0
	slept = 0
	charged = ""
	next
}

/^$/ {
	finish()
	next
}

# a frame: "<ip> <sym> (<dso>)"
{
	ip = $1
	dso = $NF
	gsub(/^\(|\)$/, "", dso)
	# A module perf found on disk is named by its path, one it did not
	# (insmod'ed from elsewhere) as "[name]": the map uses the latter.
	if (dso ~ /\.ko(\.[a-z]+)?$/) {
		sub(/^.*\//, "", dso)
		sub(/\.ko(\.[a-z]+)?$/, "", dso)
		dso = "[" dso "]"
	}
	sym = $2
	for (i = 3; i < NF; i++)
		sym = sym " " $i
	sub(/\+0x[0-9a-f]+$/, "", sym)
	depth++
	if (depth == 1)
		leaf = sym
	if (done)
		next
	# A thread switched out and back in: the switch is charged to whom
	# it slept in, and counted apart (a TCG guest's switch flushes its
	# TLB, which costs far more than it does on hardware).
	if (sym ~ /^(__schedule|schedule|finish_task_switch)/)
		slept = 1
	c = comp[dso " " sym]
	if (c == "")
		c = comp[dso " *"]
	if (c != "") {
		charged = c
		chsym = sym
		done = 1
		next
	}
	if (dso != "[kernel.kallsyms]" || boundary(sym))
		done = 1
}

END {
	finish()
	printf "cost total %d\n", total
	printf "cost busy %d\n", busy
	for (c in n)
		printf "cost %s %d\n", c, n[c]
	for (k in top)
		if (top[k] >= 2)
			printf "cost top %s %d\n", k, top[k]
	for (k in spent)
		if (spent[k] >= 2)
			printf "cost leaf %s %d\n", k, spent[k]
}
