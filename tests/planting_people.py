"""People, machines, addresses and accounts the report must remove, each in the position a
real log puts it: cluster paths, SLURM and NCCL lines, prompts, URLs, cloud and k8s names."""

from __future__ import annotations

import random

from tests.planting_base import HEX, LOWER, Make, Plant, fqdn, host, ipv4, r, user, uuid


def _path(template: str, env: str = "") -> Make:
    """A folder under a home-like root; `env` also sets a collected variable to it."""

    def make(rng: random.Random) -> Plant:
        name = user(rng)
        path = template.format(u=name, g=r(rng, 4, LOWER))
        return Plant(f"cd {path} && ls", (name,), env={env: path} if env else {}, path=path)

    return make


def _one(line: str, fn: object) -> Make:
    """A line with one planted value made by `fn`."""

    def make(rng: random.Random) -> Plant:
        value = fn(rng)  # type: ignore[operator]
        return Plant(line.format(value), (value,))

    return make


def _mac_colon(rng: random.Random) -> str:
    return "0c:" + ":".join(r(rng, 2, HEX) for _ in range(5))


def _mac_cisco(rng: random.Random) -> str:
    return "0c" + r(rng, 2, HEX) + "." + r(rng, 4, HEX) + "." + r(rng, 4, HEX)


def _ipv6(rng: random.Random) -> str:
    return "2001:db8:" + ":".join(r(rng, 4, "123456789abcdef") for _ in range(6))


def _prompt(rng: random.Random) -> Plant:
    login, machine = user(rng), host(rng)
    return Plant(f"(venv) {login}@{machine}:~/proj$ python train.py", (login, machine))


def _user_at_host(rng: random.Random) -> Plant:
    login, machine = user(rng), host(rng)
    return Plant(f"ssh {login}@{machine} nvidia-smi", (login, machine))


def _ssh_key(rng: random.Random) -> Plant:
    key = "AAAAC3NzaC1lZDI1NTE5AAAAI" + r(rng, 43)
    comment = f"{user(rng)}@{host(rng)}"
    return Plant(f"ssh-ed25519 {key} {comment}", (key, comment))


def _ip_after_host(rng: random.Random) -> Plant:
    machine, address = host(rng), ipv4(rng)
    return Plant(f"{machine} {address} joined rendezvous", (machine, address))


def _node_list(rng: random.Random) -> Plant:
    prefix = f"{r(rng, 3, LOWER)}-a100-"
    nodes = f"{prefix}[{rng.randrange(1, 40):03d}-{rng.randrange(41, 99):03d}]"
    return Plant(f"SLURM_JOB_NODELIST={nodes}", (nodes,))


def _unc(rng: random.Random) -> Plant:
    server, name = host(rng), user(rng)
    return Plant(f"Loading \\\\{server}\\home$\\{name}\\data\\train.csv", (server, name))


def _azure(rng: random.Random) -> Plant:
    sub, group = uuid(rng), f"rg-{r(rng, 8, LOWER)}"
    return Plant(
        f"/subscriptions/{sub}/resourceGroups/{group}/providers/Microsoft.Compute", (sub, group)
    )


def _arn(rng: random.Random) -> Plant:
    account, role = str(rng.randrange(10**11, 10**12)), f"Train{r(rng, 8, LOWER)}"
    return Plant(f"assumed arn:aws:iam::{account}:role/{role}", (account, role))


def _ecr(rng: random.Random) -> Plant:
    account = str(rng.randrange(10**11, 10**12))
    return Plant(f"docker pull {account}.dkr.ecr.us-east-1.amazonaws.com/train:latest", (account,))


def _k8s(line: str) -> Make:
    def make(rng: random.Random) -> Plant:
        name = f"{r(rng, 6, LOWER)}-{r(rng, 5, LOWER)}-{rng.randrange(10, 99)}"
        return Plant(line.format(name), (name,))

    return make


def _owner(line: str) -> Make:
    def make(rng: random.Random) -> Plant:
        name = f"{r(rng, 7, LOWER)}-{r(rng, 4, LOWER)}"
        return Plant(line.format(name), (name,))

    return make


def _host_env(name: str, line: str) -> Make:
    def make(rng: random.Random) -> Plant:
        machine = host(rng)
        return Plant(line.format(machine), (machine,), env={name: machine})

    return make


PEOPLE: dict[str, Make] = {
    "home-linux": _path("/home/{u}/proj"),
    "home-macos": _path("/Users/{u}/miniconda3/envs/train"),
    "home-windows": _path("C:\\Users\\{u}\\AppData\\Local\\torch"),
    "home-windows-slashes": _path("C:/Users/{u}/Documents/train"),
    "scratch-folder": _path("/scratch/{u}/cache", env="CUDA_CACHE_PATH"),
    "mnt-users-folder": _path("/mnt/{g}/users/{u}/cuda/lib64", env="LD_LIBRARY_PATH"),
    "gpfs-home-folder": _path("/gpfs/{g}/home/{u}/miniconda3", env="CONDA_PREFIX"),
    "data-user-folder": _path("/data/{u}/checkpoints"),
    "inductor-cache-user": _path("/tmp/torchinductor_{u}/ab/cabc.py"),
    "unc-share": _unc,
    "hf-cache-owner": _owner("~/.cache/huggingface/hub/models--{}--llama-ft/snapshots"),
    "fqdn-host": _one("[rank0]: connecting to {}:29500", fqdn),
    "host-with-port": _one("[rank1]: connecting to {}:29500", host),
    "nccl-line-prefix": _one("{}:4242:4242 [0] NCCL INFO Bootstrap : Using eth0", host),
    "bracketed-host-port": _one(
        "[W socket.cpp:663] [c10d] failed to connect to [{}]:29500 (errno: 111)", host
    ),
    "mpi-host-pid": _one("[{}:31337] *** Process received signal ***", host),
    "slurm-node-list": _node_list,
    "srun-error-node": _one("srun: error: {}: task 2: Exited with exit code 1", host),
    "slurm-cancelled-node": _one(
        "slurmstepd: error: *** JOB 81234 ON {} CANCELLED AT 12:00 ***", host
    ),
    "user-at-host": _user_at_host,
    "shell-prompt": _prompt,
    "ssh-key-comment": _ssh_key,
    "master-addr-host": _one("MASTER_ADDR={} MASTER_PORT=29500", host),
    "host-flag": _one("torchrun --nnodes 2 --master_addr {} --master_port 29500", host),
    "nccl-hostid-env": _host_env("NCCL_HOSTID", "NCCL_HOSTID={}"),
    "ipv4-after-host": _ip_after_host,
    "ipv4-master-addr": _one("MASTER_ADDR={}", ipv4),
    "ipv4-inet": _one("inet {}/24 brd 10.255.255.255 scope global eth0", ipv4),
    "ipv6-address": _one("listening on {}", _ipv6),
    "ipv6-nccl-interface": _one("NCCL INFO NET/Socket : Using [0]eth0:{}<0>", _ipv6),
    "mac-address": _one("link/ether {} brd ff:ff:ff:ff:ff:ff", _mac_colon),
    "mac-address-cisco": _one("port Gi1/0/7 learned {} on vlan 20", _mac_cisco),
    "email-address": _one("Author: {}", lambda g: f"{user(g)}@{r(g, 7, LOWER)}-labs.org"),
    "gpu-uuid": _one("GPU 0: NVIDIA H200 (UUID: GPU-{})", uuid),
    "mig-uuid": _one("CUDA_VISIBLE_DEVICES=MIG-{}", uuid),
    "gpu-serial": _one(
        "    Serial Number                         : {}", lambda g: str(g.randrange(10**12, 10**13))
    ),
    "azure-subscription": _azure,
    "aws-arn": _arn,
    "aws-ecr-account": _ecr,
    "gcp-project": _owner("gcloud compute instances list --project {}"),
    "k8s-namespace": _k8s("kubectl logs -n {} trainer-0"),
    "k8s-pod": _k8s('Error from server (NotFound): pods "{}" not found'),
    "wandb-entity-url": _owner("wandb: View run at https://wandb.ai/{}/llm-ft/runs/3kd8x9"),
    "hf-org-url": _owner(
        "Downloading https://huggingface.co/{}/private-llm/resolve/main/config.json"
    ),
    "s3-bucket": _owner("upload to s3://{}/checkpoints/step-1000.pt"),
    "gcs-bucket": _owner("gsutil cp gs://{}/data.tar ."),
    "s3-path-style-bucket": _owner("https://s3.amazonaws.com/{}/weights.bin"),
    "user-subdomain": _owner("docs at https://{}.github.io/trainer/"),
}
