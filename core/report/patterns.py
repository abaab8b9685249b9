"""Data the identity rules read: the short list of public sites, top-level domains, plain user
and host names, and the words that say a dotted quad is an address or a version."""

from __future__ import annotations

# Public sites a log or a KB citation names: kept, and so are their subdomains (docs, forums,
# downloads). Package registries are not listed: a registry's host in a log is redacted like
# any other host, which costs nothing a reader needs.
PUBLIC_SITES = frozenset(
    {
        "github.com",
        "githubusercontent.com",
        "gitlab.com",
        "pytorch.org",
        "nvidia.com",
        "python.org",
        "huggingface.co",
        "hf.co",
        "wandb.ai",
        "readthedocs.org",
        "stackoverflow.com",
        "w3.org",
        "json-schema.org",
        "google.com",
        "microsoft.com",
        "ubuntu.com",
        "kernel.org",
        "gnu.org",
        "mozilla.org",
        "apple.com",
        "fburl.com",  # torch's own "Could not run ... backend" message links fburl.com/ptmfixes
    }
)
# Sites whose subdomains belong to their users: the site itself is kept, `alice.github.io` is
# a person, `mystore.blob.core.windows.net` a storage account, `bucket.s3.amazonaws.com` a bucket.
USER_SUBDOMAIN_SITES = frozenset(
    {
        "github.io",
        "readthedocs.io",
        "hf.space",
        "core.windows.net",
        "amazonaws.com",
        "azurecr.io",
        "cloudapp.net",
        "azurewebsites.net",
        "appspot.com",
        "herokuapp.com",
        "ngrok.io",
        "ngrok-free.app",
    }
)
# A dotted name is a host only when it ends in a top-level domain that is never a file suffix
# (.py, .pt, .so, .sh, .cu and .md are country domains too; .io, .ai, .int, .info and .app are
# Python attribute names), so model.pt, libcudnn.so.9 and torch.nn.functional survive.
HOST_TLDS = (
    "com|net|org|edu|gov|mil|local|lan|internal|intranet|corp|localdomain|home|"
    "co|uk|de|fr|jp|cn|us|ca|au|nl|ch|se|eu|ru|kr|in|br|it|es|pl|cloud|tech|dev"
)

# User names too common to be personal (replacing them would wreck ordinary words).
COMMON_USERS = frozenset(
    {
        "root",
        "user",
        "users",
        "admin",
        "ubuntu",
        "runner",
        "jovyan",
        "vscode",
        "ec2-user",
        "guest",
        "test",
        "shared",
        "public",
        "default",
        "all users",
        "git",
        "nobody",
        "linuxbrew",
        "node",
        "conda",
    }
)
COMMON_HOSTS = frozenset(
    {"localhost", "localhost.localdomain", "ubuntu", "debian", "host", "ip6-localhost"}
)

# Words before a dotted quad that say "this is a network address", not a version.
NETWORK_WORDS = (
    "addr",
    "address",
    "ip",
    "ipaddr",
    "inet",
    "host",
    "hostname",
    "server",
    "master",
    "peer",
    "gateway",
    "nameserver",
    "src",
    "dst",
    "remote",
    "local",
    "endpoint",
    "bind",
    "listen",
    "socket",
    "interface",
    "from",
    "to",
    "via",
    "at",
    "connect",
    "connecting",
    "connected",
    "proxy",
    "url",
    "dns",
    "route",
    "node",
    "joined",
    "rendezvous",
)
# Words before a dotted quad that say "this is a version".
VERSION_WORDS = (
    "version",
    "ver",
    "v",
    "rev",
    "release",
    "build",
    "cuda",
    "cudnn",
    "cublas",
    "cufft",
    "curand",
    "cusolver",
    "cusparse",
    "nccl",
    "nvjitlink",
    "nvrtc",
    "driver",
    "torch",
    "pytorch",
    "tensorrt",
    "triton",
    "python",
    "numpy",
    "onnx",
    "onnxruntime",
    "cupy",
    "jax",
    "jaxlib",
    "tensorflow",
    "nvidia",
    "nvml",
    "vbios",
    "firmware",
)
