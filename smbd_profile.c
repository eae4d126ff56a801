// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: device limits. What smbd needs of an RDMA device at least, what
 * it takes of it when a profile caps the device's own limits, and the
 * profiles: the limits of the RDMA NICs smbd runs on, so that the soft
 * providers can be run as if they were one of them (debugfs
 * smbd/dev_profile, Documentation/testing.rst). Pure: no verbs calls.
 */

#include <linux/kernel.h>
#include <linux/string.h>

#include "smbd_internal.h"

/* The attributes a profile caps, by the names debugfs and logs use. */
static const struct {
	const char *name;
	size_t off;
} smbd_caps[SMBD_CAP_NR] = {
	[SMBD_CAP_QP_WR] = { "max_qp_wr",
			     offsetof(struct smbd_device, sd_max_qp_wr) },
	[SMBD_CAP_CQE] = { "max_cqe",
			   offsetof(struct smbd_device, sd_max_cqe) },
	[SMBD_CAP_SEND_SGE] = { "max_send_sge",
				offsetof(struct smbd_device, sd_max_send_sge) },
	[SMBD_CAP_RECV_SGE] = { "max_recv_sge",
				offsetof(struct smbd_device, sd_max_recv_sge) },
	[SMBD_CAP_SGE_RD] = { "max_sge_rd",
			      offsetof(struct smbd_device, sd_max_sge_rd) },
	[SMBD_CAP_RD_ATOM] = { "max_qp_rd_atom",
			       offsetof(struct smbd_device, sd_max_rd_atom) },
	[SMBD_CAP_INIT_RD_ATOM] = { "max_qp_init_rd_atom",
				    offsetof(struct smbd_device,
					     sd_max_init_rd_atom) },
	[SMBD_CAP_FRMR_PAGES] = { "max_fast_reg_page_list_len",
				  offsetof(struct smbd_device,
					   sd_max_frmr_pages) },
	[SMBD_CAP_INLINE] = { "max_inline_data",
			      offsetof(struct smbd_device, sd_max_inline) },
};

/*
 * The profiles. Each value is what the driver in Linux 6.12 reports in
 * struct ib_device_attr (its query_device), or caps a firmware-reported
 * value with; where only firmware knows, the value of a common part,
 * named. 0: not capped. Documentation/testing.rst has the sources.
 */
#define SMBD_PROF(_qp_wr, _cqe, _send, _recv, _sge_rd, _ird, _ord, _frmr,  \
		  _inline)						\
	.cap = {							\
		[SMBD_CAP_QP_WR] = _qp_wr, [SMBD_CAP_CQE] = _cqe,	\
		[SMBD_CAP_SEND_SGE] = _send, [SMBD_CAP_RECV_SGE] = _recv, \
		[SMBD_CAP_SGE_RD] = _sge_rd, [SMBD_CAP_RD_ATOM] = _ird,	\
		[SMBD_CAP_INIT_RD_ATOM] = _ord,				\
		[SMBD_CAP_FRMR_PAGES] = _frmr, [SMBD_CAP_INLINE] = _inline, \
	}

static const struct smbd_profile smbd_profiles[] = {
	{ .name = "none" },
	/* Intel X722 (irdma, IRDMA_GEN_1): iWARP, 3 gather entries. */
	{ .name = "irdma-gen1", .iwarp = true,
	  SMBD_PROF(895, 1048574, 3, 3, 1, 63, 127, 262144, 48) },
	/* Intel E810 (irdma, IRDMA_GEN_2), run as RoCE. */
	{ .name = "irdma-gen2",
	  SMBD_PROF(4063, 1048574, 13, 13, 13, 127, 255, 262144, 101) },
	/* ConnectX-3 (mlx4): firmware limits as the device reports them. */
	{ .name = "mlx4",
	  SMBD_PROF(16351, 4194303, 32, 32, 30, 16, 128, 511, 0) },
	/* ConnectX-4 and later (mlx5): 1024-byte send WQEs. */
	{ .name = "mlx5",
	  SMBD_PROF(8192, 4194303, 30, 32, 30, 16, 16, 65536, 888) },
	/* Chelsio T5/T6 (cxgb4): iWARP, the default DSGL registrations. */
	{ .name = "cxgb4", .iwarp = true,
	  SMBD_PROF(8190, 65518, 17, 4, 1, 8, 8, 128, 280) },
	/* The same without DSGL (use_dsgl=0, or no firmware support). */
	{ .name = "cxgb4-nodsgl", .iwarp = true,
	  SMBD_PROF(8190, 65518, 17, 4, 1, 8, 8, 32, 280) },
	/* Marvell FastLinQ (qedr), RoCE: 4 gather entries. */
	{ .name = "qedr",
	  SMBD_PROF(32767, 8388480, 4, 4, 4, 32, 32, 16383, 256) },
	/* Broadcom NetXtreme-E P5 (bnxt_re): 128-byte send WQEs. */
	{ .name = "bnxt-re",
	  SMBD_PROF(4351, 1048575, 6, 6, 6, 126, 126, 512, 96) },
};

/**
 * smbd_profile_count() - how many profiles smbd knows
 *
 * Context: any.
 * Return: the number, "none" included.
 */
u32 smbd_profile_count(void)
{
	return ARRAY_SIZE(smbd_profiles);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_profile_count);

/**
 * smbd_profile_at() - a known profile
 * @i: its index, below smbd_profile_count()
 *
 * Context: any.
 * Return: the profile, or NULL past the end.
 */
const struct smbd_profile *smbd_profile_at(u32 i)
{
	return i < ARRAY_SIZE(smbd_profiles) ? &smbd_profiles[i] : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_profile_at);

/**
 * smbd_cap_name() - the ib_device_attr name of a capped attribute
 * @cap: the attribute
 *
 * Context: any.
 * Return: its name.
 */
const char *smbd_cap_name(enum smbd_cap_id cap)
{
	return smbd_caps[cap].name;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cap_name);

static u32 *smbd_cap_field(struct smbd_device *sd, enum smbd_cap_id cap)
{
	return (u32 *)((char *)sd + smbd_caps[cap].off);
}

/**
 * smbd_cap_get() - one recorded limit of a device
 * @sd: the device's record
 * @cap: the attribute
 *
 * Context: any.
 * Return: the value smbd uses.
 */
u32 smbd_cap_get(const struct smbd_device *sd, enum smbd_cap_id cap)
{
	return *smbd_cap_field((struct smbd_device *)sd, cap);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cap_get);

/**
 * smbd_profile_parse() - read what debugfs smbd/dev_profile was given
 * @buf: a profile's name, then any number of "attribute=value" (the
 *	attribute by its ib_device_attr name, or without its "max_"), all
 *	separated by blanks; "none" alone lifts every cap. Changed in
 *	place (split at the blanks).
 * @prof: filled: the named profile, or "custom" when caps are given
 *
 * Context: any.
 * Return: 0, or -EINVAL for an unknown name or attribute, a value that
 * is not a number, or nothing at all. @prof is then unchanged.
 */
int smbd_profile_parse(char *buf, struct smbd_profile *prof)
{
	struct smbd_profile p = { .name = "custom" };
	bool any = false;
	char *tok, *eq;
	u32 i, v;

	while ((tok = strsep(&buf, " \t\n")) != NULL) {
		if (!*tok)
			continue;
		eq = strchr(tok, '=');
		if (!eq) {
			/* A name, first and once. */
			if (any)
				return -EINVAL;
			for (i = 0; i < ARRAY_SIZE(smbd_profiles); i++)
				if (!strcmp(tok, smbd_profiles[i].name))
					break;
			if (i == ARRAY_SIZE(smbd_profiles))
				return -EINVAL;
			p = smbd_profiles[i];
			any = true;
			continue;
		}
		*eq = 0;
		for (i = 0; i < SMBD_CAP_NR; i++)
			if (!strcmp(tok, smbd_caps[i].name) ||
			    !strcmp(tok, smbd_caps[i].name + 4))
				break;
		if (i == SMBD_CAP_NR || kstrtou32(eq + 1, 0, &v))
			return -EINVAL;
		p.cap[i] = v;
		p.name = "custom";
		any = true;
	}
	if (!any)
		return -EINVAL;
	*prof = p;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_profile_parse);

/**
 * smbd_profile_apply() - take no more of a device than a profile allows
 * @prof: the profile (0: that attribute not capped)
 * @sd: the device's record, filled from its ib_device_attr
 *
 * Context: any.
 */
void smbd_profile_apply(const struct smbd_profile *prof,
			struct smbd_device *sd)
{
	u32 i, *f;

	for (i = 0; i < SMBD_CAP_NR; i++) {
		f = smbd_cap_field(sd, i);
		if (prof->cap[i] && prof->cap[i] < *f)
			*f = prof->cap[i];
	}
}
EXPORT_SYMBOL_IF_KUNIT(smbd_profile_apply);

/* What one registration of @frmr_pages maps from any start, up to @cap. */
static u32 smbd_rw_piece_bytes(u32 frmr_pages, u32 cap)
{
	u32 pages = min(frmr_pages, 256U);

	if (pages < 2)
		return 0;
	return min_t(u32, cap, (pages - 1) * PAGE_SIZE);
}

/**
 * smbd_rw_chunk_bytes() - the bytes one rdma_rw context moves
 * @frmr_pages: the device's fast-registration page list length
 *
 * On iWARP (and on InfiniBand or RoCE where max_sgl_rd sends reads
 * through registrations), rdma_rw moves a context through one
 * registration only if the piece fits in one (it gives one at most 256
 * pages); a piece that starts inside a page spans one page more than its
 * length. The cut applies on every device: it costs nothing where
 * registrations are long.
 *
 * Context: any.
 * Return: at most %SMBD_RW_CHUNK; 0 when @frmr_pages is below 2.
 */
u32 smbd_rw_chunk_bytes(u32 frmr_pages)
{
	return smbd_rw_piece_bytes(frmr_pages, SMBD_RW_CHUNK);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_rw_chunk_bytes);

/**
 * smbd_rw_read_chunk_bytes() - the bytes one rdma_rw context reads
 * @sd: the device's record
 *
 * On iWARP every RDMA Read lands in a registration and costs one
 * registration, one read and one invalidation whatever its length (and
 * siw a turn of its transmit thread per read): a piece is as long as one
 * registration maps, as the stock transports' are. Elsewhere a read is
 * cut as a write (smbd_rw_chunk_bytes()): its gather entries are work
 * requests on the send queue.
 *
 * Context: any.
 * Return: at most %SMBD_RW_READ_CHUNK; 0 when the device's registrations
 * are shorter than two pages.
 */
u32 smbd_rw_read_chunk_bytes(const struct smbd_device *sd)
{
	return smbd_rw_piece_bytes(sd->sd_max_frmr_pages,
				   sd->sd_iwarp ? SMBD_RW_READ_CHUNK :
						  SMBD_RW_CHUNK);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_rw_read_chunk_bytes);

/**
 * smbd_rw_wrs() - send queue room the rdma_rw contexts of a connection need
 * @sd: the device's record
 * @qp_sge: the gather entries of the queue pair's sends
 *
 * Per context: a piece's pages over the gather entries an RDMA Write or,
 * on InfiniBand and RoCE, an RDMA Read takes (the fewer of the queue
 * pair's and max_sge_rd), plus the registration, read and invalidation
 * of an iWARP read (rdma_rw counts these in max_send_wr itself, not in
 * our completion queue).
 *
 * Context: any.
 * Return: the work requests.
 */
u32 smbd_rw_wrs(const struct smbd_device *sd, u32 qp_sge)
{
	u32 pages = smbd_rw_chunk_bytes(sd->sd_max_frmr_pages) / PAGE_SIZE + 1;
	u32 sge = qp_sge;

	if (!sd->sd_iwarp && sd->sd_max_sge_rd)
		sge = min(sge, sd->sd_max_sge_rd);
	return SMBD_RW_CTXS * (DIV_ROUND_UP(pages, max(sge, 1U)) + 3);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_rw_wrs);

/**
 * smbd_dev_short() - the first limit below what smbd needs of a device
 * @sd: the device's record
 * @have: set to the device's value of that attribute
 * @need: set to the least smbd works with
 *
 * smbd needs two send gather entries (the header's buffer and one
 * more; it copies what it cannot map), a receive scatter entry, an RDMA
 * read each way ([MS-SMBD] 3.1.4.5, 3.1.4.6: the client registers, the
 * server reads and writes), a registration of two pages (one page of
 * payload wherever it starts), and queues that hold a connection of the
 * least size (smbd_ep_size()): 16 sends, 8 registrations and their
 * invalidations, the rdma_rw work (with what rdma_rw adds itself), and
 * one request each for the drain, the fence and a negotiation probe.
 *
 * Context: any.
 * Return: the attribute's name, or NULL if the device will do.
 */
const char *smbd_dev_short(const struct smbd_device *sd, u32 *have,
			   u32 *need)
{
	u32 qp_sge = min_t(u32, sd->sd_max_send_sge, SMBD_QP_SGE_MAX);
	u32 wrs = 16 + 2 * 8 + 3;
	static const struct {
		enum smbd_cap_id cap;
		u32 least;
	} fixed[] = {
		{ SMBD_CAP_SEND_SGE, 2 },
		{ SMBD_CAP_RECV_SGE, 1 },
		{ SMBD_CAP_RD_ATOM, 1 },
		{ SMBD_CAP_INIT_RD_ATOM, 1 },
		{ SMBD_CAP_FRMR_PAGES, 2 },
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(fixed); i++) {
		*have = smbd_cap_get(sd, fixed[i].cap);
		*need = fixed[i].least;
		if (*have < *need)
			return smbd_caps[fixed[i].cap].name;
	}
	/* rdma_rw adds its own requests to the send queue, and its CQ. */
	wrs += smbd_rw_wrs(sd, qp_sge) + 3 * SMBD_RW_CTXS;
	*have = sd->sd_max_qp_wr;
	*need = wrs;
	if (*have < *need)
		return smbd_caps[SMBD_CAP_QP_WR].name;
	*have = sd->sd_max_cqe;
	if (*have < *need)
		return smbd_caps[SMBD_CAP_CQE].name;
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_dev_short);
