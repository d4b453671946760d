// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "crc32.h"

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
#include "crc32_table.h"

/*
 * Slice-by-8: fold eight input bytes per step.  The register (xored with
 * the first four bytes) and the next four bytes index the eight tables;
 * table k accounts for a byte that still has k bytes to travel.
 */
u32 roce_crc32_update(u32 state, const void *p, size_t n)
{
	const u32 (*t)[256] = roce_crc32_table;
	const u8 *b = (const u8 *)p;
	u32 crc = state;

	while (n >= 8) {
		u32 lo = crc ^ roce_get_le32(b);
		u32 hi = roce_get_le32(b + 4);

		crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^
		      t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
		      t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^
		      t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
		b += 8;
		n -= 8;
	}
	while (n--)
		crc = (crc >> 8) ^ t[0][(crc ^ *b++) & 0xFF];
	return crc;
}
#endif
