# A thin wrapper around CMake. Targets:
#   make deps       install the missing Debian packages (scripts/deps.sh)
#   make demo       install missing packages, build slat-perf (and only
#                   it), then run it: a dirty_log_perf_test run (2 vCPUs x
#                   256M, synthetic backing) and one seed's before and after
#                   (seed 004, MMIO unmap of 8G: page by page vs blocks)
#   make check      install missing packages, build and run every test (plain
#                   and with AddressSanitizer/UBSan), the concurrency and
#                   simulator tests with ThreadSanitizer, and the
#                   concurrency tests again in a Release build, build (no tests) a
#                   Debug build with gcc and a build with clang, install into
#                   a temporary prefix and build programs against it
#                   (tests/install/run.sh), fuzz for a minute, prove the core
#                   freestanding, and run KVM's own stage-2 code beside
#                   libslat on every scenario they share, its tables
#                   checked against ours descriptor for descriptor, and
#                   on random operations (bench/kvm-peer/kvm-diff.c)
#   make bench      install missing packages, build, then run the benchmark
#                   (slat-bench, then bench/callgrind.sh: instructions per
#                   leaf beside KVM's)
#   make bench-kvm  the same with KVM's own stage-2 code run beside libslat
#                   (slat-bench --kvm): its pgtable.c comes from Debian's
#                   linux-source package (installed if missing), built in
#                   build-kvm/ with bench/kvm-peer/shim/ for the kernel
#   make install    build (no tests) in build-install/ and install the
#                   libraries (static and shared), headers, CMake package,
#                   pkg-config files, man pages, slat-dump and slat-perf
#                   (PREFIX=/usr/local by default; DESTDIR is honoured;
#                   SLAT_INSTALL_BENCH=ON adds the benchmark programs).
#                   Packages are not installed: run make deps first if needed
#   make uninstall  remove what make install put (its install_manifest.txt;
#                   give the same DESTDIR)
#   make hyp-demo   install missing packages, build slat-hyp, fetch Debian's
#                   arm64 kernel and busybox (once), and boot them under
#                   slat-hyp in QEMU to a shell on this console; 'poweroff -f'
#                   ends the run and slat-hyp prints its counters
#                   (docs/hypervisor.md). HYP_DEMO_ARGS='--log wp' (or hw)
#                   turns dirty logging on, whose check's phases are then
#                   run from the shell with devmem (docs/hypervisor.md)
#   make kvm-on-slat  install missing packages, build two arm64 kernels from
#                   Debian's linux-source-6.12, stock and with libslat as
#                   KVM's stage 2, boot each at EL2 in QEMU and run KVM's
#                   selftests in both: a verdict table
#                   (docs/kvm-on-slat.md; long: not part of make check)
#   make kvm-on-slat-kasan  the same for the libslat kernel built with KASAN
#                   (kasan.config) and the selftests of tests-kasan.txt: a
#                   KASAN report fails the run (docs/kvm-on-slat.md; long)

BUILD       := build
ASAN_BUILD  := build-asan
TSAN_BUILD  := build-tsan
DEBUG_BUILD := build-debug
CLANG_BUILD := build-clang
RELEASE_BUILD := build-release
INSTALL_BUILD := build-install
KVM_BUILD   := build-kvm
JOBS        := -j2
PREFIX      ?= /usr/local
SLAT_INSTALL_BENCH ?= OFF
CMAKE       ?= cmake
CTEST       ?= ctest

MAKEFLAGS += --no-print-directory

comma := ,
# $(call cmake_build,DIR,EXTRA-OPTIONS): configure and build DIR.
cmake_build = $(CMAKE) -S . -B $(1) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(2) && \
	$(CMAKE) --build $(1) $(JOBS)
# $(call run_tests,DIR)
run_tests = cd $(1) && $(CTEST) --output-on-failure --no-tests=error $(JOBS)

.PHONY: deps demo check bench bench-kvm kvm-build install uninstall hyp-demo \
	kvm-on-slat kvm-on-slat-kasan

deps:
	scripts/deps.sh

demo:
	scripts/deps.sh
	# Only what the demo runs: slat-perf and the libraries under it.
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	$(CMAKE) --build $(BUILD) $(JOBS) --target slat-perf
	./$(BUILD)/tools/slat-perf/slat-perf dirty-log -m 6 -v 2 -b 256M -s synthetic
	./$(BUILD)/tools/slat-perf/slat-perf mmio -b 8G --flush=entry --compare mmio-map=page,block

check:
	scripts/deps.sh
	# Warnings are errors with every compiler and optimisation level: a
	# Debug build (gcc, -O0) and a clang build of the whole tree, built
	# only, first (a few seconds each; their tests are the ones below).
	$(call cmake_build,$(DEBUG_BUILD),-DCMAKE_BUILD_TYPE=Debug -DSLAT_SANITIZE=)
	CC=clang $(CMAKE) -S . -B $(CLANG_BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
		-DSLAT_SANITIZE=
	$(CMAKE) --build $(CLANG_BUILD) $(JOBS)
	$(call cmake_build,$(BUILD),-DSLAT_SANITIZE=)
	$(call run_tests,$(BUILD))
	# The install of that build, used by programs outside the tree.
	tests/install/run.sh $(BUILD)
	$(call cmake_build,$(ASAN_BUILD),-DSLAT_SANITIZE=address$(comma)undefined)
	$(call run_tests,$(ASAN_BUILD))
	# ThreadSanitizer: only the concurrency tests (label "stress", one at
	# a time) and the simulator's tests that run vCPU threads (label
	# "tsan").
	$(CMAKE) -S . -B $(TSAN_BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
		-DSLAT_SANITIZE=thread
	$(CMAKE) --build $(TSAN_BUILD) $(JOBS) --target slat-stress slat-sim-tsan
	cd $(TSAN_BUILD) && $(CTEST) --output-on-failure --no-tests=error \
		-L 'stress|tsan'
	# The concurrency tests again in a Release build (-O3), which runs
	# the bulk loops two entries per access as a hypervisor's build does
	# (ThreadSanitizer's takes them one at a time); hw_races checks the
	# whole table after every round there.
	$(CMAKE) -S . -B $(RELEASE_BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
		-DCMAKE_BUILD_TYPE=Release -DSLAT_SANITIZE=
	$(CMAKE) --build $(RELEASE_BUILD) $(JOBS) --target slat-stress
	cd $(RELEASE_BUILD) && $(CTEST) --output-on-failure --no-tests=error \
		-L stress
	# libFuzzer (clang, ASan, UBSan) over the seed corpus, bounded.
	FUZZ_SECONDS=60 tests/fuzz/run.sh
	scripts/freestanding-check.sh
	# KVM's pgtable.c beside libslat: every shared scenario once, small,
	# its tables against ours (a failed comparison fails the run); then
	# random operations on both, the trees compared after each.
	$(MAKE) kvm-build
	./$(KVM_BUILD)/bench/slat-bench --kvm --small \
		--cost-out $(KVM_BUILD)/kvm.cost >$(KVM_BUILD)/small.txt || \
		{ cat $(KVM_BUILD)/small.txt; exit 1; }
	grep -q 'KVM here' $(KVM_BUILD)/small.txt
	# KVM's software costs measured there, read by slat-perf as a cost file.
	./$(BUILD)/tools/slat-perf/slat-perf --cost $(KVM_BUILD)/kvm.cost \
		dirty-log -m 6 -v 1 -b 16M -i 2 -s synthetic >$(KVM_BUILD)/costs.txt
	grep -Eq 'entry_visit [0-9.]+ ns \(file\)' $(KVM_BUILD)/costs.txt
	grep -Eq 'entry_write [0-9.]+ ns \(file\)' $(KVM_BUILD)/costs.txt
	grep -Eq 'leaf_install [0-9.]+ ns \(file\)' $(KVM_BUILD)/costs.txt
	for g in "" -16k -64k; do for seed in 1 2 3; do \
		./$(KVM_BUILD)/bench/slat-kvm-diff$$g --seed $$seed --ops 3000 || exit 1; \
	done; done

hyp-demo:
	scripts/deps.sh
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	$(CMAKE) --build $(BUILD) $(JOBS) --target slat-hyp slat-mkcpio
	hyp/run.sh --demo $(HYP_DEMO_ARGS) --elf $(BUILD)/hyp/slat-hyp.elf \
		--mkcpio $(BUILD)/hyp/slat-mkcpio --cache $(BUILD)/hyp/guest

# KVM arm64 with libslat as its stage 2, beside the stock kernel; the
# kernel source is extracted and built under build/kvm-on-slat/.
kvm-on-slat:
	scripts/kvm-on-slat/deps.sh
	scripts/kvm-on-slat/build.sh all
	scripts/kvm-on-slat/run.sh

kvm-on-slat-kasan:
	scripts/kvm-on-slat/deps.sh
	scripts/kvm-on-slat/build.sh slat-kasan
	scripts/kvm-on-slat/run.sh --timeout 3600 \
		--tests scripts/kvm-on-slat/tests-kasan.txt slat-kasan

# Times first (thread CPU and wall), then instructions per leaf, which do
# not depend on the machine's load.
bench:
	scripts/deps.sh
	$(call cmake_build,$(BUILD))
	./$(BUILD)/bench/slat-bench
	bench/callgrind.sh ./$(BUILD)/bench/slat-bench

# slat-bench with KVM's code (bench/kvm-peer/): Debian's kernel source is
# a test input, extracted into the build directory, never into the tree.
kvm-build:
	scripts/deps.sh
	ver=$$(bench/kvm-peer/fetch.sh $(KVM_BUILD)/linux) && \
	$(CMAKE) -S . -B $(KVM_BUILD) -DCMAKE_BUILD_TYPE=Release \
		-DSLAT_BUILD_TESTS=OFF -DSLAT_KVM_SOURCE=$(CURDIR)/$(KVM_BUILD)/linux \
		-DSLAT_KVM_VERSION="$$ver"
	$(CMAKE) --build $(KVM_BUILD) $(JOBS) --target slat-bench slat-kvm-diff \
		slat-kvm-diff-16k slat-kvm-diff-64k

bench-kvm: kvm-build
	./$(KVM_BUILD)/bench/slat-bench --kvm
	bench/callgrind.sh ./$(KVM_BUILD)/bench/slat-bench

# Its own build directory: no tests, no benchmarks unless they are installed.
install:
	$(call cmake_build,$(INSTALL_BUILD),-DSLAT_BUILD_TESTS=OFF \
		-DSLAT_BUILD_BENCH=$(SLAT_INSTALL_BENCH) \
		-DSLAT_INSTALL_BENCH=$(SLAT_INSTALL_BENCH))
	DESTDIR="$(DESTDIR)" $(CMAKE) --install $(INSTALL_BUILD)

uninstall:
	DESTDIR="$(DESTDIR)" scripts/uninstall.sh $(INSTALL_BUILD)/install_manifest.txt
