/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The CRC-32 engine under the ICRC: reflected IEEE polynomial 0xEDB88320.
 *
 * Convention (identical to the kernel's crc32_le()): the state is the raw
 * CRC register.  roce_crc32_update() applies NO pre- or post-inversion;
 * whoever starts a CRC seeds it (0xFFFFFFFF for a standard CRC-32) and
 * whoever ends it inverts.  So zlib's crc32(0, p, n) equals
 * ~roce_crc32_update(0xFFFFFFFF, p, n), and chaining update calls over
 * split buffers gives the same state as one call over the whole.
 */
#ifndef SROCE_PROTO_CRC32_H
#define SROCE_PROTO_CRC32_H

#include "compat.h"

ROCE_EXTERN_C_BEGIN

#define ROCE_CRC32_INIT 0xFFFFFFFFu

/*
 * Both entry points pick the fastest engine the context allows: the
 * carry-less-multiply fold (crc32_fold.c) where the CPU has it and the
 * vector unit may be borrowed, slice-by-8 tables otherwise.
 */
u32 roce_crc32_update(u32 state, const void *p, size_t n);

/*
 * memcpy(dst, src, n) and roce_crc32_update(state, src, n) in one pass
 * over the bytes; returns the new state.  For payloads that are copied
 * anyway: into an skb on send, out of one on receive.  dst and src must
 * not overlap.
 */
u32 roce_crc32_copy(u32 state, void *dst, const void *src, size_t n);

/* The engines themselves, for tests and benchmarks. */
u32 roce_crc32_table_update(u32 state, const void *p, size_t n);
u32 roce_crc32_table_copy(u32 state, void *dst, const void *src, size_t n);

/*
 * The fold engines (crc32_fold.c): carry-less multiplication, 16 bytes
 * per register with PCLMULQDQ, 64 with AVX-512's VPCLMULQDQ (from 256
 * bytes on).  n >= ROCE_CRC32_FOLD_MIN, dst NULL for no copy.  Only
 * between a roce_crc32_accel_begin() that returned @engine and _end().
 */
enum {
	ROCE_CRC32_ENGINE_TABLE = 0,
	ROCE_CRC32_ENGINE_PCLMUL = 1,
	ROCE_CRC32_ENGINE_WIDE = 2,
};

#define ROCE_CRC32_FOLD_MIN 64
u32 roce_crc32_fold(u32 state, void *dst, const void *src, size_t n,
		    int engine);

/*
 * Supplied by the world proto is built into: the widest engine that may
 * run here and now (kernel: what the CPU has, if the FPU may be borrowed
 * in this context, which it then claims; host: what the CPU has), or
 * ROCE_CRC32_ENGINE_TABLE.  _end() after any other answer gives it back.
 */
int roce_crc32_accel_begin(void);
void roce_crc32_accel_end(void);

/*
 * Supplied by the world as well: whether a CRC-32 of the platform's own
 * takes every buffer of ROCE_CRC32_FOLD_MIN bytes or more instead of the
 * engines above (kernel: crc32_le() where the kernel accelerates it for
 * this CPU, crc_simd.c), and that CRC, with roce_crc32_update()'s
 * convention.  A copy is then a memcpy() and the CRC over the copy.
 */
bool roce_crc32_platform_preferred(void);
u32 roce_crc32_platform(u32 state, const void *p, size_t n);

#ifndef __KERNEL__
/* Host only: the widest engine accel_begin() may offer (tests, bench). */
extern int roce_crc32_host_engine;
/* Host only: a stand-in platform CRC (the tables) takes over (tests). */
extern bool roce_crc32_host_platform;
#endif

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_CRC32_H */
