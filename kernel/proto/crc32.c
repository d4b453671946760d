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
u32 roce_crc32_copy(u32 state, void *dst, const void *src, size_t n)
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

#ifdef __KERNEL__
#include <linux/crc32.h>

/*
 * crc32_le() takes and returns the raw register with no inversion, which
 * is exactly our state convention, so this is a plain forward.
 */
u32 roce_crc32_update(u32 state, const void *p, size_t n)
{
	return crc32_le(state, p, n);
}

#else /* host */
/*
 * Slice-by-8: fold eight input bytes per step.  The register (xored with
 * the first four bytes) and the next four bytes index the eight tables;
 * table k accounts for a byte that still has k bytes to travel.
 */
u32 roce_crc32_update(u32 state, const void *p, size_t n)
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
#endif
