"""The secrets of a deployment, generated once into a folder (deploy/secrets/ for compose).

One file per secret, so that docker-compose can hand each process only the ones it needs
(``secrets:``), and none of them travels through environment variables of the compose file:

``nats.conf``
    NATS configuration variables: the passwords of the static users (``SERVICE_PASSWORD``,
    ``AUTH_PASSWORD``, ``SYSTEM_PASSWORD``) and the public key of the auth callout issuer
    (``AUTH_ISSUER``).
``nats_url``, ``auth_nats_url``, ``system_nats_url``
    The URLs the services and the auth service connect with (user and password inside), each
    a comma-separated list of the NATS cluster's three servers; the last is the system
    account's, which the auth service's flood guard reads connections and kicks with.
``auth_issuer_seed``
    The account seed the auth service signs user JWTs with. Whoever holds it can mint any user.
``player_token_secret``
    The HMAC key of player tokens, shared by the lobby (issues) and the auth service (verifies).
``postgres_password``, ``database_url``
    PostgreSQL's superuser password, and its URL, which only the migration job uses: it owns
    the schema.
``service_database_url``
    The URL the services connect with: a role of their own (``cardroom_service``), which the
    migration job creates and grants only what the services need, with this password
    (:mod:`cardroom_runtime.grants`). It stands alone (the job sets the role's password from
    it at every run): written whenever it is missing, also beside a set written before it
    existed.
``grafana_admin_password``
    The password of Grafana's ``admin`` (else Grafana's default, ``admin``). It stands alone
    too.

Existing files are kept (rotating a secret is deleting its file and restarting what uses it),
so running this again is harmless.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from . import nkeyjwt

SERVICE_USER: Final = "service"
AUTH_USER: Final = "auth"
SYSTEM_USER: Final = "system"
DATABASE: Final = "cardroom"
DATABASE_USER: Final = "cardroom"
SERVICE_DATABASE_USER: Final = "cardroom_service"
POSTGRES_HOST: Final = "postgres:5432"
# the nodes of deploy/docker-compose.yml's NATS cluster
NATS_HOSTS: Final = ("nats1:4222", "nats2:4222", "nats3:4222")


def _password() -> str:
    return secrets.token_urlsafe(32)  # letters, digits, '-' and '_': safe in URLs and configs


def deploy_secrets(
    *, nats_hosts: Sequence[str] = NATS_HOSTS, postgres_host: str = POSTGRES_HOST
) -> dict[str, str]:
    """Fresh values for every secret file (name -> content)."""

    def nats_url(user: str, password: str) -> str:
        return ",".join(f"nats://{user}:{password}@{host}" for host in nats_hosts)

    service_password = _password()
    auth_password = _password()
    system_password = _password()
    issuer_seed = nkeyjwt.create_seed(nkeyjwt.ACCOUNT)
    postgres_password = _password()
    nats_conf = (
        "# Generated secrets for deploy/nats/auth.conf. Keep this file private.\n"
        f'SERVICE_PASSWORD: "{service_password}"\n'
        f'AUTH_PASSWORD: "{auth_password}"\n'
        f'SYSTEM_PASSWORD: "{system_password}"\n'
        f'AUTH_ISSUER: "{nkeyjwt.public_key(issuer_seed)}"\n'
    )
    return {
        "nats.conf": nats_conf,
        "nats_url": nats_url(SERVICE_USER, service_password),
        "auth_nats_url": nats_url(AUTH_USER, auth_password),
        "system_nats_url": nats_url(SYSTEM_USER, system_password),
        "auth_issuer_seed": issuer_seed,
        "player_token_secret": secrets.token_urlsafe(32),
        "postgres_password": postgres_password,
        "database_url": (
            f"postgresql+asyncpg://{DATABASE_USER}:{postgres_password}@{postgres_host}/{DATABASE}"
        ),
    }


STANDALONE: Final = ("grafana_admin_password", "service_database_url")
"""Secrets that relate to no other: each written when missing, whatever the set holds."""


def standalone_secrets(*, postgres_host: str = POSTGRES_HOST) -> dict[str, str]:
    """Fresh values for the :data:`STANDALONE` secrets."""
    return {
        "grafana_admin_password": _password(),
        "service_database_url": (
            f"postgresql+asyncpg://{SERVICE_DATABASE_USER}:{_password()}@{postgres_host}/{DATABASE}"
        ),
    }


def write_deploy_secrets(directory: Path | str, *, force: bool = False) -> list[Path]:
    """Create the secret files missing in ``directory``; returns the files written.

    Related secrets are generated together: if any file is missing (or ``force``), the whole
    set is written anew, except that an existing set is never partly overwritten without
    ``force`` (that would leave, say, a NATS password that no URL matches). A standalone
    secret (:data:`STANDALONE`) is written whenever it is missing (or with ``force``).
    """
    folder = Path(directory)
    values = deploy_secrets()
    present = [name for name in values if (folder / name).exists()]
    if present and not force:
        missing = [name for name in values if name not in present]
        if missing:
            raise FileExistsError(
                f"{folder} holds some secrets but not {', '.join(missing)}: "
                "delete the folder (or pass force) to generate a consistent set"
            )
        values = {}
    alone = standalone_secrets()
    values |= {name: alone[name] for name in STANDALONE if force or not (folder / name).exists()}
    if not values:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)  # the folder keeps other users of this machine out
    written = []
    for name, content in values.items():
        path = folder / name
        # readable by the containers' users (compose mounts the file itself, ignoring modes)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        with os.fdopen(fd, "w") as out:
            out.write(content if content.endswith("\n") else content + "\n")
        written.append(path)
    return written


def read_secret(path: Path | str) -> str:
    """A secret file's content without surrounding whitespace."""
    return Path(path).read_text().strip()


__all__ = ["deploy_secrets", "read_secret", "standalone_secrets", "write_deploy_secrets"]
