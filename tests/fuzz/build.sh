#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Build the libFuzzer targets from the same kernel/proto sources the module
# compiles.
#
#   tests/fuzz/build.sh OUTDIR
#   mkdir -p /tmp/corpus
#   OUTDIR/fuzz_parse -max_total_time=60 /tmp/corpus tests/fuzz/corpus
#
# (libFuzzer writes new inputs into the *first* corpus directory, so keep
# the checked-in seeds second.)
set -eu

out=${1:?usage: $0 OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
proto="$here/../../kernel/proto"
cc=${CC:-clang}

mkdir -p "$out"
"$cc" -std=c11 -g -O1 -Wall -Wextra -Werror \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-I"$proto" "$proto"/*.c "$here/fuzz_parse.c" -o "$out/fuzz_parse"
echo "built $out/fuzz_parse"
