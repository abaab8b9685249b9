"""Tokens and keys the report must remove: one generator per rule (gitleaks' or ours).

Every value is built at test time from random characters with the real prefix and length; the
prefixes are split ("gh" + "p_") so that no token-shaped string is written in the repository.
"""

from __future__ import annotations

import base64
import json
import random
import string

from tests.planting_base import ALNUM, B32, HEX, LOWER, Make, Plant, mixed, r, token


def _jwt(rng: random.Random) -> str:
    def b64(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    head = b64({"alg": "HS256", "typ": "JWT"})
    return f"{head}.{b64({'sub': r(rng, 12), 'iat': rng.randrange(10**9)})}.{r(rng, 43)}"


def _private_key(rng: random.Random, end: bool = True) -> str:
    kind = rng.choice(["RSA ", "EC ", "OPENSSH ", ""]) + "PRIVATE" + " KEY"
    body = "\n".join(r(rng, 64, ALNUM + "+/") for _ in range(5))
    tail = f"\n-----END {kind}-----" if end else ""
    return f"-----BEGIN {kind}-----\n{body}{tail}"


def _key_plant(rng: random.Random, end: bool) -> Plant:
    """A key block; every body line must go (a log may prefix each line, as torch's do)."""
    block = _private_key(rng, end)
    return Plant(block, tuple(line for line in block.split("\n") if "-----" not in line))


TOKENS: dict[str, Make] = {
    "github-pat": token(lambda g: "gh" + "p_" + r(g, 36), "git remote set-url origin {}"),
    "github-fine-grained-pat": token(lambda g: "github" + "_pat_" + r(g, 22) + "_" + r(g, 59)),
    "github-oauth": token(lambda g: "gh" + "o_" + r(g, 36)),
    "github-app-token": token(lambda g: "gh" + g.choice("su") + "_" + r(g, 36)),
    "github-refresh-token": token(lambda g: "gh" + "r_" + r(g, 36)),
    "gitlab-pat": token(lambda g: "gl" + "pat-" + r(g, 20)),
    "gitlab-runner-token": token(lambda g: "gl" + "rt-" + r(g, 20)),
    "huggingface-access-token": token(
        lambda g: "hf" + "_" + r(g, 34, string.ascii_letters), "huggingface-cli login --token {}"
    ),
    "huggingface-org-token": token(lambda g: "api" + "_org_" + r(g, 34, string.ascii_letters)),
    "openai-api-key": token(lambda g: "sk-" + "proj-" + r(g, 74) + "T3Blbk" + "FJ" + r(g, 74)),
    "anthropic-api-key": token(lambda g: "sk-" + "ant-api03-" + r(g, 93, ALNUM + "_-") + "AA"),
    "anthropic-admin-key": token(lambda g: "sk-" + "ant-admin01-" + r(g, 93, ALNUM) + "AA"),
    "aws-access-key-id": token(lambda g: "AK" + "IA" + r(g, 16, B32)),
    "aws-secret-access-key": token(lambda g: r(g, 40, ALNUM + "/+"), "aws_secret_access_key = {}"),
    "gcp-api-key": token(lambda g: "AI" + "za" + r(g, 35, ALNUM + "_-")),
    "google-oauth-access-token": token(lambda g: "ya" + "29." + r(g, 120, ALNUM + "_-")),
    "google-oauth-client-secret": token(lambda g: "GOC" + "SPX-" + r(g, 28)),
    "slack-bot-token": token(
        lambda g: "xo" + f"xb-{r(g, 12, string.digits)}-{r(g, 12, string.digits)}-{r(g, 24)}"
    ),
    "slack-user-token": token(
        lambda g: (
            "xo" + "xp-" + "-".join(r(g, 12, string.digits) for _ in range(3)) + "-" + r(g, 32)
        )
    ),
    "slack-webhook-url": token(
        lambda g: "https://hooks.slack.com/services/" + f"T{r(g, 10)}/B{r(g, 10)}/{r(g, 24)}"
    ),
    "discord-webhook-url": token(
        lambda g: f"{g.randrange(10**17, 10**18)}/{r(g, 68, ALNUM + '_-')}",
        "POST https://discord.com/api/webhooks/{} 204",
    ),
    "telegram-bot-token-url": token(
        lambda g: f"{g.randrange(10**8, 10**9)}:AA{r(g, 33, ALNUM + '_-')}",
        "requests.post('https://api.telegram.org/bot{}/sendMessage')",
    ),
    "jwt": token(_jwt, "eval token: {}"),
    "private-key": lambda g: _key_plant(g, end=True),
    "private-key-truncated": lambda g: _key_plant(g, end=False),
    "pypi-api-token": token(lambda g: "py" + "pi-AgE" + r(g, 120, ALNUM + "_-")),
    "npm-access-token": token(lambda g: "np" + "m_" + r(g, 36, LOWER + string.digits)),
    "stripe-secret-key": token(lambda g: "sk" + "_live_" + r(g, 32)),
    "sendgrid-api-key": token(lambda g: "S" + "G." + r(g, 22, ALNUM + "_-") + "." + r(g, 43)),
    "twilio-api-key": token(lambda g: "S" + "K" + r(g, 32, HEX)),
    "twilio-account-sid": token(lambda g: "A" + "C" + r(g, 32, HEX)),
    "mailgun-api-key": token(lambda g: "ke" + "y-" + r(g, 32, HEX)),
    "databricks-token": token(lambda g: "da" + "pi" + r(g, 32, HEX)),
    "digitalocean-token": token(lambda g: "do" + "p_v1_" + r(g, 64, HEX)),
    "nvidia-api-key": token(lambda g: "nv" + "api-" + r(g, 64, ALNUM + "_-")),
    "groq-api-key": token(lambda g: "gs" + "k_" + r(g, 52)),
    "replicate-api-token": token(lambda g: "r8" + "_" + r(g, 37)),
    "perplexity-api-key": token(lambda g: "pp" + "lx-" + r(g, 48)),
    "heroku-api-key": token(lambda g: "HR" + "KU-AA" + r(g, 58, ALNUM + "_-")),
    "age-secret-key": token(
        lambda g: "AGE-" + "SECRET-KEY-1" + r(g, 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
    ),
    "linear-api-key": token(lambda g: "lin" + "_api_" + r(g, 40)),
    "sentry-user-token": token(lambda g: "sntr" + "yu_" + r(g, 64, HEX)),
    "grafana-service-account-token": token(lambda g: "gl" + "sa_" + r(g, 32) + "_" + r(g, 8, HEX)),
    "vault-service-token": token(lambda g: "hv" + "s." + r(g, 96, ALNUM + "_-")),
    "shopify-access-token": token(lambda g: "shp" + "at_" + r(g, 32, HEX)),
    "postman-api-key": token(lambda g: "PM" + "AK-" + r(g, 24, HEX) + "-" + r(g, 34, HEX)),
    "wandb-login-key": token(lambda g: r(g, 40, HEX), "wandb login {}"),
    "azure-storage-account-key": token(
        lambda g: r(g, 86, ALNUM + "+/") + "==",
        "DefaultEndpointsProtocol=https;AccountName=mlstore;AccountKey={};"
        "EndpointSuffix=core.windows.net",
    ),
    "azure-sas-signature": token(
        lambda g: r(g, 43, ALNUM) + "%3D",
        "blob ?sv=2022-11-02&ss=b&srt=co&sp=r&se=2030-01-01T00:00:00Z&sig={}",
    ),
    "token-high-entropy": token(lambda g: mixed(g, 40), "run cache id {} restored"),
    "hex-token": token(lambda g: r(g, 48, HEX), "session {} started"),
}
