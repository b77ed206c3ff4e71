# Count the stage-2 events of a trace (tracefs's `trace` file) between its
# markers. For every marker (one line the selftest printed) one output line:
#   RK phase<TAB>faults<TAB>translation<TAB>permission<TAB>access flag<TAB>mmio<TAB>exits<TAB>text
# where the counts are those since the marker before. faults are the
# kvm_guest_fault events that were not MMIO (a kvm_mmio event on the same
# CPU right after the abort), split by the ESR's fault status code.
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
function reset() {
	n["fault"] = n["translation"] = n["permission"] = n["access"] = 0
	n["mmio"] = n["exit"] = 0
}
function emit(text) {
	printf "RK phase\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", n["fault"], \
		n["translation"], n["permission"], n["access"], n["mmio"], \
		n["exit"], text
	reset()
}
function cpu_of(line) {
	if (match(line, /\[[0-9]+\]/))
		return substr(line, RSTART + 1, RLENGTH - 2) + 0
	return -1
}
BEGIN { reset(); started = 0 }
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
		n["fault"]++
		n[kind]++
		last[cpu_of($0)] = kind
		next
	}
	if (index($0, ": kvm_mmio: ")) {
		c = cpu_of($0)
		if (last[c] != "") {
			n["fault"]--
			n[last[c]]--
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
	# The second line of a marker that held two: a line of its own.
	if (started && $0 != "" && $0 !~ /^ *[^ ].*\[[0-9]+\] /)
		emit($0)
}
END { emit("(after the last line: teardown)") }
