#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Mutation checks: break one protocol rule at a time in a copy of the
# tree and prove the KUnit suites notice. Each mutant is built as its own
# smbd.ko/smbd_kunit.ko pair (one copy of the tree, built once; a mutant
# rebuilds what its file touches, and the file is put back after); one
# VM boot loads the pairs in turn and the KUnit case named for the
# mutant must report "not ok".
#
#   tests/mutants.sh KERNEL_CACHE_DIR OUTDIR
#
# Prints "ok <mutant>" / "not ok <mutant>" and ends with
# "N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kcache=$1
outdir=$2
rm -rf "$outdir"
mkdir -p "$outdir/mods"

# name~file~case that must fail~python literal of the text~its replacement
mutants=(
"neg-recv-size-le~smbd_negotiate.c~smbd_neg_responder~'req.max_receive_size < SMBD_MIN_RECEIVE_SIZE'~'req.max_receive_size <= SMBD_MIN_RECEIVE_SIZE'"
"neg-no-128-floor~smbd_negotiate.c~smbd_neg_responder~'max_t(u32, SMBD_MIN_RECEIVE_SIZE,\n\t\t\t\t   min(p->max_recv_size,\n\t\t\t\t       req.preferred_send_size))'~'min(p->max_recv_size, req.preferred_send_size)'"
"neg-version-min-only~smbd_negotiate.c~smbd_neg_responder~'req.min_version > SMBD_PROTOCOL_V1 ||\n\t    req.max_version < SMBD_PROTOCOL_V1'~'req.min_version > SMBD_PROTOCOL_V1'"
"neg-ignore-status~smbd_negotiate.c~smbd_neg_initiator~'if (resp.status != SMBD_STATUS_SUCCESS)\n\t\treturn SMBD_NEG_ERR_STATUS;'~''"
"rx-no-align-check~smbd_frag.c~smbd_rx_validate~'if (h->data_offset % 8)'~'if (0)'"
"rx-32bit-total~smbd_frag.c~smbd_rx_validate~'if ((u64)h->data_length + h->remaining_data_length > max_frag_recv)'~'if (h->data_length + h->remaining_data_length > max_frag_recv)'"
"reasm-lax-continuation~smbd_frag.c~smbd_reasm_sequence~'h->remaining_data_length != r->remaining - h->data_length'~'false'"
"seg-invalidate-every-segment~smbd_frag.c~smbd_seg_plan~'seg->invalidate = idx == 0;'~'seg->invalidate = true;'"
"cred-no-last-credit-rule~smbd_credits.c~smbd_cred_last_credit~'if (c->send_credits == 1 && !smbd_cred_ungranted(c))\n\t\treturn SMBD_CRED_LAST_CREDIT;'~''"
"cred-no-overrun-check~smbd_credits.c~smbd_cred_receive~'if (!c->recv_granted)\n\t\treturn SMBD_RX_ERR_CREDIT_OVERRUN;'~'if (!c->recv_granted)\n\t\tc->recv_granted = c->recv_posted = 1;'"
"cred-wake-on-last-credit~smbd_credits.c~smbd_cred_last_credit~'if (c->send_credits > 1)\n\t\treturn true;'~'if (c->send_credits >= 1)\n\t\treturn true;'"
"cred-uncapped-target~smbd_credits.c~smbd_cred_receive~'clamp_t(u16, h->credits_requested, 1,\n\t\t\t\t\tc->recv_credit_max)'~'h->credits_requested'"
"ka-reply-asks-again~smbd_keepalive.c~smbd_ka_no_ping_pong~'ka->reply_due = true;'~'{ ka->reply_due = true; ka->state = SMBD_KA_PENDING; }'"
"desc-zero-length-ok~smbd_desc.c~smbd_desc_decode_bad~'return d->length && d->offset <= U64_MAX - (d->length - 1);'~'return d->offset <= U64_MAX - (d->length - 1);'"
"data-stale-padding~smbd_frag.c~smbd_pdu_data_hdr_vector~'msg->padding = 0;'~''"
"desc-no-first-trim~smbd_desc.c~smbd_desc_slice_cases~'out[nout].offset = d[i].offset + pos;'~'out[nout].offset = d[i].offset;'"
"pieces-uncut~smbd_desc.c~smbd_desc_pieces_walk~'pc[n].length = min(seg[i].length - off, chunk);'~'pc[n].length = seg[i].length - off;'"
"rx-no-max-receive~smbd_frag.c~smbd_rx_validate~'if (len > max_recv)\n\t\treturn SMBD_RX_ERR_RECV_SIZE;'~''"
"cred-lost-wraps~smbd_credits.c~smbd_cred_lost_receive~'if (c->recv_posted)\n\t\tc->recv_posted--;'~'c->recv_posted--;'"
"cred-lost-keeps-grant~smbd_credits.c~smbd_cred_lost_receive~'c->recv_granted = min(c->recv_granted, c->recv_posted);'~''"
"cred-empty-no-reply~smbd_credits.c~smbd_cred_recv_questions~'return reply_due || smbd_cred_grant_due(c);'~'return smbd_cred_grant_due(c);'"
"op-wait-no-fence~smbd_op.c~smbd_op_partial_post_fences~'if (READ_ONCE(op->op_status))\n\t\tsmbd_qp_fence(sk);'~''"
"op-post-after-close~smbd_op.c~smbd_op_no_post_after_close~'if (sk->ss_qp_closed || sk->ss_state != SMBD_CONNECTED) {'~'if (0) {'"
"params-any-class~smbd_negotiate.c~smbd_neg_params_check~'if (p->dev_class > SMBD_DEV_IWARP)\n\t\treturn -EINVAL;'~''"
"op-end-frees-posted~smbd_op.c~smbd_op_late_completion_after_give_up~'if (op->op_posted) {\n\t\top->op_orphan = true;'~'if (0) {\n\t\top->op_orphan = true;'"
)

pass=0
fail=0
plan=$outdir/plan-50-mutants.sh
echo '#!/bin/sh' >"$plan"
declare -A want_case

src=$outdir/src
mkdir -p "$src"
(cd "$top" && git ls-files -z | xargs -0 cp --parents -t "$src")
if ! make -j"$(nproc)" -C "$src" KDIR="$kcache/build" W= >"$outdir/build-0.log" 2>&1; then
	echo "not ok mutants: the unchanged tree does not build"
	echo "0 passed, 1 failed"
	exit 1
fi

i=0
for m in "${mutants[@]}"; do
	IFS='~' read -r name file tcase old new <<<"$m"
	i=$((i + 1))
	cp -p "$src/$file" "$outdir/orig"
	if ! python3 - "$src/$file" <<EOF
import sys
p = sys.argv[1]
s = open(p).read()
old, new = $old, $new
if s.count(old) != 1:
    sys.exit("pattern found %d times" % s.count(old))
open(p, "w").write(s.replace(old, new))
EOF
	then
		fail=$((fail + 1))
		echo "not ok mutant $name: could not apply it"
		continue
	fi
	built=1
	make -j"$(nproc)" -C "$src" KDIR="$kcache/build" W= >"$outdir/build-$i.log" 2>&1 || built=0
	if [ $built = 1 ]; then
		cp "$src/smbd.ko" "$outdir/mods/smbd-m$i.ko"
		cp "$src/kunit/smbd_kunit.ko" "$outdir/mods/smbd_kunit-m$i.ko"
	fi
	# the next mutant starts from the unchanged file (a newer mtime: make
	# rebuilds it)
	cp "$outdir/orig" "$src/$file"
	touch "$src/$file"
	if [ $built = 0 ]; then
		fail=$((fail + 1))
		echo "not ok mutant $name: does not build"
		continue
	fi
	want_case[$i]=$tcase
	cat >>"$plan" <<EOF
echo "SMBD-MUTANT-BEGIN $i"
insmod /smbd/smbd-m$i.ko && insmod /smbd/smbd_kunit-m$i.ko
rmmod smbd_kunit; rmmod smbd
echo "SMBD-MUTANT-END $i"
EOF
done
rm -rf "$src"

if [ ${#want_case[@]} -gt 0 ]; then
	initrd=$outdir/initrd.cpio.gz
	log=$outdir/vm.log
	bash "$top/scripts/mkinitramfs.sh" "$kcache" "$initrd" "$outdir"/mods/*.ko "$plan" \
		>"$outdir/initrd.log" 2>&1
	bash "$top/scripts/vm-run.sh" "$kcache" "$initrd" "$log" 900 >"$outdir/vm-run.log" 2>&1
	i=0
	for m in "${mutants[@]}"; do
		IFS='~' read -r name _ <<<"$m"
		i=$((i + 1))
		[ -n "${want_case[$i]:-}" ] || continue
		# The mutant's own section of the log must show its case failing.
		if tr -d '\r' <"$log" |
			awk -v b="SMBD-MUTANT-BEGIN $i" -v e="SMBD-MUTANT-END $i" \
			'$0 ~ (b "$") { on = 1 } $0 ~ (e "$") { on = 0 } on' |
			grep -cE "not ok [0-9]+ ${want_case[$i]}\$" >/dev/null; then
			pass=$((pass + 1))
			echo "ok mutant $name caught by ${want_case[$i]}"
		else
			fail=$((fail + 1))
			echo "not ok mutant $name survived (${want_case[$i]} did not fail)"
		fi
	done
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
