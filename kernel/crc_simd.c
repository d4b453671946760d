// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Which CRC-32 engine the ICRC uses, and the kernel's side of the fold
 * engines' contract (proto/crc32.h): they use vector registers, which
 * kernel code may touch only between kernel_fpu_begin() and _end(), and
 * only where the FPU may be borrowed (not in an interrupt that cut into
 * another user of it).  Where it may not, the tables do the work.
 *
 * Chosen at load.  Where the kernel accelerates its own crc32_le() for
 * this CPU (crc32_optimizations(), 6.14 on: x86 with PCLMULQDQ, arm64,
 * and others), that does the work: the kernel's code, kept by the kernel
 * for every architecture it runs on.  Otherwise the widest of ours the
 * CPU has: AVX-512 with VPCLMULQDQ, else PCLMULQDQ, else tables.  The
 * crc_engine parameter lowers the choice (never raises it past what the
 * kernel and CPU have), so the engines can be measured against each
 * other on one machine; reading it says which one runs.
 */
#include <linux/bits.h>	/* crc32.h uses BIT() without including it */
#include <linux/crc32.h>
#include <linux/module.h>
#include <asm/simd.h>
#ifdef CONFIG_X86
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#endif

#include "proto/crc32.h"
#include "sroce.h"

/* Above our own engines (proto/crc32.h): the kernel's crc32_le(). */
#define SROCE_CRC_KERNEL	(ROCE_CRC32_ENGINE_WIDE + 1)

static const char *const engine_names[] = {
	[ROCE_CRC32_ENGINE_TABLE] = "table",
	[ROCE_CRC32_ENGINE_PCLMUL] = "pclmul",
	[ROCE_CRC32_ENGINE_WIDE] = "avx512",
	[SROCE_CRC_KERNEL] = "kernel",
};

static int cpu_engine;	/* the widest of ours this CPU has */
static bool kernel_fast;	/* crc32_le() is accelerated here */
static int asked = SROCE_CRC_KERNEL;	/* the parameter */
static int engine;	/* the one in use */

static int engine_for(int wanted)
{
	if (wanted == SROCE_CRC_KERNEL && kernel_fast)
		return SROCE_CRC_KERNEL;
	return min(wanted, cpu_engine);
}

bool roce_crc32_platform_preferred(void)
{
	return READ_ONCE(engine) == SROCE_CRC_KERNEL;
}

u32 roce_crc32_platform(u32 state, const void *p, size_t n)
{
	return crc32_le(state, p, n);
}

int roce_crc32_accel_begin(void)
{
#if defined(CONFIG_X86_64)
	int e = min(READ_ONCE(engine), cpu_engine);

	if (e == ROCE_CRC32_ENGINE_TABLE || !may_use_simd())
		return ROCE_CRC32_ENGINE_TABLE;
	kernel_fpu_begin();
	return e;
#else
	return ROCE_CRC32_ENGINE_TABLE;
#endif
}

void roce_crc32_accel_end(void)
{
#if defined(CONFIG_X86_64)
	kernel_fpu_end();
#endif
}

void sroce_crc_simd_init(void)
{
#if defined(CONFIG_X86_64)
	if (boot_cpu_has(X86_FEATURE_PCLMULQDQ) && boot_cpu_has(X86_FEATURE_XMM4_1))
		cpu_engine = ROCE_CRC32_ENGINE_PCLMUL;
	/* The OS must also save the AVX-512 state (XCR0), not only the CPU have it. */
	if (cpu_engine && boot_cpu_has(X86_FEATURE_AVX512F) &&
	    boot_cpu_has(X86_FEATURE_VPCLMULQDQ) &&
	    cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM |
			      XFEATURE_MASK_AVX512, NULL))
		cpu_engine = ROCE_CRC32_ENGINE_WIDE;
#endif
#ifdef HAVE_CRC32_OPTIMIZATIONS
	kernel_fast = crc32_optimizations() & CRC32_LE_OPTIMIZATION;
#endif
	engine = engine_for(asked);
	pr_info("sroce: ICRC by %s\n", engine_names[engine]);
}

static int engine_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(engine_names, val);

	if (i < 0)
		return -EINVAL;
	/* Before init (modprobe sroce crc_engine=...) cpu_engine is still
	 * 0: init applies the request then.
	 */
	asked = i;
	WRITE_ONCE(engine, engine_for(asked));
	return 0;
}

static int engine_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", engine_names[READ_ONCE(engine)]);
}

static const struct kernel_param_ops engine_ops = {
	.set = engine_set,
	.get = engine_get,
};
module_param_cb(crc_engine, &engine_ops, NULL, 0644);
MODULE_PARM_DESC(crc_engine, "ICRC engine: kernel (its crc32_le(), where accelerated), avx512, pclmul or table (capped by what the kernel and CPU have)");
