# A one-node Slurm cluster on this machine: Debian's munge, slurmctld and slurmd, run as root
# on the loopback from a configuration written into a directory of its own. For trying the
# job scripts here before a real cluster, for tests/cluster/test_slurm.sh, and for
# experiments/scripts/cluster/array_overhead.sh. Source it, then:
#
#   start_one_node_cluster DIR [MEMORY_MB [SCHEDULER_PARAMETERS]] || echo "$cluster_error"
#       exports SLURM_CONF, so that sbatch, squeue and scancel use this cluster; the scheduler
#       starts a job as soon as it may (batch_sched_delay=0) unless SCHEDULER_PARAMETERS says
#       otherwise ("" for Slurm's defaults, which wait up to 3 s to start queued batch jobs)
#   stop_one_node_cluster
#       cancels its jobs, stops its daemons and removes DIR
#
# Accounting is off, processes are tracked through /proc and tasks are not confined
# (ProctrackType=proctrack/linuxproc, TaskPlugin=task/none): what a machine without cgroup
# delegation or a database can run. Two free ports are taken, so a cluster the machine
# already runs is left alone.

cluster_dir=""
cluster_error=""
cluster_pids=()

start_one_node_cluster() {
  local dir=${1:?start_one_node_cluster DIR [MEMORY_MB [SCHEDULER_PARAMETERS]]} memory=${2:-2048}
  local scheduling=${3-batch_sched_delay=0} program
  if [[ $(id -u) -ne 0 ]]; then
    cluster_error="a one-node cluster's slurmd runs jobs only as root, and this is not root"
    return 1
  fi
  for program in munged slurmctld slurmd sbatch squeue scancel sinfo; do
    if ! command -v "$program" >/dev/null; then
      cluster_error="$program is missing: install munge, slurmctld, slurmd and slurm-client (bash .ci/install-deps tests)"
      return 1
    fi
  done
  # munged refuses a key or socket that others could reach: the directory is the cluster's alone.
  mkdir -p "$dir" && chmod 0700 "$dir" && mkdir -p "$dir/state" "$dir/spool" || { cluster_error="cannot make $dir"; return 1; }
  cluster_dir=$(cd "$dir" && pwd)
  head -c 1024 /dev/urandom >"$cluster_dir/munge.key"
  chmod 0400 "$cluster_dir/munge.key"
  if ! munged --force --socket="$cluster_dir/munge.socket" --key-file="$cluster_dir/munge.key" \
    --pid-file="$cluster_dir/munged.pid" --log-file="$cluster_dir/munged.log" --seed-file="$cluster_dir/munged.seed"; then
    cluster_error="munged did not start: $(tail -3 "$cluster_dir/munged.log" 2>/dev/null)"
    return 1
  fi
  local ctld_port slurmd_port node
  read -r ctld_port slurmd_port < <(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
  node=$(hostname -s)
  export SLURM_CONF=$cluster_dir/slurm.conf
  cat >"$SLURM_CONF" <<EOF
ClusterName=fraglab
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$cluster_dir/munge.socket
CredType=cred/munge
StateSaveLocation=$cluster_dir/state
SlurmdSpoolDir=$cluster_dir/spool
SlurmctldPidFile=$cluster_dir/slurmctld.pid
SlurmdPidFile=$cluster_dir/slurmd.pid
SlurmctldLogFile=$cluster_dir/slurmctld.log
SlurmdLogFile=$cluster_dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
${scheduling:+SchedulerParameters=$scheduling}
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$memory State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  slurmctld -D -f "$SLURM_CONF" >"$cluster_dir/slurmctld.out" 2>&1 &
  cluster_pids+=($!)
  slurmd -D -f "$SLURM_CONF" -N "$node" >"$cluster_dir/slurmd.out" 2>&1 &
  cluster_pids+=($!)
  local _
  for _ in $(seq 100); do
    [[ $(sinfo -h -o %T 2>/dev/null) == idle ]] && return 0
    sleep 0.2
  done
  cluster_error="the cluster did not come up in 20 s: $(tail -2 "$cluster_dir/slurmctld.out" "$cluster_dir/slurmd.out" 2>/dev/null | tr '\n' ' ')"
  return 1
}

stop_one_node_cluster() {  # safe under set -e: every step runs whatever the last one did
  [[ -n $cluster_dir ]] || return 0
  if [[ -f ${SLURM_CONF:-} ]]; then timeout 10 scancel --quiet --user=root 2>/dev/null || true; fi
  local pid _
  # munged last: the Slurm daemons authenticate through it until they stop.
  if [[ -f $cluster_dir/munged.pid ]]; then cluster_pids+=("$(cat "$cluster_dir/munged.pid")"); fi
  for pid in "${cluster_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$cluster_dir" || true
  cluster_dir="" cluster_pids=()
}
