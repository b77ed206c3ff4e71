# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by build.sh and run.sh: this folder, the repository, messages,
# and the default work folder.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
say() { echo "kvm-on-slat: $*" >&2; }
die() { echo "kvm-on-slat: $*" >&2; exit 1; }
# shellcheck disable=SC2034 # the scripts that source this use it
work=$repo/build/kvm-on-slat
