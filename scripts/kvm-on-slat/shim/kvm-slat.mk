# SPDX-License-Identifier: MIT
# Kbuild lines for arch/arm64/kvm/Makefile (patch.sh makes that Makefile
# include this file): the shim and libslat's freestanding core, built into
# kvm.o. patch.sh copies them to arch/arm64/kvm/slat/{shim,lib}.

slat-dir := $(srctree)/arch/arm64/kvm/slat
slat-lib := $(patsubst $(slat-dir)/%.c,slat/%.o,\
	$(sort $(wildcard $(slat-dir)/lib/src/*/*.c)))
slat-shim := slat/shim/kvm_slat.o slat/shim/kvm_slat_mm.o \
	slat/shim/kvm_slat_counts.o

kvm-y += $(slat-shim) $(slat-lib)

# libslat's headers find <stdint.h> and friends in shim/compat. Its
# atomics are inlined (LL/SC): the kernel links no libgcc helpers.
slat-cflags := -I$(slat-dir)/shim/compat -I$(slat-dir)/lib/include \
	-I$(slat-dir)/lib/src -DSLAT_API= -mno-outline-atomics \
	-Wno-declaration-after-statement -Wno-missing-prototypes
$(foreach o,$(slat-lib) $(slat-shim),$(eval CFLAGS_$(o) += $(slat-cflags)))
# libslat's sources only: the kernel's noinline macro undone.
$(foreach o,$(slat-lib),\
	$(eval CFLAGS_$(o) += -include $(slat-dir)/shim/compat/prelude.h))
