/* SPDX-License-Identifier: MIT */
/*
 * Forced into each libslat source built in the kernel (-include), after
 * the kernel's compiler_types.h: that header defines noinline as a macro,
 * which would expand inside libslat's __attribute__((noinline)).
 */
#undef noinline
