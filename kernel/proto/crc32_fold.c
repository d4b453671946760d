// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CRC-32 (reflected, 0xEDB88320) by carry-less multiplication: the way
 * real CPUs checksum at memory speed, and so the way the ICRC should be
 * computed on them.  Only for x86-64 with PCLMULQDQ; elsewhere, or where
 * the vector unit may not be used, crc32.c's tables do the work.
 *
 * The method is polynomial folding (Gopal et al., "Fast CRC Computation
 * for Generic Polynomials Using PCLMULQDQ", Intel, 2009).  Four 128-bit
 * accumulators walk the input 64 bytes at a time: each step multiplies an
 * accumulator by x^512 mod P (as two 64x33-bit carry-less products) and
 * adds the next 16 bytes, which leaves the CRC of the message unchanged.
 * At the end the four fold into one 16-byte value R whose CRC, taken from
 * a zero register, is the CRC of everything folded; crc32.c's table takes
 * R and the last few bytes.  That skips the usual Barrett reduction: one
 * 16-byte table step per call costs less than getting it right twice.
 *
 * When @dst is given, each 64-byte block is stored there from the same
 * registers it is folded from: the copy and the CRC read memory once.
 *
 * Constants: bit-reversed (x^n mod P) shifted left by one, for the lane
 * layout PCLMULQDQ gives reflected data.  The host test checks the fold
 * against a bit-at-a-time CRC at every length, so a wrong digit shows.
 */
#include "crc32.h"

/*
 * sparse cannot parse GCC's vector types and builtins: it checks the
 * table fallback below, which has the same interface, instead.
 */
#if defined(__x86_64__) && !defined(__CHECKER__)

typedef long long roce_v2di __attribute__((vector_size(16)));
typedef long long roce_v8di __attribute__((vector_size(64)));

/* {x^(n+32), x^(n-32)} mod P, as above, for a fold over n bits */
#define FOLD_2048_LO 0x11542778all
#define FOLD_2048_HI 0x1322d1430ll
#define FOLD_512_LO 0x154442bd4ll
#define FOLD_512_HI 0x1c6e41596ll
#define FOLD_128_LO 0x1751997d0ll
#define FOLD_128_HI 0x0ccaa009ell

/* Inlined everywhere: a call per 16 bytes would cost more than the fold. */
#define TARGET_128 __attribute__((target("sse4.1,pclmul"), always_inline))
#define TARGET_512 __attribute__((target("sse4.1,pclmul,avx512f,vpclmulqdq"), always_inline))

#ifdef __clang__
#define clmul512(a, b, imm) __builtin_ia32_pclmulqdq512(a, b, imm)
#else
#define clmul512(a, b, imm) __builtin_ia32_vpclmulqdq_v8di(a, b, imm)
#endif

/* ---- 16 bytes per register: any CPU with PCLMULQDQ ---------------------- */

static inline TARGET_128 roce_v2di load16(const u8 *p)
{
	roce_v2di v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline TARGET_128 void store16(u8 *p, roce_v2di v)
{
	memcpy(p, &v, sizeof(v));
}

/* acc * x^(distance) mod P (k holds the two constants), plus next */
static inline TARGET_128 roce_v2di fold16(roce_v2di acc, roce_v2di k,
					  roce_v2di next)
{
	return __builtin_ia32_pclmulqdq128(acc, k, 0x00) ^
	       __builtin_ia32_pclmulqdq128(acc, k, 0x11) ^ next;
}

/*
 * The end of both engines: fold 16 bytes at a time while there are 16,
 * then the CRC of the 16-byte remainder and the last bytes by table.
 */
static inline TARGET_128 u32 finish16(roce_v2di a, u8 *dst, const u8 *src,
				      size_t n, const bool copy)
{
	const roce_v2di k128 = { FOLD_128_LO, FOLD_128_HI };
	u8 r[16];
	u32 state;

	while (n >= 16) {
		roce_v2di b = load16(src);

		if (copy) {
			store16(dst, b);
			dst += 16;
		}
		a = fold16(a, k128, b);
		src += 16;
		n -= 16;
	}
	store16(r, a);
	state = roce_crc32_table_update(0, r, sizeof(r));
	return copy ? roce_crc32_table_copy(state, dst, src, n) :
		      roce_crc32_table_update(state, src, n);
}

static inline TARGET_128 u32 engine16(u32 state, u8 *dst, const u8 *src,
				      size_t n, const bool copy)
{
	const roce_v2di k512 = { FOLD_512_LO, FOLD_512_HI };
	const roce_v2di k128 = { FOLD_128_LO, FOLD_128_HI };
	const roce_v2di seed = { (long long)state, 0 };
	roce_v2di a0 = load16(src), a1 = load16(src + 16);
	roce_v2di a2 = load16(src + 32), a3 = load16(src + 48);

	if (copy) {
		store16(dst, a0);
		store16(dst + 16, a1);
		store16(dst + 32, a2);
		store16(dst + 48, a3);
		dst += 64;
	}
	a0 ^= seed;	/* the register enters as the first four bytes */
	src += 64;
	n -= 64;

	while (n >= 64) {
		roce_v2di b0 = load16(src), b1 = load16(src + 16);
		roce_v2di b2 = load16(src + 32), b3 = load16(src + 48);

		if (copy) {
			store16(dst, b0);
			store16(dst + 16, b1);
			store16(dst + 32, b2);
			store16(dst + 48, b3);
			dst += 64;
		}
		a0 = fold16(a0, k512, b0);
		a1 = fold16(a1, k512, b1);
		a2 = fold16(a2, k512, b2);
		a3 = fold16(a3, k512, b3);
		src += 64;
		n -= 64;
	}
	a0 = fold16(a0, k128, a1);
	a0 = fold16(a0, k128, a2);
	a0 = fold16(a0, k128, a3);
	return finish16(a0, dst, src, n, copy);
}

/* ---- 64 bytes per register: AVX-512 with VPCLMULQDQ ---------------------- */

static inline TARGET_512 roce_v8di load64(const u8 *p)
{
	roce_v8di v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline TARGET_512 void store64(u8 *p, roce_v8di v)
{
	memcpy(p, &v, sizeof(v));
}

/* Four independent 16-byte folds, one per 128-bit lane. */
static inline TARGET_512 roce_v8di fold64(roce_v8di acc, roce_v8di k,
					  roce_v8di next)
{
	return clmul512(acc, k, 0x00) ^ clmul512(acc, k, 0x11) ^ next;
}

/*
 * Four accumulators of four lanes: 256 bytes per step, each lane folded
 * over 2048 bits.  Then the four registers fold into one (512 bits apart),
 * that one takes any further 64-byte blocks, and its four lanes fold into
 * one 16-byte value (128 bits apart) for finish16.  n >= 256.
 */
static inline TARGET_512 u32 engine64(u32 state, u8 *dst, const u8 *src,
				      size_t n, const bool copy)
{
	const roce_v8di k2048 = { FOLD_2048_LO, FOLD_2048_HI, FOLD_2048_LO,
				  FOLD_2048_HI, FOLD_2048_LO, FOLD_2048_HI,
				  FOLD_2048_LO, FOLD_2048_HI };
	const roce_v8di k512 = { FOLD_512_LO, FOLD_512_HI, FOLD_512_LO,
				 FOLD_512_HI, FOLD_512_LO, FOLD_512_HI,
				 FOLD_512_LO, FOLD_512_HI };
	const roce_v8di seed = { (long long)state };
	const roce_v2di k128 = { FOLD_128_LO, FOLD_128_HI };
	roce_v8di a0 = load64(src), a1 = load64(src + 64);
	roce_v8di a2 = load64(src + 128), a3 = load64(src + 192);
	roce_v2di l0, l1, l2, l3;
	u8 lanes[64];

	if (copy) {
		store64(dst, a0);
		store64(dst + 64, a1);
		store64(dst + 128, a2);
		store64(dst + 192, a3);
		dst += 256;
	}
	a0 ^= seed;
	src += 256;
	n -= 256;

	while (n >= 256) {
		roce_v8di b0 = load64(src), b1 = load64(src + 64);
		roce_v8di b2 = load64(src + 128), b3 = load64(src + 192);

		if (copy) {
			store64(dst, b0);
			store64(dst + 64, b1);
			store64(dst + 128, b2);
			store64(dst + 192, b3);
			dst += 256;
		}
		a0 = fold64(a0, k2048, b0);
		a1 = fold64(a1, k2048, b1);
		a2 = fold64(a2, k2048, b2);
		a3 = fold64(a3, k2048, b3);
		src += 256;
		n -= 256;
	}
	a0 = fold64(a0, k512, a1);
	a0 = fold64(a0, k512, a2);
	a0 = fold64(a0, k512, a3);
	while (n >= 64) {
		roce_v8di b = load64(src);

		if (copy) {
			store64(dst, b);
			dst += 64;
		}
		a0 = fold64(a0, k512, b);
		src += 64;
		n -= 64;
	}

	store64(lanes, a0);
	l0 = load16(lanes);
	l1 = load16(lanes + 16);
	l2 = load16(lanes + 32);
	l3 = load16(lanes + 48);
	l0 = fold16(l0, k128, l1);
	l0 = fold16(l0, k128, l2);
	l0 = fold16(l0, k128, l3);
	return finish16(l0, dst, src, n, copy);
}

/* One out-of-line body per engine and per copy-or-not, each compiled for its ISA */
__attribute__((target("sse4.1,pclmul")))
static u32 fold16_copy(u32 state, u8 *dst, const u8 *src, size_t n)
{
	return engine16(state, dst, src, n, true);
}

__attribute__((target("sse4.1,pclmul")))
static u32 fold16_crc(u32 state, const u8 *src, size_t n)
{
	return engine16(state, NULL, src, n, false);
}

__attribute__((target("sse4.1,pclmul,avx512f,vpclmulqdq")))
static u32 fold64_copy(u32 state, u8 *dst, const u8 *src, size_t n)
{
	return engine64(state, dst, src, n, true);
}

__attribute__((target("sse4.1,pclmul,avx512f,vpclmulqdq")))
static u32 fold64_crc(u32 state, const u8 *src, size_t n)
{
	return engine64(state, NULL, src, n, false);
}

u32 roce_crc32_fold(u32 state, void *dst, const void *src, size_t n,
		    int engine)
{
	if (engine >= ROCE_CRC32_ENGINE_WIDE && n >= 256)
		return dst ? fold64_copy(state, (u8 *)dst, (const u8 *)src, n) :
			     fold64_crc(state, (const u8 *)src, n);
	return dst ? fold16_copy(state, (u8 *)dst, (const u8 *)src, n) :
		     fold16_crc(state, (const u8 *)src, n);
}

#else /* no folding engine on this architecture (never called), or sparse */

u32 roce_crc32_fold(u32 state, void *dst, const void *src, size_t n,
		    int engine)
{
	return dst ? roce_crc32_table_copy(state, dst, src, n) :
		     roce_crc32_table_update(state, src, n);
}

#endif

#ifndef __KERNEL__
/*
 * The host's answer to "may a fold engine run now": the widest the CPU
 * has, capped by roce_crc32_host_engine (tests and benchmarks lower it to
 * measure the narrower engines).  The kernel's answer (which the CPU has
 * and whether the FPU may be borrowed in this context) is in
 * kernel/crc_simd.c.
 */
int roce_crc32_host_engine = ROCE_CRC32_ENGINE_WIDE;

int roce_crc32_accel_begin(void)
{
	int best = ROCE_CRC32_ENGINE_TABLE;

#if defined(__x86_64__)
	if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1"))
		best = ROCE_CRC32_ENGINE_PCLMUL;
	if (best && __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("vpclmulqdq"))
		best = ROCE_CRC32_ENGINE_WIDE;
#endif
	return best < roce_crc32_host_engine ? best : roce_crc32_host_engine;
}

void roce_crc32_accel_end(void)
{
}

/*
 * The host has no platform CRC: tests turn this on to drive the path the
 * kernel takes where crc32_le() is accelerated, with the tables as its
 * stand-in.
 */
bool roce_crc32_host_platform;

bool roce_crc32_platform_preferred(void)
{
	return roce_crc32_host_platform;
}

u32 roce_crc32_platform(u32 state, const void *p, size_t n)
{
	return roce_crc32_table_update(state, p, n);
}
#endif
