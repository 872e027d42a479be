#!/usr/bin/env python3
"""Writes a generated benchmark recipe: RECORDS records in 100 zones, 1,000 participants in total; or, with
--users, USERS users and one zone of one record.

Usage: gen-bench-recipe.py RECORDS OUT.yaml [ZONES [USERS]]
       gen-bench-recipe.py --users USERS OUT.yaml
Each of the 100 zones (or ZONES) is shared zone-wide with 10 of 100 users (or USERS; read-write and
read-only alternating), and holds RECORDS/ZONES generated records with a string, an integer, a double and a
generated sentence. The users' recipe declares the owner and USERS users more (`uN: { email: uN@bench.example }`),
which nothing shares with: what it measures is the users alone.
"""
import sys

ZONES = 100
USERS = 100
PARTICIPANTS_PER_ZONE = 10


def users_recipe(users: int) -> list:
    out = [
        "sharelane: 1",
        f"name: bench-users-{users}",
        "description: Generated benchmark users (Scripts/bench.sh).",
        "users:",
        "  owner: { email: owner@bench.example, name: Bench Owner }",
    ]
    out += [f"  u{u}: {{ email: u{u}@bench.example }}" for u in range(1, users + 1)]
    out += ["owner: owner", "zones:", "  Z001:", "    records:", "      item-1: { type: Item, fields: { qty: 3 } }"]
    return out


def main() -> None:
    global ZONES, USERS
    if len(sys.argv) == 4 and sys.argv[1] == "--users":
        with open(sys.argv[3], "w") as f:
            f.write("\n".join(users_recipe(int(sys.argv[2]))) + "\n")
        return
    if len(sys.argv) not in (3, 4, 5):
        sys.exit("usage: gen-bench-recipe.py RECORDS OUT.yaml [ZONES [USERS]] | gen-bench-recipe.py --users USERS OUT.yaml")
    if len(sys.argv) >= 4:
        ZONES = int(sys.argv[3])
    if len(sys.argv) == 5:
        USERS = int(sys.argv[4])
    records = int(sys.argv[1])
    per_zone = records // ZONES
    out = [
        "sharelane: 1",
        f"name: bench-{records}",
        "description: Generated benchmark data (Scripts/bench.sh).",
        "seed: 7",
        "users:",
        "  owner: { email: owner@bench.example, name: Bench Owner }",
    ]
    out += [f"  u{u:03}: {{ email: u{u:03}@bench.example }}" for u in range(1, USERS + 1)]
    out += ["owner: owner", "zones:"]
    for z in range(1, ZONES + 1):
        out += [
            f"  Z{z:03}:",
            "    share:",
            f"      title: Zone {z}",
            "      participants:",
        ]
        for p in range(PARTICIPANTS_PER_ZONE):
            user = (z * PARTICIPANTS_PER_ZONE + p) % USERS + 1
            permission = "read-write" if p % 2 == 0 else "read-only"
            out.append(f"        u{user:03}: {permission}")
        out += [
            "    records:",
            '      "item-{{i:05}}":',
            f"        repeat: {per_zone}",
            "        type: Item",
            '        fields: { title: "Item {{i}}", note: "{{fake.sentence}}", qty: 3, price: 1.5 }',
        ]
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
