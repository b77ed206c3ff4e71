// SPDX-License-Identifier: MIT
// Every public header, compiled as C++ with -Wpedantic: a C++ hypervisor
// includes them as they are. The inline helpers are used once each.
#include <slat/hosted.h>
#include <slat/sim.h>
#include <slat/slat.h>
#include <slat/twostage.h>
#include <slat/types.h>
#include <slat/version.h>
#include <slat/walk.h>

int main()
{
	slat_ipa_t ipa = slat_ipa(0x1000);
	slat_pa_t pa = slat_pa(0x2000);
	struct slat_op op = {};
	op.flags = SLAT_SHARED;
	return (slat_ipa_v(ipa) + slat_pa_v(pa) + op.flags) == 0x3001 ? 0 : 1;
}
