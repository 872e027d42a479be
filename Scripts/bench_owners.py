"""Recipes with several owners, for Scripts/bench.py (BENCH_ONLY=owners): the same records in 10 zones, once
all owned by one user and once each zone owned by a user of its own, applied into empty stores over SQLite
and over `sharelane serve`; the several-owner apply is to take at most 1.2× the one-owner apply (the median of
each round's ratio: the two applies of a round run one after the other)."""
import os

OWNERS = 10


def owners_recipe(size, path, several):
    """`size` records in OWNERS zones, each zone shared with the next user; with `several`, zone i is user i's."""
    users = [f"u{i}" for i in range(OWNERS)]
    lines = ["sharelane: 1", f"name: owners-{size}", "owner: u0", "users:"]
    lines += [f"  {u}: {{ email: {u}@example.com }}" for u in users]
    lines.append("zones:")
    per_zone = size // OWNERS
    for z in range(OWNERS):
        owner = users[z] if several else users[0]
        participant = users[(z + 1) % OWNERS] if several or z + 1 < OWNERS else users[1]
        if participant == owner:
            participant = users[(z + 2) % OWNERS]
        lines.append(f"  Zone{z}:")
        if several and z > 0:
            lines.append(f"    owner: {owner}")
        lines.append(f"    share: {{ participants: {{ {participant}: read-write }} }}")
        lines.append("    records:")
        for r in range(per_zone):
            lines.append(f"      r{r}: {{ type: Item, fields: {{ title: Item {r}, n: {r} }} }}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def bench_owners(binary, size, work, run, served_class, rounds):
    """Applies of one owner and of OWNERS owners, alternating, on fresh stores: each step's median."""
    recipes = {}
    for several in (False, True):
        path = os.path.join(work, f"owners-{size}-{'several' if several else 'one'}.yaml")
        owners_recipe(size, path, several)
        recipes[several] = path
    row = {"records": size}
    for kind in ("sqlite", "http"):
        runs = {False: [], True: []}
        for k in range(rounds):
            for several in ((False, True) if k % 2 == 0 else (True, False)):
                served = served_class(binary, work, f"owners-{size}-{kind}-{several}-{k}") if kind == "http" else None
                store = served.url if served else "sqlite:" + os.path.join(work, f"owners-{size}-{several}-{k}.sqlite")
                env = served.env if served else None
                try:
                    run([binary, "plan", recipes[several], "--store", store], env=env)
                    before = served.cpu_seconds() if served else 0
                    secs, rss, out, cpu = run([binary, "apply", recipes[several], "--store", store, "--yes"], env=env)
                    cpu += (served.cpu_seconds() - before) if served else 0
                    if "Apply complete!" not in out:
                        raise SystemExit(f"bench: the apply of {recipes[several]} did not complete:\n{out[-2000:]}")
                    after = run([binary, "plan", recipes[several], "--store", store], env=env)[2]
                    if "Plan: 0 to add, 0 to change, 0 to destroy." not in after:
                        raise SystemExit(f"bench: the plan after the apply of {recipes[several]} is not empty")
                    runs[several].append((secs, rss, cpu))
                finally:
                    if served:
                        served.stop()
        for several, results in runs.items():
            secs, _, cpu = sorted(results, key=lambda a: a[0])[len(results) // 2]
            row[f"{'several' if several else 'one'}_{kind}"] = (secs, max(a[1] for a in results), cpu)
        # Each round's two applies ran one after the other: their ratio leaves out what the machine did between
        # rounds (as bench.py's apply ratios do); the target is the median of the rounds' ratios.
        pairs = sorted(s[0] / o[0] for o, s in zip(runs[False], runs[True]))
        row[f"rounds_{kind}"] = pairs
        row[f"ratio_{kind}"] = pairs[len(pairs) // 2]
    return row


def print_owners(rows):
    print(f"{'several owners':<22} | {'records':>8} | {'one owner':>18} | {f'{OWNERS} owners':>18} | ratio")
    for row in rows:
        for kind in ("sqlite", "http"):
            one, several = row[f"one_{kind}"], row[f"several_{kind}"]
            print(f"apply, {kind:<15} | {row['records']:>8} | {one[0]:>7.2f}s {one[1]:>6.0f} MB | "
                  f"{several[0]:>7.2f}s {several[1]:>6.0f} MB | {row[f'ratio_{kind}']:.2f}×")
    for row in rows:
        for kind in ("sqlite", "http"):
            each = row[f"rounds_{kind}"]
            print(f"{row['records']} records, {kind}: the rounds' ratios " + ", ".join(f"{v:.2f}" for v in each)
                  + f" (median {row[f'ratio_{kind}']:.2f}×)")


def owners_targets(rows):
    return {f"apply of {row['records']} records over {OWNERS} owners within 1.2× one owner, {kind}":
            row[f"ratio_{kind}"] <= 1.2 for row in rows for kind in ("sqlite", "http")}
