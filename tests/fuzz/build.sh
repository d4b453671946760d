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

mkdir -p "$out/proto"
san="address,undefined -fno-sanitize-recover=all"
flags="-std=c11 -g -O1 -Wall -Wextra -Werror -I$proto"
# The protocol code once, instrumented for libFuzzer's coverage, for every
# target to link; one compiler a core (it was compiled again for each
# target, one file at a time: 68 compiles where 20 do).
# shellcheck disable=SC2086
ls "$proto"/*.c | xargs -P "$(nproc)" -I{} sh -c \
	'"$1" $2 -fsanitize=fuzzer-no-link,$3 -c "$4" -o "$5/proto/$(basename "$4" .c).o"' \
	build.sh "$cc" "$flags" "$san" {} "$out"
# shellcheck disable=SC2086
ls "$here"/fuzz_*.c | xargs -P "$(nproc)" -I{} sh -c \
	'name=$(basename "$4" .c) &&
	 "$1" $2 -fsanitize=fuzzer,$3 "$4" "$5"/proto/*.o -o "$5/$name" && echo "built $5/$name"' \
	build.sh "$cc" "$flags" "$san" {} "$out"
