#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Build every libFuzzer target (tests/fuzz/fuzz_NAME.c -> OUTDIR/fuzz_NAME)
# from the same kernel/proto sources the module compiles.
#
#   tests/fuzz/build.sh OUTDIR
#   mkdir -p /tmp/corpus
#   OUTDIR/fuzz_parse -max_total_time=60 /tmp/corpus tests/fuzz/corpus
#
# Seeds: corpus/ for fuzz_parse (synthetic ones from gen_corpus.py, real
# packets as capture-*.bin from capture_corpus.py), corpus-NAME/ for the
# others.  libFuzzer
# writes new inputs into the *first* corpus directory, so keep the
# checked-in seeds second.  scripts/fuzz runs them all for longer.
set -eu

out=${1:?usage: $0 OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
proto="$here/../../kernel/proto"
cc=${CC:-clang}

mkdir -p "$out"
for src in "$here"/fuzz_*.c; do
	name=$(basename "$src" .c)
	"$cc" -std=c11 -g -O1 -Wall -Wextra -Werror \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-I"$proto" "$proto"/*.c "$src" -o "$out/$name"
	echo "built $out/$name"
done
