#!/usr/bin/env bash
# Real cluster services for the tests: a single-node SLURM (munge, slurmctld, slurmd on this
# machine) and an sshd on 127.0.0.1 with a throwaway key, each with its own configuration in
# STATE (never the system's /etc/slurm or /etc/ssh, never the user's ~/.ssh).
#
#   scripts/ci/services.sh install        # apt-get the packages (Debian/Ubuntu, as root)
#   scripts/ci/services.sh start STATE    # start them; writes STATE/services.env
#   scripts/ci/services.sh stop STATE     # stop what `start` started (by its pid files)
#   scripts/ci/services.sh status STATE
#
# The tests (tests/core/services/) start and stop them themselves when the programs are
# installed; CUDA_CLINIC_SERVICES=STATE makes them use services already started here.
# SLURM's slurmd must run as root (it starts tasks); sshd runs as any user on a high port.
set -euo pipefail

PACKAGES="slurmctld slurmd slurm-client munge openssh-server openssh-client"

die() { echo "services.sh: $*" >&2; exit 1; }

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
    local limit=$1 what=$2
    shift 2
    for _ in $(seq 1 $((limit * 10))); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.1
    done
    die "$what did not come up within ${limit} s"
}

start_sshd() {
    local state=$1 port user
    command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || die "sshd is not installed ($0 install)"
    port=$(free_port)
    user=$(id -un)
    mkdir -p "$state/ssh"
    chmod 700 "$state/ssh"
    ssh-keygen -q -t ed25519 -N '' -f "$state/ssh/host_key" -C clinic-test-host
    ssh-keygen -q -t ed25519 -N '' -f "$state/ssh/id_ed25519" -C clinic-test-user
    cp "$state/ssh/id_ed25519.pub" "$state/ssh/authorized_keys"
    chmod 600 "$state/ssh/authorized_keys"
    cat >"$state/ssh/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $state/ssh/host_key
AuthorizedKeysFile $state/ssh/authorized_keys
PidFile $state/ssh/sshd.pid
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
AllowUsers $user
LogLevel ERROR
EOF
    echo "[127.0.0.1]:$port $(cat "$state/ssh/host_key.pub")" >"$state/ssh/known_hosts"
    cat >"$state/ssh/config" <<EOF
Host clinic-node-*
    HostName 127.0.0.1
    Port $port
    User $user
    IdentityFile $state/ssh/id_ed25519
    IdentitiesOnly yes
    UserKnownHostsFile $state/ssh/known_hosts
    StrictHostKeyChecking yes
    BatchMode yes
EOF
    [ "$(id -u)" = 0 ] && mkdir -p /run/sshd  # privilege separation folder (root only)
    "$(command -v sshd || echo /usr/sbin/sshd)" -f "$state/ssh/sshd_config" -E "$state/ssh/sshd.log"
    wait_for 10 sshd ssh -F "$state/ssh/config" clinic-node-1 true
    {
        echo "CUDA_CLINIC_TEST_SSH_CONFIG=$state/ssh/config"
        echo "CUDA_CLINIC_TEST_SSH_HOSTS=clinic-node-1 clinic-node-2"
    } >>"$state/services.env"
}

start_slurm() {
    local state=$1 node ctld_port d_port
    [ "$(id -u)" = 0 ] || { echo "services.sh: SLURM skipped: slurmd must run as root" >&2; return 0; }
    command -v slurmctld >/dev/null || die "slurmctld is not installed ($0 install)"
    [ -r /etc/munge/munge.key ] || die "no /etc/munge/munge.key (is munge installed?)"
    node=$(hostname -s)
    ctld_port=$(free_port)
    d_port=$(free_port)
    mkdir -p "$state/slurm/ctld" "$state/slurm/spool" /run/munge
    chown munge:munge /run/munge
    if ! pgrep -x munged >/dev/null; then
        runuser -u munge -- /usr/sbin/munged
        echo started >"$state/slurm/munged.ours"
    fi
    wait_for 10 munge sh -c 'munge -n | unmunge'
    cat >"$state/slurm/slurm.conf" <<EOF
ClusterName=clinic
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$state/slurm/ctld
SlurmdSpoolDir=$state/slurm/spool
SlurmctldPidFile=$state/slurm/slurmctld.pid
SlurmdPidFile=$state/slurm/slurmd.pid
SlurmctldLogFile=$state/slurm/slurmctld.log
SlurmdLogFile=$state/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=clinic Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
    export SLURM_CONF=$state/slurm/slurm.conf
    slurmctld -f "$SLURM_CONF"
    slurmd -f "$SLURM_CONF"
    wait_for 30 "slurm (sinfo: node idle)" sh -c "sinfo -h -N -o %T | grep -q idle"
    wait_for 30 "srun" srun -N1 -t 1 true
    {
        echo "SLURM_CONF=$state/slurm/slurm.conf"
        echo "CUDA_CLINIC_TEST_SLURM_NODE=$node"
    } >>"$state/services.env"
}

stop() {
    local state=$1 pid
    for pidfile in "$state/ssh/sshd.pid" "$state/slurm/slurmd.pid" "$state/slurm/slurmctld.pid"; do
        if [ -s "$pidfile" ]; then
            pid=$(cat "$pidfile")
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -9 "$pid" 2>/dev/null || true
        fi
    done
    if [ -f "$state/slurm/munged.ours" ] && [ -s /run/munge/munged.pid ]; then
        kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true
    fi
    rm -f "$state/services.env"
}

case "${1:-}" in
install)
    [ "$(id -u)" = 0 ] || die "install needs root (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $PACKAGES
    ;;
start)
    state=${2:?usage: $0 start STATE}
    mkdir -p "$state"
    state=$(cd "$state" && pwd)
    : >"$state/services.env"
    trap 'stop "$state"' ERR
    start_sshd "$state"
    start_slurm "$state"
    trap - ERR
    echo "services.sh: started; settings in $state/services.env"
    ;;
stop)
    stop "${2:?usage: $0 stop STATE}"
    ;;
status)
    cat "${2:?usage: $0 status STATE}/services.env"
    ;;
*)
    sed -n '2,13p' "$0"
    exit 2
    ;;
esac
