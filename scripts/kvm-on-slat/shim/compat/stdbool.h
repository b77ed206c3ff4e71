/* SPDX-License-Identifier: MIT */
/* libslat's <stdbool.h> inside the kernel: bool, true and false. */
#ifndef KVM_SLAT_COMPAT_STDBOOL_H
#define KVM_SLAT_COMPAT_STDBOOL_H

#include <linux/stddef.h>
#include <linux/types.h>

#endif
