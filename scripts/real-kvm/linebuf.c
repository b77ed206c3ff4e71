/*
 * Linked into the selftests by build-selftests.sh: their stdout becomes
 * line buffered, so that each line they print is one write(2) at the
 * moment they print it, also when stdout is not a terminal (in the guest
 * it is tracefs's trace_marker, which turns each write into a marker
 * between the trace events of two phases).
 */
#include <stdio.h>

__attribute__((constructor)) static void stdout_line_buffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}
