// SPDX-License-Identifier: GPL-2.0
/* kprobench: the kprobes side of kjit's bench.  Registers many
 * kprobes, each with a pre_handler that counts its hits (a plain increment,
 * like kjit's counters), from an address list written to debugfs:
 *
 *   /sys/kernel/debug/kprobench/probes  write: one probe a line, "0xADDR" or
 *                                        "SYMBOL" or "SYMBOL+0xOFF"; reading
 *                                        lists "addr hits symbol" per probe
 *   /sys/kernel/debug/kprobench/stats   read: registered failed hits optimized
 *   /sys/kernel/debug/kprobench/clear   write anything: unregister all
 *
 * Probes that the kernel refuses (blacklisted, not an instruction boundary,
 * in a kprobe-free section...) are counted in `failed` and skipped. */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

static unsigned int max_probes = 65536;
module_param(max_probes, uint, 0444);
MODULE_PARM_DESC(max_probes, "maximum number of probes");

struct kpb_probe {
	struct kprobe kp;
	unsigned long hits;
};

static struct kpb_probe *probes;
static struct kprobe **kps;
static unsigned int nprobes, nfailed;
static DEFINE_MUTEX(kpb_lock);
static struct dentry *kpb_dir;
static char linebuf[256];
static size_t linelen;

static int kpb_pre(struct kprobe *kp, struct pt_regs *regs)
{
	container_of(kp, struct kpb_probe, kp)->hits++;
	return 0;
}

static void kpb_add(char *s)
{
	struct kpb_probe *p;
	char *plus;
	unsigned long v;
	int ret;

	s = strim(s);
	if (!*s || *s == '#')
		return;
	if (nprobes >= max_probes) {
		nfailed++;
		return;
	}
	p = &probes[nprobes];
	memset(p, 0, sizeof(*p));
	if (s[0] == '0' && s[1] == 'x') {
		if (kstrtoul(s, 16, &v)) {
			nfailed++;
			return;
		}
		p->kp.addr = (kprobe_opcode_t *)v;
	} else {
		plus = strchr(s, '+');
		if (plus) {
			*plus++ = 0;
			if (kstrtoul(plus, 0, &v)) {
				nfailed++;
				return;
			}
			p->kp.offset = v;
		}
		p->kp.symbol_name = kstrdup(s, GFP_KERNEL);
	}
	p->kp.pre_handler = kpb_pre;
	ret = register_kprobe(&p->kp);
	if (ret) {
		kfree(p->kp.symbol_name);
		nfailed++;
		return;
	}
	kps[nprobes++] = &p->kp;
}

static ssize_t probes_write(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	char *buf;
	size_t i;

	buf = kmalloc(len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (copy_from_user(buf, ubuf, len)) {
		kfree(buf);
		return -EFAULT;
	}
	mutex_lock(&kpb_lock);
	for (i = 0; i < len; i++) {
		if (buf[i] == '\n') {
			linebuf[linelen] = 0;
			kpb_add(linebuf);
			linelen = 0;
		} else if (linelen < sizeof(linebuf) - 1) {
			linebuf[linelen++] = buf[i];
		}
		if ((i & 63) == 0)
			cond_resched();
	}
	mutex_unlock(&kpb_lock);
	kfree(buf);
	return len;
}

static int probes_release(struct inode *inode, struct file *f)
{
	if (f->f_mode & FMODE_WRITE) {
		mutex_lock(&kpb_lock);
		if (linelen) {
			linebuf[linelen] = 0;
			kpb_add(linebuf);
			linelen = 0;
		}
		mutex_unlock(&kpb_lock);
		return 0;
	}
	return single_release(inode, f);
}

static int probes_show(struct seq_file *m, void *v)
{
	unsigned int i;

	mutex_lock(&kpb_lock);
	for (i = 0; i < nprobes; i++)
		seq_printf(m, "0x%lx %lu %pS\n", (unsigned long)probes[i].kp.addr,
			   probes[i].hits, probes[i].kp.addr);
	mutex_unlock(&kpb_lock);
	return 0;
}

static int probes_open(struct inode *inode, struct file *f)
{
	if (f->f_mode & FMODE_WRITE)
		return 0;
	return single_open(f, probes_show, NULL);
}

static const struct file_operations probes_fops = {
	.owner = THIS_MODULE,
	.open = probes_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.write = probes_write,
	.release = probes_release,
};

static int stats_show(struct seq_file *m, void *v)
{
	unsigned long hits = 0;
	unsigned int i, opt = 0;

	mutex_lock(&kpb_lock);
	for (i = 0; i < nprobes; i++) {
		hits += probes[i].hits;
		if (probes[i].kp.flags & KPROBE_FLAG_OPTIMIZED)
			opt++;
	}
	seq_printf(m, "registered %u\nfailed %u\nhits %lu\noptimized %u\n",
		   nprobes, nfailed, hits, opt);
	mutex_unlock(&kpb_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(stats);

static void kpb_clear(void)
{
	unsigned int i;

	if (nprobes)
		unregister_kprobes(kps, nprobes);
	for (i = 0; i < nprobes; i++)
		kfree(probes[i].kp.symbol_name);
	nprobes = 0;
	nfailed = 0;
}

static ssize_t clear_write(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	mutex_lock(&kpb_lock);
	kpb_clear();
	mutex_unlock(&kpb_lock);
	return len;
}

static const struct file_operations clear_fops = {
	.owner = THIS_MODULE,
	.write = clear_write,
};

static int __init kpb_init(void)
{
	probes = vzalloc(array_size(max_probes, sizeof(*probes)));
	kps = vzalloc(array_size(max_probes, sizeof(*kps)));
	if (!probes || !kps) {
		vfree(probes);
		vfree(kps);
		return -ENOMEM;
	}
	kpb_dir = debugfs_create_dir("kprobench", NULL);
	debugfs_create_file("probes", 0600, kpb_dir, NULL, &probes_fops);
	debugfs_create_file("stats", 0400, kpb_dir, NULL, &stats_fops);
	debugfs_create_file("clear", 0200, kpb_dir, NULL, &clear_fops);
	return 0;
}

static void __exit kpb_exit(void)
{
	debugfs_remove_recursive(kpb_dir);
	mutex_lock(&kpb_lock);
	kpb_clear();
	mutex_unlock(&kpb_lock);
	vfree(probes);
	vfree(kps);
}

module_init(kpb_init);
module_exit(kpb_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kjit bench: many counting kprobes from an address list");
