/* SPDX-License-Identifier: MIT */
/*
 * The guest's PSCI calls (its SMCs, trapped by HCR_EL2.TSC), forwarded
 * to the firmware (QEMU's PSCI) with x0-x7, results x0-x3 back. A call
 * that names where a CPU is to start is rewritten so that the firmware
 * starts it in slat-hyp, at EL2, never in the guest: CPU_ON, and
 * CPU_SUSPEND to a power-down state, whose CPU wakes at EL2 with EL2's
 * state lost (PSCI, Arm DEN 0022: CPU_SUSPEND's entry_point_address).
 * slat-hyp then rebuilds its EL2 state and enters the guest where it
 * asked. Standby states keep the CPU's context and are forwarded as
 * they are. SYSTEM_SUSPEND and CPU_DEFAULT_SUSPEND, which also take an
 * entry point, are refused, and PSCI_FEATURES says so.
 */
#include "hyp.h"

#define PSCI_FN64		0x40000000u	/* SMC64 calling convention */
#define PSCI_FEATURES		0x8400000au
#define PSCI_CPU_SUSPEND	0x84000001u
#define PSCI_CPU_OFF		0x84000002u
#define PSCI_CPU_ON		0x84000003u
#define PSCI_SYSTEM_OFF		0x84000008u
#define PSCI_SYSTEM_RESET	0x84000009u
#define PSCI_CPU_DEFAULT_SUSPEND 0x8400000cu
#define PSCI_SYSTEM_SUSPEND	0x8400000eu

#define PSCI_SUCCESS		0
#define PSCI_NOT_SUPPORTED	((uint64_t)-1)
#define PSCI_INVALID_PARAMETERS	((uint64_t)-2)

/* PSCI_FEATURES(CPU_SUSPEND), bit 1: the extended power_state format. */
#define FEATURES_EXTENDED_STATE	(1u << 1)
/* power_state's StateType, 1 for a power-down state: bit 16 in the
 * original format, bit 30 in the extended one. */
#define STATE_TYPE_ORIGINAL	(1u << 16)
#define STATE_TYPE_EXTENDED	(1u << 30)

void hyp_smc_frame(struct hyp_frame *f);

static uint32_t state_type_powerdown = STATE_TYPE_ORIGINAL;
/* run.sh --idle-states: what QEMU's PSCI leaves out of CPU_SUSPEND. */
static bool suspend_emulated;

/* The function ID, either calling convention (SMC32 or SMC64). */
static uint32_t fn_id(uint64_t x0)
{
	return (uint32_t)x0 & ~PSCI_FN64;
}

/* The calls slat-hyp refuses: each names an entry point at which the
 * firmware would start a CPU, the system's for SYSTEM_SUSPEND. */
static bool refused(uint32_t fn)
{
	return fn == PSCI_SYSTEM_SUSPEND || fn == PSCI_CPU_DEFAULT_SUSPEND;
}

static uint64_t psci_call(uint64_t fn, uint64_t a1)
{
	struct hyp_frame call = { .x = { fn, a1 } };

	hyp_smc_frame(&call);
	return call.x[0];
}

/**
 * hyp_psci_init() - learn the firmware's power_state format
 * @emulate_suspend: nonzero: CPU_SUSPEND gets what QEMU's PSCI, a WFI,
 *	leaves out: the wake-up of a CPU whose guest turned its interrupts
 *	off at the CPU interface, and the power loss of a power-down state
 */
void hyp_psci_init(uint64_t emulate_suspend)
{
	uint64_t f = psci_call(PSCI_FEATURES, PSCI_CPU_SUSPEND | PSCI_FN64);

	if ((int64_t)f >= 0 && (f & FEATURES_EXTENDED_STATE))
		state_type_powerdown = STATE_TYPE_EXTENDED;
	suspend_emulated = emulate_suspend;
	hyp_puts("slat-hyp: PSCI CPU_SUSPEND: ");
	hyp_puts(state_type_powerdown == STATE_TYPE_EXTENDED ? "extended"
							     : "original");
	hyp_puts(" power_state format, power-down states wake in slat-hyp");
	hyp_puts(suspend_emulated ? " (wake-up and power loss emulated)" : "");
	hyp_puts("; SYSTEM_SUSPEND, CPU_DEFAULT_SUSPEND refused\n");
}

/**
 * hyp_psci_powerdown_state() - a power_state for a power-down state
 * @state_id: its StateID
 *
 * Return: the power_state parameter in the firmware's format, power level
 * 0 (the core only).
 */
uint32_t hyp_psci_powerdown_state(uint32_t state_id)
{
	return state_type_powerdown | state_id;
}

static void psci_cpu_on(struct hyp_frame *f)
{
	int cpu = hyp_cpu_index(f->x[1]);
	struct hyp_frame call = *f;

	/* target_cpu is an MPIDR affinity: one of the tree's CPU nodes. */
	if (cpu < 0) {
		f->x[0] = PSCI_INVALID_PARAMETERS;
		return;
	}
	hyp_cpus[cpu].guest_entry = f->x[2];
	hyp_cpus[cpu].guest_ctx = f->x[3];
	call.x[2] = (uint64_t)hyp_secondary_entry;
	call.x[3] = (uint64_t)cpu;
	hyp_smc_frame(&call);
	f->x[0] = call.x[0];
}

/*
 * The firmware's CPU_SUSPEND. Before any idle state but WFI's, the guest
 * turns Group 1 off at its CPU interface (ICC_IGRPEN1_EL1) and marks its
 * redistributor asleep: a real core is woken by its power controller, on
 * the redistributor's request. QEMU's PSCI CPU_SUSPEND is a WFI, which
 * only an interrupt the CPU interface signals ends, so, emulated, Group 1
 * signals for the WFI's length, standing in for that request.
 */
static void suspend_call(struct hyp_frame *call)
{
	uint64_t grpen1 = read_sysreg(s3_0_c12_c12_7);	/* ICC_IGRPEN1_EL1 */

	if (!suspend_emulated) {
		hyp_smc_frame(call);
		return;
	}
	write_sysreg(s3_0_c12_c12_7, 1);
	isb();
	hyp_smc_frame(call);
	write_sysreg(s3_0_c12_c12_7, grpen1);
	isb();
}

/*
 * A power-down state: the firmware is to wake the CPU at slat-hyp's
 * entry, which enters the guest at its own with its context ID, as after
 * CPU_ON. If the call returns, the CPU did not lose its state (or the
 * call failed), and the guest has the result. Emulated, a successful
 * return goes to that entry all the same, EL2's state wiped first.
 */
static void psci_cpu_suspend(struct hyp_cpu *c, struct hyp_frame *f)
{
	struct hyp_frame call = *f;

	if (!(f->x[1] & state_type_powerdown)) {
		c->psci_standby++;
		suspend_call(f);
		return;
	}
	c->guest_entry = f->x[2];
	c->guest_ctx = f->x[3];
	call.x[2] = (uint64_t)hyp_secondary_entry;
	call.x[3] = c->index;
	c->psci_powerdown++;
	c->suspended = true;
	suspend_call(&call);
	if (call.x[0] == PSCI_SUCCESS && suspend_emulated)
		hyp_power_loss((uint64_t)hyp_secondary_entry, c->index);
	c->suspended = false;
	f->x[0] = call.x[0];
}

/* PSCI_FEATURES: none for the calls slat-hyp refuses. */
static void psci_features(struct hyp_frame *f)
{
	if (refused(fn_id(f->x[1])))
		f->x[0] = PSCI_NOT_SUPPORTED;
	else
		hyp_smc_frame(f);
}

/**
 * hyp_psci() - a PSCI call from the guest
 * @c: this CPU
 * @f: the guest's registers: the call in x0-x7, the results to x0-x3
 */
void hyp_psci(struct hyp_cpu *c, struct hyp_frame *f)
{
	uint32_t fn = fn_id(f->x[0]);

	c->psci_calls++;
	if (fn == PSCI_CPU_ON) {
		psci_cpu_on(f);
	} else if (fn == PSCI_CPU_SUSPEND) {
		psci_cpu_suspend(c, f);
	} else if (fn == PSCI_FEATURES) {
		psci_features(f);
	} else if (refused(fn)) {
		c->psci_refused++;
		f->x[0] = PSCI_NOT_SUPPORTED;
	} else if (fn == PSCI_CPU_OFF) {
		/* Not back unless CPU_ON: no longer one to stop or count. */
		__atomic_store_n(&c->online, false, __ATOMIC_RELEASE);
		hyp_smc_frame(f);
		/* It failed. */
		__atomic_store_n(&c->online, true, __ATOMIC_RELEASE);
	} else {
		if (fn == PSCI_SYSTEM_OFF || fn == PSCI_SYSTEM_RESET)
			hyp_report();
		hyp_smc_frame(f);
	}
}

/* ------------------------------------------------ the guest's idle states */

static int prop_u32(void *dtb, const char *node, const char *name, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 8), (uint8_t)v };

	return fdt_set_prop(dtb, node, name, b, sizeof(b));
}

#define IDLE_STATES	"/cpus/idle-states"

/* One state of the idle-states binding, with its phandle. */
static int idle_state(void *dtb, const char *name, uint32_t power_state,
		      uint32_t latency_us, uint32_t phandle)
{
	char path[64] = IDLE_STATES "/";
	uint32_t n = sizeof(IDLE_STATES);

	for (uint32_t i = 0; name[i] && n < sizeof(path) - 1; i++)
		path[n++] = name[i];
	path[n] = '\0';
	return fdt_add_node(dtb, IDLE_STATES, name) ||
	       fdt_set_prop(dtb, path, "compatible", "arm,idle-state", 15) ||
	       prop_u32(dtb, path, "arm,psci-suspend-param", power_state) ||
	       prop_u32(dtb, path, "entry-latency-us", latency_us) ||
	       prop_u32(dtb, path, "exit-latency-us", latency_us) ||
	       prop_u32(dtb, path, "min-residency-us", 2 * latency_us) ||
	       prop_u32(dtb, path, "phandle", phandle);
}

/**
 * hyp_psci_idle_states() - give the guest's CPUs idle states
 * @dtb: the guest's device tree (QEMU's virt has none)
 *
 * A standby state (StateType 0, StateID 1) and a power-down state
 * (StateID 2) for every CPU node, after the device tree's idle-states
 * binding: compatible "arm,idle-state", the power_state as
 * arm,psci-suspend-param, power level 0. Latencies of tens of
 * microseconds, so that the guest's governor picks them under TCG. No
 * local-timer-stop: QEMU's timer runs on, and a guest told otherwise
 * would need a broadcast timer it does not have.
 *
 * Return: 0, or -1 when the tree has no room or no CPU node.
 */
int hyp_psci_idle_states(void *dtb)
{
	uint32_t ph = fdt_max_phandle(dtb) + 1, len, cpus = 0;
	uint8_t both[8];
	char cpu[] = "/cpus/cpu@0";

	if (fdt_add_node(dtb, "/cpus", "idle-states") ||
	    fdt_set_prop(dtb, IDLE_STATES, "entry-method", "psci", 5) ||
	    idle_state(dtb, "cpu-standby", 1, 10, ph) ||
	    idle_state(dtb, "cpu-powerdown", hyp_psci_powerdown_state(2), 100,
		       ph + 1))
		return -1;
	for (int i = 0; i < 8; i++)
		both[i] = (uint8_t)((i < 4 ? ph : ph + 1) >> (24 - 8 * (i % 4)));
	/* virt's CPU nodes are cpu@0, cpu@1, ...: one cluster here. */
	for (; cpus < HYP_MAX_CPUS; cpus++) {
		cpu[sizeof(cpu) - 2] = (char)('0' + cpus);
		if (!fdt_get_prop(dtb, cpu, "reg", &len))
			break;
		if (fdt_set_prop(dtb, cpu, "cpu-idle-states", both, 8))
			return -1;
	}
	return cpus ? 0 : -1;
}
