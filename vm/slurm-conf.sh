#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Prints a slurm.conf for a throwaway Slurm cluster made by a test or the
# lab rig: munge auth through a private socket, every daemon's state, pid
# and log files under DIR (a mkdtemp dir), no cgroups, no accounting, one
# partition "lab" holding every node.
#
#   vm/slurm-conf.sh DIR CTLNAME CTLADDR PORT NODE@ADDR@CPUS...
#
# slurmctld listens on PORT, slurmd on PORT+1, srun on PORT+4000..+4100.
# The same file serves the controller and the nodes: on a lab guest DIR is
# made on the guest's own tmpfs under the same path.
set -u
if [ $# -lt 5 ]; then
	echo "usage: vm/slurm-conf.sh DIR CTLNAME CTLADDR PORT NODE@ADDR@CPUS..." >&2
	exit 2
fi
d=$1 ctl=$2 addr=$3 port=$4
shift 4
cat <<CFG
ClusterName=rqtest
SlurmctldHost=$ctl($addr)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SrunPortRange=$((port + 4000))-$((port + 4100))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
CFG
names=
for nd in "$@"; do
	name=${nd%%@*} rest=${nd#*@}
	echo "NodeName=$name NodeAddr=${rest%@*} CPUs=${rest#*@} State=UNKNOWN"
	names="$names${names:+,}$name"
done
echo "PartitionName=lab Nodes=$names Default=YES MaxTime=10 State=UP"
