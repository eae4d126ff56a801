// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the module parameters, every one of them.
 *
 * The local defaults a consumer takes with smbd_params_init() ([MS-SMBD]
 * 3.1.4.1, 3.1.7.2), where completions are handled, and how many
 * connections a listener lets negotiate at once. Each is read when a
 * connection is made, so a change applies to the connections made from
 * then on; the pure protocol files read none of them.
 */

#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <rdma/ib_verbs.h>
#include "smbd_internal.h"

/*
 * Defaults: 64 receives of 8192 bytes, Windows' own MaxReceiveSize
 * ([MS-SMBD] WIN<3>), and the same size offered for sending. That is the
 * receive memory of 255 buffers of 1364 bytes (each takes a 2 KiB slab
 * object), with a 1 MiB message cut into 129 messages instead of 783:
 * on a soft provider the cost is per message, and smbd to smbd moves
 * twice the bytes. A peer asking for 1364 (cifs, ksmbd) still gets 1364
 * both ways: negotiation takes the smaller side. Another smbd is offered
 * 32 KiB or what a send gathers from pages if less (20 KiB on rxe,
 * 12 KiB on siw): the same 512 KiB then make 16 or 32 receives, and a
 * 1 MiB message 52 or 86 messages (smbd_xfer_split()). The module
 * parameters below change them for every consumer that takes the
 * defaults (smbd_params_init()).
 */
#define SMBD_DEFAULT_CREDITS		64
#define SMBD_DEFAULT_SEND_SIZE		8192
#define SMBD_DEFAULT_RECV_SIZE		8192
#define SMBD_DEFAULT_LARGE_SIZE		32768
#define SMBD_PARAM_MAX_SIZE		65536
#define SMBD_DEFAULT_FRAG_RECV_SIZE	(1024 * 1024)
#define SMBD_DEFAULT_RW_SIZE		(8 * 1024 * 1024)
#define SMBD_DEFAULT_KA_INTERVAL_MS	(120 * 1000)
#define SMBD_DEFAULT_KA_TIMEOUT_MS	(5 * 1000)
#define SMBD_INITIATOR_NEG_TIMEOUT_MS	(120 * 1000)
#define SMBD_RESPONDER_NEG_TIMEOUT_MS	(5 * 1000)

/*
 * An unsigned parameter refused outside [min, max]: every number below
 * is one, with kp->arg pointing at it.
 */
struct smbd_uint_param {
	unsigned int val;
	unsigned int min;
	unsigned int max;
};

static int smbd_uint_param_set(const char *val, const struct kernel_param *kp)
{
	struct smbd_uint_param *p = kp->arg;
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 0, &v);
	if (ret)
		return ret;
	if (v < p->min || v > p->max)
		return -EINVAL;
	WRITE_ONCE(p->val, v);
	return 0;
}

static int smbd_uint_param_get(char *buf, const struct kernel_param *kp)
{
	const struct smbd_uint_param *p = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(p->val));
}

static const struct kernel_param_ops smbd_uint_param_ops = {
	.set = smbd_uint_param_set,
	.get = smbd_uint_param_get,
};

/*
 * The defaults as set by the module parameters (timers in seconds): sizes
 * 128 to 64 KiB, credits 1 to 65535, the keep-alive interval 0 (off) to
 * an hour, the keep-alive answer and Negotiation Timers 1 s to 10 minutes.
 */
static struct smbd_uint_param smbd_def_send_credits = {
	SMBD_DEFAULT_CREDITS, 1, U16_MAX };
static struct smbd_uint_param smbd_def_recv_credits = {
	SMBD_DEFAULT_CREDITS, 1, U16_MAX };
static struct smbd_uint_param smbd_def_send_size = {
	SMBD_DEFAULT_SEND_SIZE, SMBD_MIN_RECEIVE_SIZE, SMBD_PARAM_MAX_SIZE };
static struct smbd_uint_param smbd_def_recv_size = {
	SMBD_DEFAULT_RECV_SIZE, SMBD_MIN_RECEIVE_SIZE, SMBD_PARAM_MAX_SIZE };
static struct smbd_uint_param smbd_def_ka_interval = {
	SMBD_DEFAULT_KA_INTERVAL_MS / 1000, 0, 3600 };
static struct smbd_uint_param smbd_def_ka_timeout = {
	SMBD_DEFAULT_KA_TIMEOUT_MS / 1000, 1, 600 };
static struct smbd_uint_param smbd_def_neg_initiator = {
	SMBD_INITIATOR_NEG_TIMEOUT_MS / 1000, 1, 600 };
static struct smbd_uint_param smbd_def_neg_responder = {
	SMBD_RESPONDER_NEG_TIMEOUT_MS / 1000, 1, 600 };
static struct smbd_uint_param smbd_def_copy_buffers = { 0, 0, U16_MAX };
static struct smbd_uint_param smbd_def_large_size = {
	SMBD_DEFAULT_LARGE_SIZE, 0, SMBD_PARAM_MAX_SIZE };

module_param_cb(send_credit_target, &smbd_uint_param_ops,
		&smbd_def_send_credits, 0644);
MODULE_PARM_DESC(send_credit_target,
		 "Send Credits a connection asks its peer for, 1 to 65535 (default 64)");
module_param_cb(receive_credit_max, &smbd_uint_param_ops,
		&smbd_def_recv_credits, 0644);
MODULE_PARM_DESC(receive_credit_max,
		 "Most receives a connection posts, each of max_receive_size bytes (fewer and larger after a large_message_size split); 1 to 65535, bounded by the device's queue depth (default 64)");
module_param_cb(max_send_size, &smbd_uint_param_ops,
		&smbd_def_send_size, 0644);
MODULE_PARM_DESC(max_send_size,
		 "Largest SMB Direct message a connection offers to send unless large_message_size is larger, 128 to 65536 bytes (default 8192)");
module_param_cb(max_receive_size, &smbd_uint_param_ops,
		&smbd_def_recv_size, 0644);
MODULE_PARM_DESC(max_receive_size,
		 "Size of each receive buffer, the largest message a connection accepts; 128 to 65536 bytes (default 8192)");
module_param_cb(large_message_size, &smbd_uint_param_ops,
		&smbd_def_large_size, 0644);
MODULE_PARM_DESC(large_message_size,
		 "Larger message size a connection offers both ways to a peer that offers as much (another smbd), at most what one send gathers from pages, cutting fewer receives of it from the same memory; 0 (off) to 65536 bytes (default 32768)");
module_param_cb(keepalive_interval, &smbd_uint_param_ops,
		&smbd_def_ka_interval, 0644);
MODULE_PARM_DESC(keepalive_interval,
		 "Seconds of silence before a keep-alive request ([MS-SMBD] 3.1.6.2), 0 (off) to 3600 (default 120)");
module_param_cb(keepalive_timeout, &smbd_uint_param_ops,
		&smbd_def_ka_timeout, 0644);
MODULE_PARM_DESC(keepalive_timeout,
		 "Seconds a keep-alive request waits for its answer before the connection ends, 1 to 600 (default 5)");
module_param_cb(negotiate_timeout, &smbd_uint_param_ops,
		&smbd_def_neg_initiator, 0644);
MODULE_PARM_DESC(negotiate_timeout,
		 "Initiator's Negotiation Timer ([MS-SMBD] 3.1.4.1) in seconds, 1 to 600 (default 120)");
module_param_cb(responder_negotiate_timeout, &smbd_uint_param_ops,
		&smbd_def_neg_responder, 0644);
MODULE_PARM_DESC(responder_negotiate_timeout,
		 "Responder's Negotiation Timer ([MS-SMBD] 3.1.7.2) in seconds, 1 to 600 (default 5)");
module_param_cb(copy_buffers, &smbd_uint_param_ops,
		&smbd_def_copy_buffers, 0644);
MODULE_PARM_DESC(copy_buffers,
		 "Send buffers of max_send_size bytes (fewer and larger after a large_message_size split) a connection keeps for payload it copies, 0 to 65535; 0 is a quarter of send_credit_target (default 0)");

/**
 * smbd_params_init() - fill the local defaults of one role
 * @p: parameters to fill
 * @responder: true for the responder (listening) side
 *
 * [MS-SMBD] 3.1.4.1 and 3.1.7.2: the implementation chooses the initial
 * ReceiveCreditMax, SendCreditTarget, MaxSendSize, MaxReceiveSize,
 * MaxFragmentedRecvSize, MaxReadWriteSize and KeepaliveInterval. The
 * Negotiation Timer is 120 s on the initiator and 5 s on the responder.
 *
 * Context: any.
 */
void smbd_params_init(struct smbd_params *p, bool responder)
{
	p->send_credit_target = READ_ONCE(smbd_def_send_credits.val);
	p->recv_credit_max = READ_ONCE(smbd_def_recv_credits.val);
	p->max_send_size = READ_ONCE(smbd_def_send_size.val);
	p->max_recv_size = READ_ONCE(smbd_def_recv_size.val);
	p->large_size = READ_ONCE(smbd_def_large_size.val);
	p->max_fragmented_recv_size = SMBD_DEFAULT_FRAG_RECV_SIZE;
	p->max_read_write_size = SMBD_DEFAULT_RW_SIZE;
	p->keepalive_interval_ms = READ_ONCE(smbd_def_ka_interval.val) * 1000;
	p->keepalive_timeout_ms = READ_ONCE(smbd_def_ka_timeout.val) * 1000;
	p->negotiate_timeout_ms = (responder ?
				   READ_ONCE(smbd_def_neg_responder.val) :
				   READ_ONCE(smbd_def_neg_initiator.val)) * 1000;
	p->mr_count = 0;
	p->copy_buffers = READ_ONCE(smbd_def_copy_buffers.val);
	p->ack_timeout = 0;
	p->dev_class = SMBD_DEV_ANY;
}
EXPORT_SYMBOL_NS_GPL(smbd_params_init, SMBD);

/*
 * Where completions are handled (ib_alloc_cq_any()'s poll context), read
 * when a queue pair is created: "softirq", in the irq_poll softirq of
 * the CPU the provider reported them on, or "workqueue", in ib_core's
 * high-priority completion workqueue. A provider that completes from its
 * own threads (rxe's tasks) defers the softirq to ksoftirqd, which then
 * waits behind every runnable thread of that CPU; the workqueue's
 * high-priority worker does not. The completion handlers take ss_lock
 * with bottom halves off and so run in either.
 */
static const char * const smbd_cq_poll_names[] = { "softirq", "workqueue" };
static const enum ib_poll_context smbd_cq_poll_ctx[] = {
	IB_POLL_SOFTIRQ, IB_POLL_WORKQUEUE
};

static unsigned int smbd_cq_poll;

static int smbd_cq_poll_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(smbd_cq_poll_names, val);

	if (i < 0)
		return i;
	WRITE_ONCE(smbd_cq_poll, i);
	return 0;
}

static int smbd_cq_poll_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  smbd_cq_poll_names[READ_ONCE(smbd_cq_poll)]);
}

static const struct kernel_param_ops smbd_cq_poll_ops = {
	.set = smbd_cq_poll_set,
	.get = smbd_cq_poll_get,
};

module_param_cb(cq_poll, &smbd_cq_poll_ops, NULL, 0644);
MODULE_PARM_DESC(cq_poll,
		 "Where completions are handled, for connections made from now on: softirq or workqueue (default softirq)");

/**
 * smbd_cq_poll_context() - where a new queue pair's completions run
 *
 * Context: any.
 * Return: the poll context the cq_poll parameter names now.
 */
enum ib_poll_context smbd_cq_poll_context(void)
{
	return smbd_cq_poll_ctx[READ_ONCE(smbd_cq_poll)];
}

/*
 * A responder's RDMA Writes of up to this many bytes into one of the
 * peer's buffers (an SMB2 READ's data, most often) are copied into
 * pre-mapped slots and posted unwaited (smbd_rw.c); larger ones, and all
 * when it is 0, are sent from the caller's memory and waited for.
 */
static struct smbd_uint_param posted_write_max = {
	SMBD_WSLOT_DEFAULT, 0, SMBD_WSLOT_MAX };

module_param_cb(posted_write_max, &smbd_uint_param_ops,
		&posted_write_max, 0644);
MODULE_PARM_DESC(posted_write_max,
		 "A responder's RDMA Writes up to this many bytes are copied into one of 8 buffers it keeps per connection and not waited for, 0 (off) to 65536, for connections made from now on (default 16384)");

/**
 * smbd_posted_write_max() - the slot size of a new responder's posted writes
 *
 * Context: any.
 * Return: the posted_write_max parameter now; 0 for none.
 */
u32 smbd_posted_write_max(void)
{
	return READ_ONCE(posted_write_max.val);
}

/*
 * Admission of connections still negotiating: each holds a queue pair and
 * its buffers (about 1 MiB with the defaults) until the Negotiate Request
 * arrives or the responder's Negotiation Timer ends it ([MS-SMBD] 3.1.7.2),
 * and the backlog counts only negotiated connections.
 */
static struct smbd_uint_param max_negotiating = { 32, 1, 4096 };

module_param_cb(max_negotiating, &smbd_uint_param_ops,
		&max_negotiating, 0644);
MODULE_PARM_DESC(max_negotiating,
		 "Most connections a listener holds before they finish SMB Direct negotiation, 1 to 4096; more connection requests are refused and counted (default 32)");

/**
 * smbd_max_negotiating() - the listener's limit of connections negotiating
 *
 * Context: any.
 * Return: the max_negotiating parameter now.
 */
unsigned int smbd_max_negotiating(void)
{
	return READ_ONCE(max_negotiating.val);
}
