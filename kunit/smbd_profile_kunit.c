// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: device limits (smbd_profile.c). What debugfs smbd/dev_profile
 * accepts, how a profile caps a device's record, the least smbd needs of
 * a device, the rdma_rw sizes taken from its limits and the gather
 * entries of a transfer's pieces. The transport's run under each profile
 * is smbd_conn's conn_profile.
 */
#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/uio.h>

#include "smbd_internal.h"

/* A device with room to spare, like rxe. */
static const struct smbd_device pk_big = {
	.sd_max_qp_wr = 16384,
	.sd_max_send_sge = 32,
	.sd_max_recv_sge = 32,
	.sd_max_cqe = 32768,
	.sd_max_rd_atom = 128,
	.sd_max_init_rd_atom = 128,
	.sd_max_frmr_pages = 512,
	.sd_max_sge_rd = 32,
	.sd_max_inline = 1024,
};

static int pk_parse(const char *in, struct smbd_profile *p)
{
	char buf[128];

	strscpy(buf, in, sizeof(buf));
	return smbd_profile_parse(buf, p);
}

static void profile_parse(struct kunit *test)
{
	static const char * const bad[] = {
		"", "\t", "no-such-nic", "max_send_sge", "send_sge=",
		"send_sge=3x", "send_sge=-1", "max_colour=3",
		"max_send_sge=3 none", "none none",
	};
	struct smbd_profile p, keep = { .name = "kept" };
	const struct smbd_profile *named;
	u32 i;

	KUNIT_ASSERT_GE(test, smbd_profile_count(), 2U);
	KUNIT_EXPECT_STREQ(test, smbd_profile_at(0)->name, "none");
	KUNIT_EXPECT_NULL(test, smbd_profile_at(smbd_profile_count()));

	/* Every profile by its name, as written by echo. */
	for (i = 0; i < smbd_profile_count(); i++) {
		char line[SMBD_PROFILE_NAME_MAX + 2];

		named = smbd_profile_at(i);
		snprintf(line, sizeof(line), "%s\n", named->name);
		KUNIT_ASSERT_EQ(test, pk_parse(line, &p), 0);
		KUNIT_EXPECT_STREQ(test, p.name, named->name);
		KUNIT_EXPECT_EQ(test, memcmp(p.cap, named->cap, sizeof(p.cap)), 0);
	}

	/* Caps by either name; the last of one attribute wins. */
	KUNIT_ASSERT_EQ(test, pk_parse("max_send_sge=3 qp_wr=0x400\tsge_rd=1 send_sge=4\n", &p), 0);
	KUNIT_EXPECT_STREQ(test, p.name, "custom");
	KUNIT_EXPECT_EQ(test, p.cap[SMBD_CAP_SEND_SGE], 4);
	KUNIT_EXPECT_EQ(test, p.cap[SMBD_CAP_QP_WR], 1024);
	KUNIT_EXPECT_EQ(test, p.cap[SMBD_CAP_SGE_RD], 1);
	KUNIT_EXPECT_EQ(test, p.cap[SMBD_CAP_CQE], 0);

	/* A profile, then caps of its own: custom, from the profile. */
	named = smbd_profile_at(smbd_profile_count() - 1);
	{
		char line[64];

		snprintf(line, sizeof(line), "%s max_fast_reg_page_list_len=9",
			 named->name);
		KUNIT_ASSERT_EQ(test, pk_parse(line, &p), 0);
	}
	KUNIT_EXPECT_STREQ(test, p.name, "custom");
	KUNIT_EXPECT_EQ(test, p.cap[SMBD_CAP_FRMR_PAGES], 9);
	KUNIT_EXPECT_EQ(test, p.cap[SMBD_CAP_SEND_SGE],
			named->cap[SMBD_CAP_SEND_SGE]);

	/* Refused, and what was there stays. */
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		p = keep;
		KUNIT_EXPECT_EQ_MSG(test, pk_parse(bad[i], &p), -EINVAL,
				    "\"%s\"", bad[i]);
		KUNIT_EXPECT_STREQ(test, p.name, "kept");
	}
}

static void profile_apply(struct kunit *test)
{
	struct smbd_profile p = { .name = "t" };
	struct smbd_device sd = pk_big;
	u32 c;

	/* Nothing capped: the device's own. */
	smbd_profile_apply(&p, &sd);
	KUNIT_EXPECT_EQ(test, memcmp(&sd, &pk_big, sizeof(sd)), 0);

	/* Lower only, never higher; each attribute its own field. */
	for (c = 0; c < SMBD_CAP_NR; c++) {
		sd = pk_big;
		memset(p.cap, 0, sizeof(p.cap));
		p.cap[c] = 3;
		smbd_profile_apply(&p, &sd);
		KUNIT_EXPECT_EQ_MSG(test, smbd_cap_get(&sd, c), 3, "%s",
				    smbd_cap_name(c));
		p.cap[c] = U32_MAX - 1;
		sd = pk_big;
		smbd_profile_apply(&p, &sd);
		KUNIT_EXPECT_EQ_MSG(test, smbd_cap_get(&sd, c),
				    smbd_cap_get(&pk_big, c), "%s",
				    smbd_cap_name(c));
	}
	sd = pk_big;
	p.cap[SMBD_CAP_QP_WR] = 0;
	p.cap[SMBD_CAP_SEND_SGE] = 2;
	smbd_profile_apply(&p, &sd);
	KUNIT_EXPECT_EQ(test, sd.sd_max_send_sge, 2);
	KUNIT_EXPECT_EQ(test, sd.sd_max_recv_sge, 32);
	KUNIT_EXPECT_EQ(test, sd.sd_max_qp_wr, 16384);
}

/*
 * Every profile names a device smbd can use: applied to a big device it
 * leaves it above the least smbd needs, and each one says how many
 * gather entries a send gets (the limit that failed the stock client on
 * irdma gen 1).
 */
static void profile_table(struct kunit *test)
{
	const struct smbd_profile *p, *q;
	struct smbd_device sd;
	u32 i, j, have, need;
	const char *s;

	for (i = 1; i < smbd_profile_count(); i++) {
		p = smbd_profile_at(i);
		KUNIT_EXPECT_LT(test, strlen(p->name), SMBD_PROFILE_NAME_MAX);
		KUNIT_EXPECT_NE_MSG(test, p->cap[SMBD_CAP_SEND_SGE], 0, "%s",
				    p->name);
		for (j = 0; j < i; j++) {
			q = smbd_profile_at(j);
			KUNIT_EXPECT_NE_MSG(test, strcmp(p->name, q->name), 0,
					    "two profiles named %s", p->name);
		}
		sd = pk_big;
		sd.sd_iwarp = p->iwarp;
		smbd_profile_apply(p, &sd);
		s = smbd_dev_short(&sd, &have, &need);
		KUNIT_EXPECT_NULL_MSG(test, s, "%s: %s %u below %u", p->name,
				      s ?: "", have, need);
	}
}

static void pk_set(struct smbd_device *sd, enum smbd_cap_id cap, u32 v)
{
	switch (cap) {
	case SMBD_CAP_SEND_SGE:
		sd->sd_max_send_sge = v;
		break;
	case SMBD_CAP_RECV_SGE:
		sd->sd_max_recv_sge = v;
		break;
	case SMBD_CAP_RD_ATOM:
		sd->sd_max_rd_atom = v;
		break;
	case SMBD_CAP_INIT_RD_ATOM:
		sd->sd_max_init_rd_atom = v;
		break;
	default:
		sd->sd_max_frmr_pages = v;
		break;
	}
}

/* The least smbd needs: each limit at it passes, one below is named. */
static void profile_dev_short(struct kunit *test)
{
	static const struct {
		enum smbd_cap_id cap;
		u32 least;
	} least[] = {
		{ SMBD_CAP_SEND_SGE, 2 },
		{ SMBD_CAP_RECV_SGE, 1 },
		{ SMBD_CAP_RD_ATOM, 1 },
		{ SMBD_CAP_INIT_RD_ATOM, 1 },
		{ SMBD_CAP_FRMR_PAGES, 2 },
	};
	struct smbd_profile p = { .name = "t" };
	struct smbd_device sd, min;
	u32 i, have, need, wrs;
	bool iwarp;

	for (iwarp = false; ; iwarp = true) {
		/* Everything at its least. */
		min = pk_big;
		min.sd_iwarp = iwarp;
		for (i = 0; i < ARRAY_SIZE(least); i++)
			p.cap[least[i].cap] = least[i].least;
		smbd_profile_apply(&p, &min);
		/* With 2 gather entries and 2-page registrations. */
		wrs = 16 + 16 + 3 + smbd_rw_wrs(&min, 2) + 3 * SMBD_RW_CTXS;
		min.sd_max_qp_wr = wrs;
		min.sd_max_cqe = wrs;
		KUNIT_EXPECT_NULL(test, smbd_dev_short(&min, &have, &need));

		for (i = 0; i < ARRAY_SIZE(least); i++) {
			sd = min;
			pk_set(&sd, least[i].cap, least[i].least - 1);
			KUNIT_EXPECT_STREQ(test, smbd_dev_short(&sd, &have, &need),
					   smbd_cap_name(least[i].cap));
			KUNIT_EXPECT_EQ(test, have, least[i].least - 1);
			KUNIT_EXPECT_EQ(test, need, least[i].least);
		}
		sd = min;
		sd.sd_max_qp_wr--;
		KUNIT_EXPECT_STREQ(test, smbd_dev_short(&sd, &have, &need),
				   "max_qp_wr");
		KUNIT_EXPECT_EQ(test, need, wrs);
		sd = min;
		sd.sd_max_cqe--;
		KUNIT_EXPECT_STREQ(test, smbd_dev_short(&sd, &have, &need),
				   "max_cqe");
		KUNIT_EXPECT_EQ(test, need, wrs);
		if (iwarp)
			break;
	}
}

/* What an rdma_rw context moves, and the requests it may post. */
static void profile_rw_sizes(struct kunit *test)
{
	struct smbd_device sd = pk_big;

	/* The expectations count 4 KiB pages in a 256 KiB piece. */
	if (PAGE_SIZE != 4096)
		kunit_skip(test, "written for 4 KiB pages");
	KUNIT_EXPECT_EQ(test, smbd_rw_chunk_bytes(0), 0);
	KUNIT_EXPECT_EQ(test, smbd_rw_chunk_bytes(1), 0);
	KUNIT_EXPECT_EQ(test, smbd_rw_chunk_bytes(2), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, smbd_rw_chunk_bytes(17), 16 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, smbd_rw_chunk_bytes(SMBD_RW_CHUNK_PAGES),
			SMBD_RW_CHUNK);
	KUNIT_EXPECT_EQ(test, smbd_rw_chunk_bytes(U32_MAX), SMBD_RW_CHUNK);

	/*
	 * An RDMA Read: cut as a write on IB and RoCE; on iWARP, where it
	 * lands in a registration, as long as one maps (a misaligned
	 * piece spans a page more).
	 */
	KUNIT_EXPECT_EQ(test, smbd_rw_read_chunk_bytes(&sd), SMBD_RW_CHUNK);
	sd.sd_iwarp = true;
	KUNIT_EXPECT_EQ(test, smbd_rw_read_chunk_bytes(&sd), 255 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, SMBD_RW_SLOT_PAGES, 256);
	sd.sd_max_frmr_pages = 17;
	KUNIT_EXPECT_EQ(test, smbd_rw_read_chunk_bytes(&sd), 16 * PAGE_SIZE);
	sd.sd_max_frmr_pages = 1;
	KUNIT_EXPECT_EQ(test, smbd_rw_read_chunk_bytes(&sd), 0);
	sd = pk_big;

	/* 65 pages (4 KiB) over 32 entries: 3 requests, and 3 more. */
	KUNIT_EXPECT_EQ(test, smbd_rw_wrs(&sd, 32),
			SMBD_RW_CTXS * (DIV_ROUND_UP(SMBD_RW_CHUNK_PAGES, 32) + 3));
	/* IB and RoCE read with max_sge_rd entries... */
	sd.sd_max_sge_rd = 1;
	KUNIT_EXPECT_EQ(test, smbd_rw_wrs(&sd, 32),
			SMBD_RW_CTXS * (SMBD_RW_CHUNK_PAGES + 3));
	/* ...iWARP through a registration. */
	sd.sd_iwarp = true;
	KUNIT_EXPECT_EQ(test, smbd_rw_wrs(&sd, 32),
			SMBD_RW_CTXS * (DIV_ROUND_UP(SMBD_RW_CHUNK_PAGES, 32) + 3));
	/* Short registrations cut the chunk, and so the requests. */
	sd.sd_max_frmr_pages = 17;
	KUNIT_EXPECT_EQ(test, smbd_rw_wrs(&sd, 4),
			SMBD_RW_CTXS * (DIV_ROUND_UP(17, 4) + 3));
}

/*
 * The entries a piece of a transfer initialises: its own pages, not the
 * rest of the transfer's. The addresses are only counted, never read.
 */
static void profile_sg_entries(struct kunit *test)
{
	struct kvec kv = { .iov_base = (void *)(16 * PAGE_SIZE),
			   .iov_len = SZ_1M };
	struct iov_iter it;

	if (PAGE_SIZE != 4096)
		kunit_skip(test, "written for 4 KiB pages");
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, kv.iov_len);
	if (!iov_iter_npages(&it, INT_MAX))
		kunit_skip(test, "this kernel does not count a kvec's pages");
	/* A 256 KiB piece of a 1 MiB buffer, page-aligned, then not. */
	KUNIT_EXPECT_EQ(test, smbd_sg_entries(&it, SMBD_RW_CHUNK,
					      SMBD_RW_SLOT_PAGES),
			SMBD_RW_CHUNK / PAGE_SIZE);
	iov_iter_advance(&it, 100);
	KUNIT_EXPECT_EQ(test, smbd_sg_entries(&it, SMBD_RW_CHUNK,
					      SMBD_RW_SLOT_PAGES),
			SMBD_RW_CHUNK / PAGE_SIZE + 1);
	/* One 4 KiB I/O; the list's size caps a longer piece. */
	KUNIT_EXPECT_EQ(test, smbd_sg_entries(&it, 4096, SMBD_RW_SLOT_PAGES),
			4096 / PAGE_SIZE + 1);
	KUNIT_EXPECT_EQ(test, smbd_sg_entries(&it, SZ_1M, 17), 17);
	/* The piece's count leaves the iterator where it was. */
	KUNIT_EXPECT_EQ(test, iov_iter_count(&it), SZ_1M - 100);
	/* What is left is shorter than the piece: the rest's pages. */
	iov_iter_advance(&it, SZ_1M - 100 - 2 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, smbd_sg_entries(&it, SMBD_RW_CHUNK,
					      SMBD_RW_SLOT_PAGES), 2);
}

/*
 * Pages that follow each other in memory join into one gather entry,
 * within the device's segment (its bytes and its boundary); anything
 * else starts a new one.
 */
static void profile_sg_join(struct kunit *test)
{
	const struct smbd_sg_limit any = { .max = U32_MAX,
					   .boundary = ULONG_MAX };
	const struct smbd_sg_limit two = { .max = 2 * PAGE_SIZE,
					   .boundary = ULONG_MAX };
	const struct smbd_sg_limit none = { .boundary = ULONG_MAX };
	const struct smbd_sg_limit line = { .max = U32_MAX,
					    .boundary = 2 * PAGE_SIZE - 1 };
	struct scatterlist sgl[4];
	struct page *p;
	u32 n;

	/* Four pages, physically contiguous and aligned on four. */
	p = alloc_pages(GFP_KERNEL, 2);
	KUNIT_ASSERT_NOT_NULL(test, p);

	sg_init_table(sgl, ARRAY_SIZE(sgl));
	n = smbd_sg_add(sgl, 0, p, 100, PAGE_SIZE - 100, &any);
	n = smbd_sg_add(sgl, n, p + 1, 0, PAGE_SIZE, &any);
	n = smbd_sg_add(sgl, n, p + 2, 0, 10, &any);
	KUNIT_EXPECT_EQ(test, n, 1);
	KUNIT_EXPECT_PTR_EQ(test, sg_page(&sgl[0]), p);
	KUNIT_EXPECT_EQ(test, sgl[0].offset, 100);
	KUNIT_EXPECT_EQ(test, sgl[0].length, 2 * PAGE_SIZE - 90);
	/* The last entry ends inside a page: nothing joins it. */
	n = smbd_sg_add(sgl, n, p + 3, 0, PAGE_SIZE, &any);
	KUNIT_EXPECT_EQ(test, n, 2);

	/* A page further on, or one with an offset, starts an entry. */
	sg_init_table(sgl, ARRAY_SIZE(sgl));
	n = smbd_sg_add(sgl, 0, p, 0, PAGE_SIZE, &any);
	n = smbd_sg_add(sgl, n, p + 2, 0, PAGE_SIZE, &any);
	n = smbd_sg_add(sgl, n, p + 3, 8, 8, &any);
	KUNIT_EXPECT_EQ(test, n, 3);
	KUNIT_EXPECT_EQ(test, sgl[0].length, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, sgl[1].length, PAGE_SIZE);

	/* The segment's bytes; none (a fake device) joins nothing. */
	sg_init_table(sgl, ARRAY_SIZE(sgl));
	n = smbd_sg_add(sgl, 0, p, 0, PAGE_SIZE, &two);
	n = smbd_sg_add(sgl, n, p + 1, 0, PAGE_SIZE, &two);
	n = smbd_sg_add(sgl, n, p + 2, 0, PAGE_SIZE, &two);
	KUNIT_EXPECT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, sgl[0].length, 2 * PAGE_SIZE);
	sg_init_table(sgl, ARRAY_SIZE(sgl));
	n = smbd_sg_add(sgl, 0, p, 0, PAGE_SIZE, &none);
	n = smbd_sg_add(sgl, n, p + 1, 0, PAGE_SIZE, &none);
	KUNIT_EXPECT_EQ(test, n, 2);

	/* The segment's boundary, every two pages here: p + 2 starts one. */
	sg_init_table(sgl, ARRAY_SIZE(sgl));
	n = smbd_sg_add(sgl, 0, p, 0, PAGE_SIZE, &line);
	n = smbd_sg_add(sgl, n, p + 1, 0, PAGE_SIZE, &line);
	n = smbd_sg_add(sgl, n, p + 2, 0, PAGE_SIZE, &line);
	n = smbd_sg_add(sgl, n, p + 3, 0, PAGE_SIZE, &line);
	KUNIT_EXPECT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, sgl[0].length, 2 * PAGE_SIZE);
	KUNIT_EXPECT_PTR_EQ(test, sg_page(&sgl[1]), p + 2);
	KUNIT_EXPECT_EQ(test, sgl[1].length, 2 * PAGE_SIZE);

	__free_pages(p, 2);
}

static struct kunit_case smbd_profile_cases[] = {
	KUNIT_CASE(profile_parse),
	KUNIT_CASE(profile_apply),
	KUNIT_CASE(profile_table),
	KUNIT_CASE(profile_dev_short),
	KUNIT_CASE(profile_rw_sizes),
	KUNIT_CASE(profile_sg_entries),
	KUNIT_CASE(profile_sg_join),
	{}
};

static struct kunit_suite smbd_profile_suite = {
	.name = "smbd_profile",
	.test_cases = smbd_profile_cases,
};

kunit_test_suite(smbd_profile_suite);
