// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A qemu TCG plugin that counts the instructions the guest's vCPUs
 * retire, kernel and user apart, and writes the running totals each time
 * a guest program sets a mark (bench/tools/insn_mark.c): the bench's
 * measure that does not drift with the host's speed (scripts/bench
 * --insns, docs/bench/insns.md).
 *
 * Counting: each translated block adds its instruction count to its vCPU's
 * kernel or user counter (by the block's address: x86-64 kernel addresses
 * have the top bit set) as it starts, with an inline add, so counting
 * costs no call.  A block left early (a fault, an exception) counts whole;
 * an interrupt is taken between blocks.  A halted vCPU retires nothing,
 * so a guest that waits in the idle loop's HLT adds nothing but its timer
 * ticks; one that spins adds every instruction of the spin.
 *
 * Marks: `cpuid` with EAX = SROCE_INSN_MAGIC and EBX = the mark's number.
 * CPUID runs in user mode on x86 and qemu never lets the guest disable it
 * under TCG; each CPUID the guest executes costs one call here, which
 * reads EAX and EBX, and is otherwise left alone.  A mark writes one line
 * to the file named by out=PATH:
 *     mark NUMBER vcpu V kernel K user U
 * K and U are the sums over every vCPU since the guest started (another
 * vCPU's counter is read while it may still run: 64-bit reads, each
 * value one it had).
 *
 * Profile (profile=PATH, scripts/bench --insns --profile): each translated
 * block also calls back as it starts, so that between the marks
 * SROCE_PROFILE_START and SROCE_PROFILE_STOP every block counts its own
 * starts; each stop appends to PATH a line "# profile" and one line per
 * block that ran:
 *     VADDR INSNS STARTS
 * (a block translated again appears again: the reader adds them up by
 * address).  The call per block makes a profiled guest several times
 * slower, so counting without profile= stays inline, as above.
 *
 * Built by scripts/insn-plugin against the qemu-plugin.h of the qemu the
 * guests run on (API version 2 or later: read_register needs it).
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define SROCE_INSN_MAGIC 0x534f4352u	/* no CPUID leaf; bench/tools/insn_mark.c */
#define KERNEL_HALF (1ull << 63)
/* Mark numbers that start and stop the profile (bench/insn_guest.py). */
#define SROCE_PROFILE_START 0xfff00001u
#define SROCE_PROFILE_STOP 0xfff00002u

/* One translated block, for the profile. */
struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t starts;	/* while profiling */
};

struct vcpu_counts {
	uint64_t kernel;
	uint64_t user;
};

static struct qemu_plugin_scoreboard *counts;
static qemu_plugin_u64 kernel_insns, user_insns;
/*
 * The registers a mark reads, found when the first vCPU starts: a handle
 * names a register of the vCPU that reads it, the same for every vCPU of
 * one model.  (Not a scoreboard entry per vCPU: with -icount, qemu calls
 * a vCPU's init before it counts that vCPU.)
 */
static struct qemu_plugin_register *reg_eax, *reg_ebx;
static GOnce regs_found = G_ONCE_INIT;
static FILE *out;
static GMutex out_lock;
static const char *profile_path;	/* profile=: NULL when not profiling */
static GPtrArray *blocks;	/* struct block *, under blocks_lock */
static GMutex blocks_lock;
static int profiling;	/* between the start and stop marks (atomic) */

static bool is_cpuid(struct qemu_plugin_insn *insn)
{
	uint8_t code[2];

	return qemu_plugin_insn_size(insn) == 2 &&
	       qemu_plugin_insn_data(insn, code, sizeof(code)) == 2 &&
	       code[0] == 0x0f && code[1] == 0xa2;
}

static uint32_t read_u32(struct qemu_plugin_register *reg, GByteArray *buf)
{
	uint32_t v = 0;

	g_byte_array_set_size(buf, 0);
	if (!reg || qemu_plugin_read_register(reg, buf) < 4)
		return 0;
	memcpy(&v, buf->data, sizeof(v));	/* x86: little-endian, as we are */
	return v;
}

static void on_block_start(unsigned int vcpu, void *udata)
{
	struct block *b = udata;

	if (__atomic_load_n(&profiling, __ATOMIC_RELAXED))
		__atomic_fetch_add(&b->starts, 1, __ATOMIC_RELAXED);
}

static void profile_start(void)
{
	g_mutex_lock(&blocks_lock);
	for (guint i = 0; i < blocks->len; i++)
		__atomic_store_n(&((struct block *)g_ptr_array_index(blocks, i))->starts, 0,
				 __ATOMIC_RELAXED);
	__atomic_store_n(&profiling, 1, __ATOMIC_RELAXED);
	g_mutex_unlock(&blocks_lock);
}

static void profile_stop(void)
{
	FILE *f;

	__atomic_store_n(&profiling, 0, __ATOMIC_RELAXED);
	f = fopen(profile_path, "a");
	if (!f) {
		qemu_plugin_outs("sroce_insn: cannot write the profile\n");
		return;
	}
	fputs("# profile\n", f);
	g_mutex_lock(&blocks_lock);
	for (guint i = 0; i < blocks->len; i++) {
		struct block *b = g_ptr_array_index(blocks, i);
		uint64_t starts = __atomic_load_n(&b->starts, __ATOMIC_RELAXED);

		if (starts)
			fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", b->vaddr,
				b->insns, starts);
	}
	g_mutex_unlock(&blocks_lock);
	fclose(f);
}

static void profile_block(struct qemu_plugin_tb *tb, size_t n)
{
	struct block *b = g_new0(struct block, 1);

	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->insns = n;
	g_mutex_lock(&blocks_lock);
	g_ptr_array_add(blocks, b);
	g_mutex_unlock(&blocks_lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block_start, QEMU_PLUGIN_CB_NO_REGS, b);
}

static void on_cpuid(unsigned int vcpu, void *udata)
{
	GByteArray *buf = g_byte_array_new();
	uint32_t number;

	if (read_u32(reg_eax, buf) != SROCE_INSN_MAGIC) {
		g_byte_array_free(buf, true);
		return;
	}
	number = read_u32(reg_ebx, buf);
	g_byte_array_free(buf, true);
	if (profile_path && number == SROCE_PROFILE_START)
		profile_start();
	if (profile_path && number == SROCE_PROFILE_STOP)
		profile_stop();
	g_mutex_lock(&out_lock);
	fprintf(out, "mark %" PRIu32 " vcpu %u kernel %" PRIu64 " user %" PRIu64 "\n",
		number, vcpu, qemu_plugin_u64_sum(kernel_insns),
		qemu_plugin_u64_sum(user_insns));
	fflush(out);
	g_mutex_unlock(&out_lock);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	bool kernel = qemu_plugin_tb_vaddr(tb) & KERNEL_HALF;

	qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(
		tb, QEMU_PLUGIN_INLINE_ADD_U64, kernel ? kernel_insns : user_insns, n);
	if (profile_path)
		profile_block(tb, n);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (is_cpuid(insn))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_cpuid,
							       QEMU_PLUGIN_CB_R_REGS, NULL);
	}
}

static struct qemu_plugin_register *find_register(GArray *list, const char *name)
{
	for (guint i = 0; i < list->len; i++) {
		qemu_plugin_reg_descriptor *d =
			&g_array_index(list, qemu_plugin_reg_descriptor, i);

		if (!strcmp(d->name, name))
			return d->handle;
	}
	return NULL;
}

static gpointer find_mark_registers(gpointer unused)
{
	GArray *list = qemu_plugin_get_registers();

	reg_eax = find_register(list, "rax");
	reg_ebx = find_register(list, "rbx");
	if (!reg_eax || !reg_ebx)
		qemu_plugin_outs("sroce_insn: no rax/rbx: marks are lost\n");
	g_array_free(list, true);
	return NULL;
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
	g_once(&regs_found, find_mark_registers, NULL);
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
	g_mutex_lock(&out_lock);
	fprintf(out, "exit kernel %" PRIu64 " user %" PRIu64 "\n",
		qemu_plugin_u64_sum(kernel_insns), qemu_plugin_u64_sum(user_insns));
	fclose(out);
	out = NULL;
	g_mutex_unlock(&out_lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;

	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		if (!strncmp(argv[i], "profile=", 8))
			profile_path = argv[i] + 8;
	}
	if (!path || strcmp(info->target_name, "x86_64")) {
		qemu_plugin_outs("sroce_insn: x86_64 guests only, and out=PATH is needed\n");
		return -1;
	}
	out = fopen(path, "w");
	if (!out)
		return -1;
	blocks = g_ptr_array_new();
	counts = qemu_plugin_scoreboard_new(sizeof(struct vcpu_counts));
	kernel_insns = qemu_plugin_scoreboard_u64_in_struct(counts, struct vcpu_counts,
							    kernel);
	user_insns = qemu_plugin_scoreboard_u64_in_struct(counts, struct vcpu_counts, user);
	qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
