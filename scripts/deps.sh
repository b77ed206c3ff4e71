#!/usr/bin/env bash
# Install the Debian packages slat needs to build and test, if missing.
#   cmake, gcc, make           the build (CMake + CTest)
#   pkg-config                 installs are found with pkg-config
#   libcmocka-dev              unit tests
#   liburcu-dev                deferred table reclamation (hosted, concurrent)
#   libboost-context-dev       the simulator's deterministic mode switches
#                              vCPUs on one thread with Boost.Context
#   gcc-aarch64-linux-gnu,
#   binutils-aarch64-linux-gnu prove the core freestanding (freestanding-check),
#                              and build the QEMU oracle's EL2 program
#   qemu-system-arm            the oracle: QEMU's Armv8 walker checks our tables
#   qemu-system-x86            the NPT oracle: QEMU's SVM nested paging walker
#                              (TCG, any host) checks our NPT tables
#   bochs, bochs-sdl,
#   bochsbios, vgabios         the EPT oracle: Bochs's VMX/EPT walker checks our
#                              EPT tables (bochs-sdl: its SDL2 display, run
#                              with SDL's dummy video driver, is the headless
#                              one Debian builds; the BIOS boots the program)
#   device-tree-compiler       slat-hyp's device-tree reader and editor are
#                              tested on trees dtc compiles and decompiles
#   clang, libclang-rt-14-dev  libFuzzer for the fuzzing harness
#   g++                        the public headers compile as C++ too
#                              (tests/cxx_headers.cpp, -Wpedantic)
#   help2man                   the man pages of slat-dump and slat-perf, made
#                              from their --help and --version at build time
#                              (without it the build skips them)
#   valgrind                   bench/callgrind.sh (make bench): instructions
#                              per leaf; its valgrind/callgrind.h lets
#                              slat-bench count only its timed region
# and the arm64 architecture in apt, for slat-hyp's guest: Debian's arm64
# kernel and busybox-static, which hyp/fetch.sh downloads into the build
# folder when the hyp_boot test first runs.
set -euo pipefail

packages=(cmake gcc make pkg-config libcmocka-dev liburcu-dev
	libboost-context-dev
	gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu
	qemu-system-arm qemu-system-x86 bochs bochs-sdl bochsbios vgabios device-tree-compiler clang libclang-rt-14-dev g++ help2man valgrind)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg -s "$p" >/dev/null 2>&1; then
		missing+=("$p")
	fi
done

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	sudo=(sudo)
fi
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	echo "deps: adding the arm64 architecture (slat-hyp's guest packages)"
	"${sudo[@]}" dpkg --add-architecture arm64
	"${sudo[@]}" apt-get update
fi
if [ "${#missing[@]}" -eq 0 ]; then
	exit 0
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
