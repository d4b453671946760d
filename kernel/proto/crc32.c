// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "crc32.h"
#include "crc32_table.h"

/* One slice-by-8 step: fold eight bytes (lo, hi: little-endian halves). */
static inline u32 crc32_fold8(u32 crc, u32 lo, u32 hi)
{
	const u32 (*t)[256] = roce_crc32_table;

	lo ^= crc;
	return t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^
	       t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
	       t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^
	       t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
}

/*
 * Copy and CRC in one pass: each 8-byte word is loaded once, stored to
 * dst and folded while it sits in registers, so a payload costs one read
 * instead of two (memcpy, then the CRC over the copy).  Same tables in
 * the kernel and on the host, so the host benchmark measures the code the
 * module runs.  dst and src must not overlap.
 */
u32 roce_crc32_table_copy(u32 state, void *dst, const void *src, size_t n)
{
	const u8 *s = (const u8 *)src;
	u8 *d = (u8 *)dst;
	u32 crc = state;

	while (n >= 8) {
		u32 lo = roce_get_le32(s), hi = roce_get_le32(s + 4);

		memcpy(d, s, 8);	/* one unaligned 64-bit move */
		crc = crc32_fold8(crc, lo, hi);
		s += 8;
		d += 8;
		n -= 8;
	}
	while (n--) {
		*d++ = *s;
		crc = (crc >> 8) ^ roce_crc32_table[0][(crc ^ *s++) & 0xFF];
	}
	return crc;
}

/*
 * Slice-by-8: fold eight input bytes per step.  The register (xored with
 * the first four bytes) and the next four bytes index the eight tables;
 * table k accounts for a byte that still has k bytes to travel.
 */
u32 roce_crc32_table_update(u32 state, const void *p, size_t n)
{
	const u8 *b = (const u8 *)p;
	u32 crc = state;

	while (n >= 8) {
		crc = crc32_fold8(crc, roce_get_le32(b), roce_get_le32(b + 4));
		b += 8;
		n -= 8;
	}
	while (n--)
		crc = (crc >> 8) ^ roce_crc32_table[0][(crc ^ *b++) & 0xFF];
	return crc;
}

/*
 * The fold engine keeps the vector unit for at most this many bytes at a
 * time: in the kernel, borrowing it disables preemption, and a 1 MiB
 * buffer must not hold a CPU for the whole of it.
 */
#define ROCE_CRC32_FOLD_CHUNK 4096

static u32 crc32_best(u32 state, u8 *dst, const u8 *src, size_t n)
{
	int engine;

	if (n >= ROCE_CRC32_FOLD_MIN && roce_crc32_platform_preferred()) {
		if (dst) {
			memcpy(dst, src, n);
			src = dst;
		}
		return roce_crc32_platform(state, src, n);
	}
	while (n >= ROCE_CRC32_FOLD_MIN &&
	       (engine = roce_crc32_accel_begin()) != ROCE_CRC32_ENGINE_TABLE) {
		/* Never leave a remainder too short to fold. */
		size_t k = n < 2 * ROCE_CRC32_FOLD_CHUNK ? n : ROCE_CRC32_FOLD_CHUNK;

		state = roce_crc32_fold(state, dst, src, k, engine);
		roce_crc32_accel_end();
		if (dst)
			dst += k;
		src += k;
		n -= k;
	}
	if (!n)
		return state;
	return dst ? roce_crc32_table_copy(state, dst, src, n) :
		     roce_crc32_table_update(state, src, n);
}

u32 roce_crc32_update(u32 state, const void *p, size_t n)
{
	return crc32_best(state, NULL, (const u8 *)p, n);
}

u32 roce_crc32_copy(u32 state, void *dst, const void *src, size_t n)
{
	return crc32_best(state, (u8 *)dst, (const u8 *)src, n);
}
