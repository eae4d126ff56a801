/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smbd_testctl.h: the debugfs plumbing of the test modules of smbd
 * (tests/<dir>/), which include it once each, after their pr_fmt:
 *
 *   /sys/kernel/debug/NAME/ctl      write one command line
 *   /sys/kernel/debug/NAME/result   what the last command found
 *
 * A command line runs under the command lock, after the result was
 * emptied. The result is made of lines: "ok NAME [- detail]",
 * "not ok NAME - reason", "info TEXT" and what else the module prints;
 * the guest scripts parse them.
 */
#ifndef SMBD_TESTCTL_H
#define SMBD_TESTCTL_H

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/inet.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/sprintf.h>
#include <linux/string.h>
#include <net/net_namespace.h>

/* Lines of output: printed, or (quiet) only a count of failed checks. */
struct testctl_out {
	struct mutex lock;	/* protects the rest */
	char *buf;
	size_t size;		/* of buf; longer output is cut */
	size_t len;
	bool quiet;
	unsigned int failed;
};

static inline int testctl_out_init(struct testctl_out *o, size_t size)
{
	mutex_init(&o->lock);
	o->buf = kzalloc(size, GFP_KERNEL);
	o->size = size;
	o->len = 0;
	o->quiet = false;
	o->failed = 0;
	return o->buf ? 0 : -ENOMEM;
}

static inline void testctl_out_free(struct testctl_out *o)
{
	kfree(o->buf);
	o->buf = NULL;
}

static inline void testctl_out_reset(struct testctl_out *o)
{
	mutex_lock(&o->lock);
	o->len = 0;
	o->buf[0] = '\0';
	o->failed = 0;
	mutex_unlock(&o->lock);
}

static inline __printf(2, 3) void testctl_out_add(struct testctl_out *o,
						  const char *fmt, ...)
{
	va_list ap;
	size_t n;

	mutex_lock(&o->lock);
	if (!o->quiet && o->len + 2 < o->size) {
		va_start(ap, fmt);
		n = vscnprintf(o->buf + o->len, o->size - 1 - o->len, fmt, ap);
		va_end(ap);
		o->len += n;
		o->buf[o->len++] = '\n';
		o->buf[o->len] = '\0';
	}
	mutex_unlock(&o->lock);
}

#define testctl_info(o, fmt, ...) \
	testctl_out_add(o, "info " fmt, ##__VA_ARGS__)

/*
 * testctl_out_copy: append what @from printed to @o, line for line.
 * Nobody writes to @from any more (its lock is of the same class as
 * @o's: not nested).
 */
static inline void testctl_out_copy(struct testctl_out *o,
				    const struct testctl_out *from)
{
	size_t n;

	mutex_lock(&o->lock);
	n = min(from->len, o->size - 1 - o->len);
	memcpy(o->buf + o->len, from->buf, n);
	o->len += n;
	o->buf[o->len] = '\0';
	mutex_unlock(&o->lock);
}

/*
 * testctl_vcheck: one check, "ok [PREFIX/]NAME" or "not ok [PREFIX/]NAME"
 * (@prefix may be NULL), then " - " and the detail unless it is empty.
 * A failed one is counted, and logged too. Returns @ok.
 */
static inline __printf(5, 0) bool testctl_vcheck(struct testctl_out *o,
						 bool ok, const char *prefix,
						 const char *name,
						 const char *fmt, va_list ap)
{
	const char *slash = prefix ? "/" : "";
	char why[200];

	prefix = prefix ?: "";
	vscnprintf(why, sizeof(why), fmt, ap);
	if (!ok) {
		mutex_lock(&o->lock);
		o->failed++;
		mutex_unlock(&o->lock);
	}
	testctl_out_add(o, "%s %s%s%s%s%s", ok ? "ok" : "not ok", prefix,
			slash, name, why[0] ? " - " : "", why);
	if (!ok)
		pr_info("not ok %s%s%s - %s\n", prefix, slash, name, why);
	return ok;
}

static inline __printf(5, 6) bool testctl_check(struct testctl_out *o,
						bool ok, const char *prefix,
						const char *name,
						const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ok = testctl_vcheck(o, ok, prefix, name, fmt, ap);
	va_end(ap);
	return ok;
}

/* The ctl and result files of a module, and what runs its commands. */
struct testctl {
	struct testctl_out out;	/* the result file */
	struct mutex lock;	/* held while a command runs */
	int (*run)(char *line);
	size_t line_max;	/* longest command line taken */
	struct dentry *dir;
};

static ssize_t testctl_ctl_write(struct file *f, const char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	struct testctl *tc = f->private_data;
	char *line, *cmd;
	int err;

	if (len > tc->line_max)
		return -E2BIG;
	line = memdup_user_nul(ubuf, len);
	if (IS_ERR(line))
		return PTR_ERR(line);
	/* Killable only: the shell writing the command gets SIGCHLDs. */
	err = mutex_lock_killable(&tc->lock);
	if (err)
		goto out;
	testctl_out_reset(&tc->out);
	cmd = strim(line);
	pr_info("command: %s\n", cmd);
	err = tc->run(cmd);
	mutex_unlock(&tc->lock);
out:
	kfree(line);
	return err ?: len;
}

static ssize_t testctl_result_read(struct file *f, char __user *ubuf,
				   size_t len, loff_t *ppos)
{
	struct testctl *tc = f->private_data;
	ssize_t n;

	mutex_lock(&tc->out.lock);
	n = simple_read_from_buffer(ubuf, len, ppos, tc->out.buf, tc->out.len);
	mutex_unlock(&tc->out.lock);
	return n;
}

static const struct file_operations testctl_ctl_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = testctl_ctl_write,
	.llseek = noop_llseek,
};

static const struct file_operations testctl_result_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = testctl_result_read,
	.llseek = default_llseek,
};

/*
 * testctl_init: the output (@out_size bytes) and /sys/kernel/debug/@name
 * with its ctl file, which takes command lines of up to @line_max bytes
 * and hands them to @run, and its result file.
 */
static inline int testctl_init(struct testctl *tc, const char *name,
			       size_t out_size, size_t line_max,
			       int (*run)(char *line))
{
	int err;

	err = testctl_out_init(&tc->out, out_size);
	if (err)
		return err;
	mutex_init(&tc->lock);
	tc->run = run;
	tc->line_max = line_max;
	tc->dir = debugfs_create_dir(name, NULL);
	debugfs_create_file("ctl", 0200, tc->dir, tc, &testctl_ctl_fops);
	debugfs_create_file("result", 0400, tc->dir, tc, &testctl_result_fops);
	return 0;
}

/*
 * testctl_remove: no more commands; waits for a running one. The output
 * stays for what the module still prints, until testctl_out_free().
 */
static inline void testctl_remove(struct testctl *tc)
{
	debugfs_remove_recursive(tc->dir);
	tc->dir = NULL;
}

/* @ip (IPv4 or IPv6) and @port in @ss: 0, or -EINVAL if either is bad. */
static inline int testctl_addr(const char *ip, unsigned int port,
			       struct sockaddr_storage *ss)
{
	char p[8];

	if (port > 65535)
		return -EINVAL;
	snprintf(p, sizeof(p), "%u", port);
	return inet_pton_with_scope(&init_net, AF_UNSPEC, ip, p, ss);
}

#endif /* SMBD_TESTCTL_H */
