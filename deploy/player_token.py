"""Mint a player token by hand (for trying a deployment out; the lobby does this for players).

    uv run --frozen python deploy/player_token.py alice [--ttl 3600] [--root cardroom]

Prints a token signed with deploy/secrets/player_token_secret. Connect with it, for instance
``nats --server nats://127.0.0.1:4222 --token <token> sub 'cardroom.player.alice.>'``
(requests need the player's inbox prefix: ``--inbox-prefix _INBOX_cardroom.alice``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cardroom_natsauth import inbox_prefix, issue_player_token, read_secret

DEFAULT_SECRET = Path(__file__).resolve().parent / "secrets" / "player_token_secret"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("player")
    parser.add_argument("--ttl", type=float, default=3600.0, help="lifetime in seconds")
    parser.add_argument("--root", default="cardroom", help="the subject root")
    parser.add_argument("--secret-file", type=Path, default=DEFAULT_SECRET)
    args = parser.parse_args(argv)
    secret = read_secret(args.secret_file)
    print(issue_player_token(secret, args.root, args.player, ttl=args.ttl))
    print(f"inbox prefix: {inbox_prefix(args.root, args.player)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
