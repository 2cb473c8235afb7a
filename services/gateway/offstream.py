"""What the off-stream ops do once checked: the purchaser vault's and the tokens' ops.

They write no event (a purchaser's data never enters the log; a revocation is kept beside
it) and are not recorded for idempotency. Each performer gets the runtime, the principal and
the op's fields as :mod:`services.gateway.ops` parsed them, and returns the reply's result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import structlog

from services.gateway.auth import AuthError, Principal, read_claims, valid_jti
from services.gateway.protocol import ProtocolError

if TYPE_CHECKING:
    from services.runtime import Runtime

log = structlog.get_logger(__name__)


async def register_purchaser(runtime: Runtime, who: Principal, args: dict[str, Any]) -> Any:
    """A purchaser account into the vault; the result is its opaque id."""
    return {"purchaser": await runtime.vault.register(args["account"])}


async def erase_purchaser(runtime: Runtime, who: Principal, args: dict[str, Any]) -> Any:
    """Erase a purchaser's personal data (false when unknown or already erased)."""
    return {"erased": await runtime.vault.erase(args["purchaser"])}


async def load_self_exclusions(runtime: Runtime, who: Principal, args: dict[str, Any]) -> Any:
    """The self-exclusion list, from ``csv`` when given, else from ``entries``."""
    entries = args["csv"] if args["csv"] is not None else args["entries"]
    if entries is None:
        raise ProtocolError("bad_request", "missing field 'entries'")
    return {"entries": await runtime.vault.load_exclusions(entries, replace=args["replace"])}


async def revoke_token(runtime: Runtime, who: Principal, args: dict[str, Any]) -> Any:
    """Take a token out of use on every server process, open sockets included; revoking
    again changes nothing (``already_revoked`` is then true)."""
    jti, exp = _token_to_revoke(runtime, args)
    try:
        newly = await runtime.revocations.revoke(jti, exp)
    except ValueError as e:
        raise ProtocolError("bad_request", str(e)) from None
    log.warning("token_revoked", token_id=jti, by=f"{who.role}:{who.sub}")
    return {"token_id": jti, "already_revoked": not newly}


def _token_to_revoke(runtime: Runtime, args: dict[str, Any]) -> tuple[str, int | None]:
    """The id (and expiry, when the whole token is given) of the token the fields name."""
    raw = args["token"]
    if raw is not None:
        try:
            claims = read_claims(runtime.secret, raw)
        except AuthError as e:
            raise ProtocolError("bad_request", f"not a token of this server: {e}") from None
        return claims.jti, claims.exp
    jti = args["token_id"]
    if jti is None:
        raise ProtocolError("bad_request", "missing field 'token_id'")
    if not valid_jti(jti):
        raise ProtocolError(
            "bad_request", "token_id is not a token id (1 to 64 of A-Z a-z 0-9 _ -)"
        )
    return jti, None
