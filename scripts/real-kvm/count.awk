# Count the stage-2 events of a trace (tracefs's `trace` file) between its
# markers. For every marker (one line the selftest printed) one output line,
# RK phase, then tab-separated: the counts since the marker before (the
# names in KEYS below), then the line's text. fault: the kvm_guest_fault
# events that were not MMIO (a kvm_mmio event on the same CPU right after
# the abort), split by the ESR's fault status code; outside: those of them
# whose IPA is not in the test memory (the test prints where it is); the
# kprobe counts: calls of KVM's stage-2 functions (init.sh's probes).
function hex(s,    i, c, v) {
	sub(/^0x/, "", s)
	v = 0
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", tolower(substr(s, i, 1)))
		if (c == 0)
			break
		v = v * 16 + c - 1
	}
	return v
}
function reset(    i) {
	for (i = 1; i <= nkeys; i++)
		n[keys[i]] = 0
}
function emit(text,    i) {
	printf "RK phase"
	for (i = 1; i <= nkeys; i++)
		printf "\t%d", n[keys[i]]
	printf "\t%s\n", text
	reset()
}
# Where the test memory is, from the lines both tests print.
function test_memory(text) {
	if (match(text, /^guest physical test memory: \[0x[0-9a-f]+, 0x[0-9a-f]+\)/)) {
		split(substr(text, 30), r, /[\[, )]+/)
		lo = hex(r[1])
		hi = hex(r[2])
	}
	if (text ~ /^Testing memory size\(aligned\): 0x/)
		size = hex(substr(text, 31))
	if (text ~ /^Guest physical test memory offset: 0x/) {
		lo = hex(substr(text, 36))
		hi = lo + size
	}
}
function cpu_of(line) {
	if (match(line, /\[[0-9]+\]/))
		return substr(line, RSTART + 1, RLENGTH - 2) + 0
	return -1
}
BEGIN {
	nkeys = split("fault translation permission access mmio exit outside " \
		"map unmap wrprotect relax tlbi_ipa tlbi_vmid", keys, " ")
	reset()
	started = 0
	lo = hi = size = 0
}
/^#/ { next }
{
	p = index($0, ": tracing_mark_write: ")
	if (p) {
		text = substr($0, p + 22)
		if (!started) {
			started = (text == "real-kvm: start")
			reset()
			next
		}
		test_memory(text)
		emit(text)
		next
	}
	if (index($0, ": kvm_guest_fault: ")) {
		# ESR: EC in [31:26], fault status code in [5:0].
		if (!match($0, /hsr 0x[0-9a-fA-F]+/))
			next
		esr = hex(substr($0, RSTART + 4, RLENGTH - 4))
		fsc = esr % 64
		kind = "other"
		if (fsc >= 4 && fsc < 8)
			kind = "translation"
		else if (fsc >= 8 && fsc < 12)
			kind = "access"
		else if (fsc >= 12 && fsc < 16)
			kind = "permission"
		out = 0
		if (match($0, /ipa 0x[0-9a-fA-F]+/)) {
			ipa = hex(substr($0, RSTART + 4, RLENGTH - 4))
			out = (ipa < lo || ipa >= hi)
		}
		n["fault"]++
		n[kind]++
		n["outside"] += out
		c = cpu_of($0)
		last[c] = kind
		last_out[c] = out
		next
	}
	if (index($0, ": kvm_mmio: ")) {
		c = cpu_of($0)
		if (last[c] != "") {
			n["fault"]--
			n[last[c]]--
			n["outside"] -= last_out[c]
			n["mmio"]++
			last[c] = ""
		}
		next
	}
	if (index($0, ": kvm_exit: ")) {
		n["exit"]++
		last[cpu_of($0)] = ""
		next
	}
	if (match($0, /: rk_[a-z_]+: \(/)) {
		n[substr($0, RSTART + 5, RLENGTH - 8)]++
		next
	}
	# The second line of a marker that held two: a line of its own.
	if (started && $0 != "" && $0 !~ /^ *[^ ].*\[[0-9]+\] /)
		emit($0)
}
# After the test's last line: the VM's teardown (and the test's exit).
END { emit("(teardown)") }
