#!/bin/sh
# SPDX-License-Identifier: MIT
#
# vm/lab-sbatch.sh REPORT-DIR CASES...: inside `vm/lab-rig.sh --slurm --deb`,
# submit docs/examples/rdmaqual.sbatch as a lab would (sbatch -N all the
# rig's guests), wait for the job, and copy the reports it wrote on its
# batch node (the allocation's first, in guest memory) into REPORT-DIR.
# The exit status is the job's.
set -u
[ $# -ge 2 ] || { echo "usage: vm/lab-sbatch.sh REPORT-DIR CASES..." >&2; exit 2; }
out=$1
shift
if [ -z "${SLURM_CONF:-}" ] || [ -z "${RDMAQUAL_SSH_CONFIG:-}" ]; then
	echo "lab-sbatch: run inside vm/lab-rig.sh --slurm" >&2
	exit 2
fi
nn=$(sinfo -h -o %D) || exit 1
gdir=/tmp/rq-sbatch
job=$(sbatch --parsable --wait -N "$nn" --time=10 -o "$gdir.out" \
	--export=ALL,RDMAQUAL_REPORTS="$gdir" "$(dirname "$0")/../docs/examples/rdmaqual.sbatch" "$@")
rc=$?
job=${job%%;*}
host=$(scontrol show job "$job" 2>/dev/null | sed -n 's/.*BatchHost=\([^ ]*\).*/\1/p')
host=${host:-vm0}
echo "lab-sbatch: job $job ended with $rc on $host" >&2
ssh -F "$RDMAQUAL_SSH_CONFIG" -o BatchMode=yes "$host" cat "$gdir.out" >&2
mkdir -p "$out"
timeout 60 ssh -F "$RDMAQUAL_SSH_CONFIG" -o BatchMode=yes "$host" tar -C "$gdir" -cf - . |
	tar -C "$out" -xf - || { echo "lab-sbatch: cannot fetch the reports from $host" >&2; exit 1; }
exit "$rc"
