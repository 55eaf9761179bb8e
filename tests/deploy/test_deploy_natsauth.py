"""cardroom_natsauth without a server: permissions, tokens, JWTs, the responder's decisions."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from cardroom_natsauth import (
    AuthCalloutResponder,
    JwtError,
    TokenError,
    create_seed,
    deploy_secrets,
    guest_permissions,
    inbox_prefix,
    issue_player_token,
    issue_user_jwt,
    nkeyjwt,
    player_permissions,
    public_key,
    read_secret,
    verify_player_token,
    write_deploy_secrets,
)
from cardroom_natsauth.deploysecrets import STANDALONE
from cardroom_wire import InvalidId

SECRET = "s3cret-s3cret-s3cret-s3cret"


# -- permissions: DESIGN.md, word for word ------------------------------------------------------
def test_a_players_permissions_are_exactly_the_design() -> None:
    assert player_permissions("cardroom", "alice") == {
        "pub": {
            "allow": [
                "cardroom.cmd.*.alice",
                "cardroom.ack.*.alice",
                "cardroom.sync.*.alice",
                "cardroom.lobby.*.alice",
            ]
        },
        "sub": {
            "allow": [
                "cardroom.player.alice.>",
                "cardroom.public.>",
                "_INBOX_cardroom.alice.>",
            ]
        },
    }
    assert inbox_prefix("cardroom", "alice") == "_INBOX_cardroom.alice"


def test_guests_may_only_register() -> None:
    nonce = "n" * 22
    assert guest_permissions("crt1", nonce) == {
        "pub": {"allow": [f"crt1.lobby.register.{nonce}"]},
        "sub": {"allow": [f"_GUEST_crt1.{nonce}.>"]},
    }
    with pytest.raises(ValueError, match="nonce"):
        guest_permissions("crt1", "short")


@pytest.mark.parametrize("player", ["a.b", "*", ">", "a b", "", "x" * 65, "alice>"])
def test_an_id_that_is_not_one_token_gets_no_permissions(player: str) -> None:
    with pytest.raises(InvalidId):
        player_permissions("cardroom", player)
    with pytest.raises(InvalidId):
        issue_player_token(SECRET, "cardroom", player)


# -- tokens ----------------------------------------------------------------------------------------
def test_a_token_names_its_player_until_it_expires() -> None:
    now = 1_700_000_000.0
    token = issue_player_token(SECRET, "cardroom", "alice", ttl=60, now=now)
    assert verify_player_token(SECRET, "cardroom", token, now=now + 59).player == "alice"
    with pytest.raises(TokenError, match="expired"):
        verify_player_token(SECRET, "cardroom", token, now=now + 60)
    with pytest.raises(TokenError, match="signature"):
        verify_player_token(SECRET, "elsewhere", token, now=now)
    with pytest.raises(TokenError, match="signature"):
        verify_player_token(SECRET + "x", "cardroom", token, now=now)
    _, expires, signature = token.split(".")
    with pytest.raises(TokenError, match="signature"):
        verify_player_token(SECRET, "cardroom", f"bob.{expires}.{signature}", now=now)
    for garbage in ("", "a.b", "a.b.c.d", "a*.1.x", "alice.soon.x", "alice.-1.x"):
        with pytest.raises(TokenError, match="malformed"):
            verify_player_token(SECRET, "cardroom", garbage, now=now)


def test_a_short_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        issue_player_token("short", "cardroom", "alice")


# -- JWTs --------------------------------------------------------------------------------------
def test_keys_and_jwts_round_trip() -> None:
    seed = create_seed()
    assert seed.startswith("SA")
    account = public_key(seed)
    assert account.startswith("A")
    assert len(account) == 56
    user = public_key(create_seed(nkeyjwt.USER))
    token = issue_user_jwt(
        seed,
        user,
        account="CARDROOM",
        name="alice",
        permissions=player_permissions("cardroom", "alice"),
        expires=2_000_000_000,
    )
    claims = nkeyjwt.decode(token)
    assert claims["iss"] == account
    assert claims["sub"] == user
    assert claims["aud"] == "CARDROOM"
    assert claims["exp"] == 2_000_000_000
    assert claims["nats"]["type"] == "user"
    assert claims["nats"]["version"] == 2
    assert claims["nats"]["pub"] == player_permissions("cardroom", "alice")["pub"]
    head, body, signature = token.split(".")
    forged = json.loads(nkeyjwt._unb64(body))
    forged["nats"]["sub"]["allow"] = [">"]
    forged_body = nkeyjwt._b64(json.dumps(forged).encode())
    with pytest.raises(JwtError, match="signature"):
        nkeyjwt.decode(f"{head}.{forged_body}.{signature}")
    with pytest.raises(ValueError, match="user public key"):
        issue_user_jwt(seed, account, account="X", name="x", permissions={})


# -- the responder's decisions -------------------------------------------------------------------
def _request(
    server_seed: str, issuer: str, connect: dict[str, object], user_nkey: str | None = None
) -> str:
    server = public_key(server_seed)
    claims = {
        "sub": issuer,
        "aud": "nats-authorization-request",
        "nats": {
            "type": "authorization_request",
            "server_id": {"id": server, "name": "test", "host": "127.0.0.1"},
            "user_nkey": user_nkey or public_key(create_seed(nkeyjwt.USER)),
            "client_info": {"host": "127.0.0.1", "id": 7},
            "connect_opts": connect,
        },
    }
    return nkeyjwt.encode(claims, server_seed)


def test_the_responder_answers_a_player_with_its_permissions() -> None:
    issuer_seed, server_seed = create_seed(), create_seed(nkeyjwt.SERVER)
    responder = AuthCalloutResponder(issuer_seed=issuer_seed, token_secret=SECRET, root="crt1")
    user = public_key(create_seed(nkeyjwt.USER))
    token = issue_player_token(SECRET, "crt1", "alice", ttl=600)
    answer = responder.authorize(
        _request(server_seed, responder.issuer, {"auth_token": token}, user)
    )
    assert answer is not None
    response = nkeyjwt.decode(answer)
    assert response["iss"] == responder.issuer
    assert response["aud"] == public_key(server_seed)  # the server that asked
    assert response["sub"] == user
    assert "error" not in response["nats"]
    granted = nkeyjwt.decode(response["nats"]["jwt"])
    assert granted["sub"] == user
    assert granted["aud"] == "CARDROOM"
    assert granted["name"] == "alice"
    assert granted["exp"] == int(token.split(".")[1])
    perms = player_permissions("crt1", "alice")
    assert granted["nats"]["pub"] == perms["pub"]
    assert granted["nats"]["sub"] == perms["sub"]
    assert granted["nats"]["allowed_connection_types"] == ["STANDARD", "WEBSOCKET"]
    assert granted["nats"]["subs"] == 1000


@pytest.mark.parametrize(
    ("connect", "reason"),
    [
        ({}, "no credentials"),
        ({"auth_token": "nope"}, "malformed"),
        ({"user": "bob", "pass": "TOKEN"}, "does not match"),
        ({"user": "guest", "pass": "x"}, "nonce"),
    ],
)
def test_the_responder_refuses_with_a_reason(connect: dict[str, object], reason: str) -> None:
    issuer_seed, server_seed = create_seed(), create_seed(nkeyjwt.SERVER)
    responder = AuthCalloutResponder(issuer_seed=issuer_seed, token_secret=SECRET, root="crt1")
    token = issue_player_token(SECRET, "crt1", "alice")
    connect = {k: (token if v == "TOKEN" else v) for k, v in connect.items()}
    answer = responder.authorize(_request(server_seed, responder.issuer, connect))
    assert answer is not None
    response = nkeyjwt.decode(answer)
    assert reason in response["nats"]["error"]
    assert "jwt" not in response["nats"]


def test_the_responder_refuses_what_no_server_signed() -> None:
    issuer_seed, server_seed = create_seed(), create_seed(nkeyjwt.SERVER)
    responder = AuthCalloutResponder(issuer_seed=issuer_seed, token_secret=SECRET, root="crt1")
    token = issue_player_token(SECRET, "crt1", "alice")
    good = _request(server_seed, responder.issuer, {"auth_token": token})
    head, body, signature = good.split(".")
    claims = json.loads(nkeyjwt._unb64(body))
    claims["nats"]["connect_opts"]["auth_token"] = issue_player_token(SECRET, "crt1", "bob")
    tampered = f"{head}.{nkeyjwt._b64(json.dumps(claims).encode())}.{signature}"

    def refusal(request: str) -> str:
        answer = responder.authorize(request)
        assert answer is not None
        response = nkeyjwt.decode(answer)
        assert "jwt" not in response["nats"]
        assert response["aud"] == public_key(server_seed)
        return str(response["nats"]["error"])

    # answered with a refusal: it grants nothing, and the client is not left waiting
    assert "malformed request" in refusal(tampered)
    # signed by the issuer's key instead of the server's it names
    forged = nkeyjwt.encode(nkeyjwt.decode(good), issuer_seed)
    assert "not made by the server" in refusal(forged)
    assert "another issuer" in refusal(_request(server_seed, public_key(create_seed()), {}))
    # nothing says whom to answer: not a JWT, or the "server" is an account key
    assert responder.authorize(b"not a jwt") is None
    assert responder.authorize(_request(create_seed(), responder.issuer, {})) is None


def test_guests_can_be_turned_off() -> None:
    responder = AuthCalloutResponder(
        issuer_seed=create_seed(), token_secret=SECRET, root="crt1", guests=False
    )
    answer = responder.authorize(
        _request(create_seed(nkeyjwt.SERVER), responder.issuer, {"user": "guest", "pass": "n" * 30})
    )
    assert answer is not None
    assert "guests are not allowed" in nkeyjwt.decode(answer)["nats"]["error"]


def test_the_responder_wants_an_account_seed() -> None:
    with pytest.raises(ValueError, match="account seed"):
        AuthCalloutResponder(issuer_seed=create_seed(nkeyjwt.USER), token_secret=SECRET)


# -- deploy secrets -----------------------------------------------------------------------------
def test_deploy_secrets_agree_with_each_other(tmp_path: Path) -> None:
    folder = tmp_path / "secrets"
    written = write_deploy_secrets(folder)
    assert {p.name for p in written} == set(deploy_secrets()) | set(STANDALONE)
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    conf = read_secret(folder / "nats.conf")
    service_password = read_secret(folder / "nats_url").split(":")[2].split("@")[0]
    auth_password = read_secret(folder / "auth_nats_url").split(":")[2].split("@")[0]
    assert f'SERVICE_PASSWORD: "{service_password}"' in conf
    assert f'AUTH_PASSWORD: "{auth_password}"' in conf
    assert f'AUTH_ISSUER: "{public_key(read_secret(folder / "auth_issuer_seed"))}"' in conf
    postgres_password = read_secret(folder / "postgres_password")
    assert f":{postgres_password}@postgres:5432/" in read_secret(folder / "database_url")
    # the services' role has a password of its own
    assert postgres_password not in read_secret(folder / "service_database_url")
    # run again: kept as they are
    before = {p.name: p.read_text() for p in folder.iterdir()}
    assert write_deploy_secrets(folder) == []
    assert {p.name: p.read_text() for p in folder.iterdir()} == before
    # a partial set is not silently completed
    (folder / "nats_url").unlink()
    with pytest.raises(FileExistsError):
        write_deploy_secrets(folder)
    assert len(write_deploy_secrets(folder, force=True)) == len(before)
    # a standalone secret missing beside a whole set (one written before it existed): added
    grafana = folder / "grafana_admin_password"
    service_url = folder / "service_database_url"
    grafana.unlink()
    service_url.unlink()
    kept = {p.name: p.read_text() for p in folder.iterdir()}
    assert sorted(write_deploy_secrets(folder)) == sorted([grafana, service_url])
    assert len(read_secret(grafana)) >= 32
    assert read_secret(service_url).startswith("postgresql+asyncpg://cardroom_service:")
    added = (grafana, service_url)
    assert {p.name: p.read_text() for p in folder.iterdir() if p not in added} == kept


def test_tokens_live_a_day_by_default() -> None:
    token = issue_player_token(SECRET, "cardroom", "alice")
    expires = verify_player_token(SECRET, "cardroom", token).expires
    assert abs(expires - (time.time() + 24 * 3600)) < 5
