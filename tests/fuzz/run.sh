#!/usr/bin/env bash
# Build the libFuzzer harness with clang, ASan and UBSan in its own build
# directory and fuzz for a bounded time over the seed corpus.
#
#   tests/fuzz/run.sh                 # 60 s
#   FUZZ_SECONDS=600 tests/fuzz/run.sh
#   FUZZ_JOBS=2 tests/fuzz/run.sh     # parallel fuzzing processes
#   FUZZ_BUILD=dir tests/fuzz/run.sh  # build directory (build-fuzz)
#   FUZZ_KNOWN_BUGS= tests/fuzz/run.sh  # also hit the known core bugs
#
# FUZZ_KNOWN_BUGS names core bugs that are reported and not fixed yet
# (tests/fuzz/known-bugs, docs/fuzzing.md): the harness steers around them
# so that a run looks for new ones. By default, every name in known-bugs.
# New inputs go to $FUZZ_BUILD/corpus (the committed seed corpus in
# tests/fuzz/corpus is only read); crashes to $FUZZ_BUILD/crashes/.
# Replay one with: $FUZZ_BUILD/tests/fuzz/fuzz_ops FILE
# (or, with any compiler, build/tests/fuzz/fuzz_replay FILE).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
known=$(grep -Ev '^(#|$)' "$root/tests/fuzz/known-bugs" | paste -sd, - || true)
export FUZZ_KNOWN_BUGS=${FUZZ_KNOWN_BUGS-$known}

if ! command -v clang >/dev/null 2>&1; then
	echo "fuzz: clang not found (apt-get install clang libclang-rt-14-dev)" >&2
	exit 1
fi

CC=clang cmake -S "$root" -B "$build" -DSLAT_FUZZ=ON \
	-DSLAT_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	>/dev/null
cmake --build "$build" --target fuzz_ops -j2 >/dev/null

mkdir -p "$build/corpus" "$build/crashes"
# -timeout: one input must never take a second; -rss_limit_mb: the arenas
# are reserved lazily but ASan's shadow counts.
args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096
	-max_len=512 -print_final_stats=1
	-artifact_prefix="$build/crashes/")
if [ "$jobs" -gt 1 ]; then
	args+=(-jobs="$jobs" -workers="$jobs")
fi
cd "$build"
echo "fuzz: ${seconds}s over $root/tests/fuzz/corpus (new inputs in $build/corpus)"
if [ -n "$FUZZ_KNOWN_BUGS" ]; then
	echo "fuzz: steering around known core bugs: $FUZZ_KNOWN_BUGS"
fi
"$build/tests/fuzz/fuzz_ops" "${args[@]}" "$build/corpus" "$root/tests/fuzz/corpus"
