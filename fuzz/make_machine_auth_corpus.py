#!/usr/bin/env python3
"""Writes fuzz_machine_auth's seeds: well-formed messages of a machine
link's authentication (net/auth_messages.hpp) for the fuzz target's fixed
key ring and challenge (fuzz/machine_auth_fixture.hpp).  The PROOFs are
made here from the protocol's text, apart from net/'s code, and
net_test_auth_corpus checks that net/'s agent accepts them.

Usage: make_machine_auth_corpus.py [DIR]  (default: corpus-machine-auth
beside this script)
"""
import hashlib
import hmac
import pathlib
import struct
import sys

KEY_ID = b"fuzz-key"
SECRET = b"the fuzz target's key, 32 bytes+"
AGENT_NONCE = b"the agent nonce of fuzz targets!"
CLIENT_NONCE = b"a client nonce of the seeds, 32B"

CHALLENGE, PROOF, ACCEPT, REFUSE = 1, 2, 3, 4
assert len(SECRET) >= 32 and len(AGENT_NONCE) == 32 and len(CLIENT_NONCE) == 32


def header(kind):
    return b"RIGA" + bytes([1, kind])


def mac(*parts):
    return hmac.new(SECRET, b"".join(parts), hashlib.sha256).digest()


def proof(key_id, hello):
    signed = (header(PROOF) + bytes([len(key_id)]) + key_id + CLIENT_NONCE +
              struct.pack(">I", len(hello)) + hello)
    return signed + mac(b"rig-machine-client-1", AGENT_NONCE, signed)


def accept(proof_bytes):
    return header(ACCEPT) + mac(b"rig-machine-agent-1", CLIENT_NONCE,
                                AGENT_NONCE, proof_bytes[-32:])


def refuse(reason):
    return header(REFUSE) + bytes([len(reason)]) + reason


def main():
    here = pathlib.Path(__file__).resolve().parent
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else here / "corpus-machine-auth"
    out.mkdir(parents=True, exist_ok=True)
    request = proof(KEY_ID, b"\x00\x01 the link's first request \xff")
    seeds = {
        "challenge": header(CHALLENGE) + AGENT_NONCE,
        "proof-accepted-empty-hello": proof(KEY_ID, b""),
        "proof-accepted-with-a-request": request,
        "proof-of-an-unknown-key-id": proof(b"unknown.key_1", b"hello"),
        "accept-of-the-request": accept(request),
        "refuse-authentication-failed": refuse(b"authentication failed"),
    }
    for name, data in seeds.items():
        (out / name).write_bytes(data)


if __name__ == "__main__":
    main()
