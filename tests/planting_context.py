"""Secrets the report must remove because of what stands before them: flags, keys, headers,
`.netrc` words, URLs, and the variables the environment probe collects."""

from __future__ import annotations

import base64
import random
import string

from tests.planting_base import ALNUM, HEX, LOWER, Make, Plant, host, mixed, password, r, user


def _flag(flag: str) -> Make:
    """`--flag value` in a log, and the same as two argv items."""

    def make(rng: random.Random) -> Plant:
        value = password(rng)
        return Plant(f"python train.py {flag} {value} --epochs 3", (value,), argv=(flag, value))

    return make


def _flag_equals(rng: random.Random) -> Plant:
    value = password(rng)
    return Plant(
        f"accelerate launch run.py --password={value}", (value,), argv=(f"--password={value}",)
    )


def _netrc(rng: random.Random) -> Plant:
    machine, login, secret = f"{host(rng)}.corp", user(rng), password(rng)
    return Plant(f"machine {machine} login {login} password {secret}", (machine, login, secret))


def _netrc_lines(rng: random.Random) -> Plant:
    login, secret = user(rng), password(rng)
    return Plant(f"machine api.wandb.ai\n  login {login}\n  password {secret}", (login, secret))


def _yaml_key(rng: random.Random) -> Plant:
    value = password(rng)
    return Plant(f"  api_key: {value}", (value,))


def _json_secret(rng: random.Random) -> Plant:
    value = password(rng)
    return Plant(f'{{"client_id": "trainer", "secret": "{value}"}}', (value,))


def _env_assign(rng: random.Random) -> Plant:
    value = r(rng, 10, LOWER) + "-" + r(rng, 6, LOWER)  # a passphrase-like value, low entropy
    return Plant(f"export MLFLOW_TRACKING_PASSWORD={value}", (value,))


def _header(line: str, fn: object = None) -> Make:
    def make(rng: random.Random) -> Plant:
        value = mixed(rng, 40, ALNUM + "._-")
        return Plant(line.format(value), (value,))

    return make


def _basic(rng: random.Random) -> Plant:
    pair = f"{user(rng)}:{password(rng)}"
    encoded = base64.b64encode(pair.encode()).decode()
    return Plant(f"> Authorization: Basic {encoded}", (encoded,))


def _url_credentials(rng: random.Random) -> Plant:
    login, secret = (
        user(rng),
        r(rng, 6, ALNUM) + r(rng, 3, string.digits) + r(rng, 5, ALNUM + "!*+="),
    )
    return Plant(
        f"Looking in indexes: https://{login}:{secret}@{host(rng)}.corp/simple", (login, secret)
    )


def _url_token_user(rng: random.Random) -> Plant:
    value = mixed(rng, 36)
    return Plant(f"git clone https://{value}@github.com/org/repo.git", (value,))


def _url_query(rng: random.Random) -> Plant:
    value = mixed(rng, 32)
    return Plant(f"GET /v1/models?api_key={value}&limit=20 HTTP/1.1", (value,))


def _docker_login(rng: random.Random) -> Plant:
    login, secret = user(rng), password(rng)
    return Plant(f"docker login -u {login} -p {secret} {host(rng)}.corp:5000", (login, secret))


def _curl_user(rng: random.Random) -> Plant:
    login, secret = user(rng), password(rng).replace(":", "x")
    return Plant(f"curl -u {login}:{secret} https://artifacts.corp/api", (login, secret))


def _python_argv(rng: random.Random) -> Plant:
    value = password(rng)
    return Plant(f"sys.argv = ['train.py', '--api-key', '{value}', '--lr', '0.1']", (value,))


def _env_secret(name: str) -> Make:
    """A variable the environment probe collects, holding a password."""

    def make(rng: random.Random) -> Plant:
        value = password(rng)
        return Plant(f"{name}={value}", (value,), env={name: value})

    return make


def _wandb_env(rng: random.Random) -> Plant:
    value = r(rng, 40, HEX)
    return Plant(f"WANDB_API_KEY={value} python train.py", (value,))


CONTEXT: dict[str, Make] = {
    "password-flag": _flag("--password"),
    "password-flag-equals": _flag_equals,
    "api-key-flag": _flag("--api-key"),
    "token-flag": _flag("--hf-token"),
    "secret-flag": _flag("--client-secret"),
    "netrc-line": _netrc,
    "netrc-multiline": _netrc_lines,
    "yaml-secret-key": _yaml_key,
    "json-secret-key": _json_secret,
    "env-secret-assignment": _env_assign,
    "authorization-basic": _basic,
    "authorization-bearer": _header("Authorization: Bearer {}"),
    "authorization-token-scheme": _header('-H "Authorization: token {}"'),
    "authorization-custom-scheme": _header("authorization: SSO-Key {}"),
    "cookie-header": _header("Cookie: session={}; theme=dark"),
    "api-key-header": _header("X-Api-Key: {}"),
    "url-credentials": _url_credentials,
    "url-token-user": _url_token_user,
    "url-query-secret": _url_query,
    "docker-login": _docker_login,
    "curl-user": _curl_user,
    "python-argv-repr": _python_argv,
    "torch-hub-password-env": _env_secret("TORCH_HUB_PW"),
    "ngc-password-env": _env_secret("NVIDIA_NGC_PW"),
    "wandb-api-key-env": _wandb_env,
}

# Letters used by `string` are re-exported for the people kinds.
__all__ = ["CONTEXT", "string"]
