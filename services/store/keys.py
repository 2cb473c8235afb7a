"""Every Redis key name the project uses, in one place.

Each key of an organization carries the hash tag ``{org}`` so that one organization lives
on one Redis Cluster slot and the append script can touch all of its keys atomically.
"""

from __future__ import annotations

PREFIX = "cn"


def _tag(org: str) -> str:
    return f"{PREFIX}:{{{org}}}"


def stream(org: str, name: str) -> str:
    """An aggregate's event stream (``table:roulette-1``, ``cage``, ``license``).

    Entry IDs are ``0-<seq>``."""
    return f"{_tag(org)}:stream:{name}"


def meta(org: str, name: str) -> str:
    """An aggregate stream's meta hash: ``v`` (version = last seq) and ``h`` (last hash)."""
    return f"{_tag(org)}:meta:{name}"


def log(org: str) -> str:
    """The organization's log: every event of every aggregate in commit order (``*`` IDs)."""
    return f"{_tag(org)}:log"


def commands(org: str) -> str:
    """Hash of command results by idempotency key (``<role>:<subject>/<command id>``)."""
    return f"{_tag(org)}:commands"


def balances(org: str) -> str:
    """Hash player -> chip balance in cents, moved only by the append script's balance guard."""
    return f"{_tag(org)}:balances"


def streams(org: str) -> str:
    """Set of every aggregate stream name of the organization (for verify and audits)."""
    return f"{_tag(org)}:streams"


def rounds(org: str, name: str) -> str:
    """A table stream's round index (game recall, docs/AUDIT.md "Game recall"): a sorted
    set whose members are the seqs (as text) of the stream's ``RoundOpened`` events, each
    scored by its round number, written by the append script with the event; the member
    ``complete`` (score 0) says the index holds every round since seq 1 (the script began
    the stream)."""
    return f"{_tag(org)}:rounds:{name}"


def projection(org: str, name: str) -> str:
    """A projection's checkpoint: its state and the last org-log id folded, in one value."""
    return f"{_tag(org)}:projection:{name}"


def purchasers(org: str) -> str:
    """Hash purchaser id -> the raffle purchaser's account, AES-GCM under their own data key
    (``services.raffles.vault``; never in clear, erased by crypto-shredding)."""
    return f"{_tag(org)}:purchasers"


def purchaser_keys(org: str) -> str:
    """Hash purchaser id -> the purchaser's data key, wrapped (AES-GCM) by the vault's master
    key. Deleting a purchaser's entry makes everything sealed for them unreadable."""
    return f"{_tag(org)}:purchaser-keys"


def purchaser_accounts(org: str) -> str:
    """Hash HMAC(account number) -> purchaser id: one raffle ticket account per account
    number, 4620.22(b)(7)(iii)(c), without the number in clear."""
    return f"{_tag(org)}:purchaser-accounts"


def self_exclusions(org: str) -> str:
    """Set of self-exclusion fingerprints, HMAC(normalized legal name, date of birth),
    4620.22(b)(7)(iv)."""
    return f"{_tag(org)}:self-exclusions"


def self_exclusions_loading(org: str, token: str) -> str:
    """A self-exclusion list being loaded (expires), swapped into ``self_exclusions(org)``
    by one RENAME or SUNIONSTORE once complete."""
    return f"{_tag(org)}:self-exclusions:loading:{token}"


def raffle_board(org: str, raffle: str) -> str:
    """The server-dealt Queen of Hearts board (cards and salts by position, JSON, sealed) of
    a raffle opened before ``RaffleOpened`` version 2, read to reveal a position
    (``services.raffles.board``); nothing writes it now (a board is sealed in its event).
    Never sent to a client."""
    return f"{_tag(org)}:raffle-board:{raffle}"


def org_pattern(org: str) -> str:
    """The glob matching every key and every pub/sub channel of the organization
    (``cn:{org}:*``): what a Redis ACL user serving it may touch (``services.store.access``).
    Organization ids hold no glob character, so it matches nothing else."""
    return f"{_tag(org)}:*"


def revoked(org: str) -> str:
    """Hash token id (``jti``) -> its expiry in Unix seconds (``0``: not known, kept for
    good) of every revoked token (``services.gateway.revocations``); entries past their
    expiry are pruned."""
    return f"{_tag(org)}:revoked"


def revocations_channel(org: str) -> str:
    """Pub/sub channel on which each revocation is announced to every server process of
    the organization, as JSON ``{"jti", "exp"}`` (the hash ``revoked(org)`` is the record:
    a message missed while disconnected is found there)."""
    return f"{_tag(org)}:revocations"


def replication_barrier(org: str) -> str:
    """Hash with one counter (``n``), bumped only to make a write whose ``WAIT`` confirms
    that replicas hold everything the primary holds before a retry is answered from a stored
    reply (``services.store.replication``, with ``wait_replicas`` > 0). Holds no fact."""
    return f"{_tag(org)}:replication"


# Several server processes for one organization (``services.cluster``).


def members(org: str) -> str:
    """Hash node id -> the Redis time (ms) its membership expires: the live server
    processes of the organization, each refreshing its own entry (``services.cluster``)."""
    return f"{_tag(org)}:members"


def fences(org: str) -> str:
    """Hash lease name (an aggregate stream, or ``projections``) -> the last fencing token
    handed out for it; every acquisition takes the next one (``HINCRBY``)."""
    return f"{_tag(org)}:fences"


def lease(org: str, name: str) -> str:
    """The lease of one aggregate stream (or ``projections``): ``<node>|<incarnation>|<token>``
    with a PX expiry. Only its holder may append to the stream (the append script checks)."""
    return f"{_tag(org)}:lease:{name}"


def inbox(org: str, node: str) -> str:
    """A server process's inbox stream: commands forwarded to it by the other processes,
    and the replies to the commands it forwarded (trimmed with ``MAXLEN ~``)."""
    return f"{_tag(org)}:inbox:{node}"
