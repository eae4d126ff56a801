# SPDX-License-Identifier: GPL-2.0
#
# The benchmark's qd1 trace (plan-90-bench.sh, trace_qd1): reads tracefs's
# trace of 4 KiB reads at queue depth 1, one at a time, and cuts it into
# I/Os at each smbd_register_mr() of cifs (the read's buffer is registered
# first). Every I/O is expected to pass these points in this order:
#   c_reg     cifs registers the read's buffer          smbd_register_mr
#   c_send    cifs sends the SMB2 READ                  smbd_send
#   rx1       the server's receive completion           recv_done
#   s_req     ksmbd's connection thread has it          ksmbd_server_process_request
#   s_work    a ksmbd worker runs it                    handle_ksmbd_work
#   s_rdma    RDMA Write of the data, and its return    ksmbd_conn_rdma_write
#   s_write   the response is sent, and its return      ksmbd_conn_write
#   rx2       the client's receive completion           recv_done
#   c_recv_r  cifs's reader returns with it             smbd_recv
#   c_cb      cifs's read callback                      smb2_readv_callback
#   c_dereg   the buffer is deregistered, and return    smbd_deregister_mr
# and ends where the next one registers; the send call (c_send to its
# return, c_send_r) and the whole I/O (c_reg-end) are timed beside the
# chain. Printed: per step, the median and
# the 90th percentile over the I/Os that passed every point, as
#   SMBD-BENCH: provider=P group=trace pair=X test=STEP ... value=US unit=us
# then per I/O the mean count of the scheduler's switches and wake-ups,
# work items run, irq_poll softirqs, sends and receives posted and
# completed (group=tracecount), and one I/O's events in full.
# busybox awk: no asort().

function ts_of(   i) {
	for (i = 1; i <= NF; i++)
		if ($i ~ /^[0-9]+\.[0-9]+:$/) {
			evf = i + 1
			return substr($i, 1, length($i) - 1) + 0
		}
	return -1
}

function isort(a, n,   i, j, v) {
	for (i = 2; i <= n; i++) {
		v = a[i]
		for (j = i - 1; j >= 1 && a[j] > v; j--)
			a[j + 1] = a[j]
		a[j + 1] = v
	}
}

# Close I/O number io at time t (the next registration).
function close_io(t,   k, ok, d) {
	if (!io)
		return
	m["end"] = t
	ok = "c_send_r" in m
	for (k = 1; k <= nsteps; k++)
		if (!(pts[k] in m))
			ok = 0
	if (ok) {
		nok++
		for (k = 2; k <= nsteps; k++) {
			d = (m[pts[k]] - m[pts[k - 1]]) * 1e6
			val[k, nok] = d
		}
		# The send call itself, beside the chain.
		val[nsteps + 1, nok] = (m["c_send_r"] - m["c_send"]) * 1e6
		# And the whole I/O.
		val[nsteps + 2, nok] = (m["end"] - m["c_reg"]) * 1e6
		for (k in cnt)
			tot[k] += cnt[k]
		if (nok == int(want / 2) + 1 && !shown) {
			shown = 1
			for (k = 1; k <= nline; k++)
				keep[k] = line[k]
			nkeep = nline
		}
	}
	delete m
	delete cnt
	nline = 0
}

BEGIN {
	if (!want)
		want = 400
	nsteps = split("c_reg c_send rx1 s_req s_work s_rdma s_rdma_r s_write s_write_r rx2 c_recv_r c_cb c_dereg c_dereg_r end", pts, " ")
}

{
	t = ts_of()
	if (t < 0)
		next
	ev = $evf
	sub(/:$/, "", ev)
	if (ev == "c_reg") {
		close_io(t)
		io++
		t0 = t
	}
	if (!io)
		next
	if (nline < 200)
		line[++nline] = sprintf("%9.1f %s %s", (t - t0) * 1e6, $1, substr($0, index($0, $evf), 90))
	if (ev == "sched_switch") { cnt["switch"]++; next }
	if (ev == "sched_wakeup") { cnt["wakeup"]++; next }
	if (ev == "workqueue_execute_start") { cnt["work"]++; next }
	if (ev == "softirq_entry") { cnt["irq_poll"]++; next }
	if (ev ~ /^post_/) { cnt["send_post"]++; next }
	if (ev ~ /^prcv_/) { cnt["recv_post"]++; next }
	if (ev ~ /^tx_/) { cnt["send_done"]++; next }
	if (ev ~ /^rx_/) {
		cnt["recv_done"]++
		if (("c_send" in m) && !("rx1" in m))
			m["rx1"] = t
		else if (("s_write" in m) && !("rx2" in m))
			m["rx2"] = t
		next
	}
	# The first of each point in the I/O, and only in order: the reader's
	# return counts once the response arrived.
	if (ev == "c_recv_r" && !("rx2" in m))
		next
	if (!(ev in m))
		m[ev] = t
}

END {
	if (nok < 10) {
		printf "SMBD-BENCH-ERROR: %s %s trace: %d of %d I/Os passed every point\n", P, PAIR, nok, io
		exit
	}
	for (k = 2; k <= nsteps + 2; k++) {
		n = 0
		for (i = 1; i <= nok; i++)
			a[++n] = val[k, i]
		isort(a, n)
		name = pts[k - 1] "-" pts[k]
		if (k == nsteps + 1)
			name = "c_send-c_send_r"
		if (k == nsteps + 2)
			name = "c_reg-end"
		printf "SMBD-BENCH: provider=%s group=trace pair=%s test=%s rep=1 value=%.1f unit=us cpu=0 p90=%.1f ios=%d\n", P, PAIR, name, a[int((n + 1) / 2)], a[int(n * 0.9)], n
	}
	for (k in tot)
		printf "SMBD-BENCH: provider=%s group=tracecount pair=%s test=%s rep=1 value=%.2f unit=per_io cpu=0 ios=%d\n", P, PAIR, k, tot[k] / nok, nok
	printf "SMBD-BENCH-INFO: %s %s trace: one I/O (us from its registration):\n", P, PAIR
	for (k = 1; k <= nkeep; k++)
		print "    " keep[k]
}
