// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * insn_mark NUMBER: sets mark NUMBER for the instruction-counting qemu
 * plugin (bench/insn/sroce_insn.c), which writes the guest's kernel and
 * user instruction totals at that moment.  A CPUID with a value in EAX
 * that no leaf uses: on a guest without the plugin it is one harmless
 * CPUID.  scripts/bench --insns takes the difference between two runs of
 * a workload that differ only in their message count, so this program's
 * own start and exit cancel out.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SROCE_INSN_MAGIC 0x534f4352u	/* bench/insn/sroce_insn.c */

int main(int argc, char **argv)
{
	uint32_t a = SROCE_INSN_MAGIC, b, c = 0, d = 0;
	char *end;
	unsigned long n;

	if (argc != 2) {
		fprintf(stderr, "usage: insn_mark NUMBER\n");
		return 2;
	}
	n = strtoul(argv[1], &end, 0);
	if (*argv[1] == '\0' || *end || n > UINT32_MAX) {
		fprintf(stderr, "insn_mark: '%s' is not a 32-bit number\n", argv[1]);
		return 2;
	}
	b = (uint32_t)n;
	__asm__ volatile("cpuid" : "+a"(a), "+b"(b), "+c"(c), "+d"(d));
	return 0;
}
