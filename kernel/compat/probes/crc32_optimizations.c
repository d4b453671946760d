// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* crc32_optimizations() (6.14): whether the kernel's crc32_le() is
 * accelerated on this CPU.  Before it, crc32_le() is the generic one.
 */
#include <linux/bits.h>	/* crc32.h uses BIT() without including it */
#include <linux/crc32.h>

u32 sroce_probe(void);
u32 sroce_probe(void)
{
	return crc32_optimizations() & CRC32_LE_OPTIMIZATION;
}
