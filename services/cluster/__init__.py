"""Several server processes for one organization (docs/ARCHITECTURE.md, "Several
processes"): node identity, membership, leases with fencing tokens, placement of the
aggregate streams, forwarding of commands to a stream's owner."""
