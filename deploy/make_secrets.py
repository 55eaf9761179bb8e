"""Generate the secrets of a docker-compose deployment (once): ``make secrets`` runs this.

    uv run --frozen python deploy/make_secrets.py [deploy/secrets] [--force]

Writes the files listed in :mod:`cardroom_natsauth.deploysecrets` (NATS passwords, the auth
callout's signing key, the player-token key, the PostgreSQL password and the URLs built from
them, and the URL of the services' own PostgreSQL role, with a password of its own). Existing
secrets are kept unless ``--force`` (then restart everything: `make down up`; PostgreSQL keeps
the superuser's password it was created with, so after --force also delete its volume or
change the password inside it; the migrate job sets the services' role's).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cardroom_natsauth import write_deploy_secrets

DEFAULT_DIR = Path(__file__).resolve().parent / "secrets"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--force", action="store_true", help="replace existing secrets")
    args = parser.parse_args(argv)
    try:
        written = write_deploy_secrets(args.directory, force=args.force)
    except FileExistsError as exc:
        print(f"make_secrets: {exc}", file=sys.stderr)
        return 1
    if written:
        print(f"wrote {len(written)} secrets to {args.directory}")
    else:
        print(f"secrets in {args.directory} already exist; kept them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
