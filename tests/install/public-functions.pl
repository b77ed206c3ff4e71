#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# List the functions the given public headers declare, one per line:
#   NAME api      declared with SLAT_API
#   NAME noapi    declared without it (a mistake: it would not be exported)
# Comments and preprocessor lines are dropped, the rest is cut into
# statements at ';', '{' and '}'; a statement declares a function when a
# slat_* name is followed by its parameter list, unless it is static (an
# inline function), a typedef or a return statement (an inline body).
use strict;
use warnings;

local $/;
for my $file (@ARGV) {
	open(my $fh, '<', $file) or die "$file: $!\n";
	my $text = <$fh>;
	close($fh);
	$text =~ s{/\*.*?\*/}{ }gs;
	$text =~ s{//[^\n]*}{}g;
	$text =~ s{^[ \t]*#(?:[^\n]*\\\n)*[^\n]*}{}gm;
	for my $stmt (split /[;{}]/, $text) {
		$stmt =~ s/\s+/ /g;
		next if $stmt =~ /^\s*(?:typedef|return)\b/ || $stmt =~ /\bstatic\b/;
		next unless $stmt =~ /\b(slat_[a-z0-9_]+)\s*\((?!\s*\*)/;
		my $name = $1;
		printf "%s %s\n", $name, $stmt =~ /\bSLAT_API\b/ ? "api" : "noapi";
	}
}
