#!/usr/bin/env python
"""Walk through DeLLM's memory and provenance over HTTP against a running server.

Usage: python scripts/demo.py [BASE_URL]   (default http://127.0.0.1:8000)

Signs up a fresh user through the API, tells the assistant two facts in one conversation,
asks "Where do I live?" in a new one, and checks that the reply mentions Lisbon, that its
context includes the first message, and that the first message's influence lists the reply.
Exits non-zero if any check fails.
"""

from __future__ import annotations

import secrets
import sys

import httpx


def main(base: str) -> int:
    with httpx.Client(base_url=base, timeout=120) as http:
        username = f"demo-{secrets.token_hex(4)}"
        signup = http.post("/api/auth/signup/", json={"username": username, "password": secrets.token_urlsafe(12)})
        signup.raise_for_status()
        http.headers["Authorization"] = f"Token {signup.json()['token']}"

        first = http.post("/api/conversations/", json={"title": "About me"}).json()
        said = [
            http.post(f"/api/conversations/{first['id']}/messages/", json={"content": text}).json()
            for text in ("I live in Lisbon.", "I have a tortoise called Sheldon.")
        ]
        lisbon_id = said[0]["user_message"]["id"]

        second = http.post("/api/conversations/", json={}).json()
        asked = http.post(f"/api/conversations/{second['id']}/messages/", json={"content": "Where do I live?"}).json()
        reply = asked["reply"]
        influence = http.get(f"/api/messages/{lisbon_id}/influence/").json()

    print(f"user: {username}")
    print(f"reply: {reply['content']}")
    print(f"reply context: {reply['context']}  (first message: {lisbon_id})")
    print(f"influence of #{lisbon_id}: {[(e['id'], e['path']) for e in influence['influenced']]}")
    checks = {
        "reply mentions Lisbon": "Lisbon" in reply["content"],
        "reply context includes the first message": lisbon_id in reply["context"],
        "influence of the first message lists the reply": reply["id"] in {e["id"] for e in influence["influenced"]},
    }
    for name, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'}: {name}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"))
