# Toolchain file: build only the freestanding core for bare-metal aarch64.
#   cmake -S . -B build-aarch64 -DSLAT_CORE_ONLY=ON \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-none.cmake
# The flags of scripts/freestanding-check.sh: no C library; no FP/SIMD
# registers (-mgeneral-regs-only: EL2 code need not save them); atomics
# inline (-mno-outline-atomics: no libgcc helpers reading HWCAP). More in
# the environment (CFLAGS=-mstrict-align cmake ...): docs/building.md,
# "Bare metal".
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
# No libc to link test programs against: check the compiler with a library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_C_FLAGS_INIT "-ffreestanding -nostdlib -mgeneral-regs-only -mno-outline-atomics -fno-tree-loop-distribute-patterns")
