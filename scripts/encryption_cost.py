#!/usr/bin/env python
"""What encrypting message text at rest would cost: Fernet and AES-256-GCM with one key per user.

Usage: python scripts/encryption_cost.py [N]   (default 10000 messages)

Prints the mean encrypt and decrypt time per message and the size overhead. The numbers back the
crypto-shredding decision in README ("What deletion removes, and what stays on disk").
"""

from __future__ import annotations

import os
import random
import sys
import time

from cryptography.fernet import Fernet
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

WORDS = "I live in Lisbon and my sister works as a nurse at the hospital near the river on weekdays".split()


def messages(n: int) -> list[bytes]:
    rng = random.Random(7)
    return [" ".join(rng.choices(WORDS, k=rng.randint(8, 60))).encode() for _ in range(n)]


def timed(label: str, texts: list[bytes], encrypt, decrypt) -> None:
    started = time.perf_counter()
    sealed = [encrypt(t) for t in texts]
    encrypted = time.perf_counter() - started
    started = time.perf_counter()
    opened = [decrypt(s) for s in sealed]
    decrypted = time.perf_counter() - started
    assert opened == texts
    overhead = sum(map(len, sealed)) / sum(map(len, texts))
    n = len(texts)
    print(
        f"{label:<12} encrypt {encrypted / n * 1e6:6.1f} µs/msg  decrypt {decrypted / n * 1e6:6.1f} µs/msg  "
        f"total {encrypted + decrypted:.3f} s  size x{overhead:.2f}"
    )


def main(n: int) -> None:
    texts = messages(n)
    print(f"{n} messages, mean {sum(map(len, texts)) / n:.0f} bytes")
    fernet = Fernet(Fernet.generate_key())  # one user's key
    timed("Fernet", texts, fernet.encrypt, fernet.decrypt)
    aead = AESGCM(AESGCM.generate_key(bit_length=256))

    def seal(text: bytes) -> bytes:
        nonce = os.urandom(12)
        return nonce + aead.encrypt(nonce, text, None)

    timed("AES-256-GCM", texts, seal, lambda s: aead.decrypt(s[:12], s[12:], None))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
