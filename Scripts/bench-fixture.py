#!/usr/bin/env python3
"""The emulator as a test fixture (Docs/Testing.md), measured against its targets:

- `serve --recipe Recipes/sharelane.yaml` answers its first request within 1 s of starting, and
  `serve --recipe … -- true` exits within 1.5 s;
- `POST /_sharelane/reset` of a seeded store of 1,000 records: p50 under 20 ms and p99 under 50 ms over 100
  resets; of 10,000 records under 100 ms (p50);
- 8 parallel workers, each with its own container, each restoring its container and running a 20-request
  sharing scenario 50 times: no request sees another worker's data, no 5xx, p99 request time under 100 ms.

Usage: bench-fixture.py SHARELANE_BINARY
Prints a table and exits 1 when a target is missed. Workers are processes, so Python's lock does not
serialise them.
"""
import http.client
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

API_TOKEN = "bench-fixture-token"
WORKERS = 8
ROUNDS = 50


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def request(conn, method, path, body=None, query=None):
    """One call on a kept-alive connection: (status, JSON answer, seconds)."""
    query = dict(query or {})
    query["ckAPIToken"] = API_TOKEN
    data = json.dumps(body).encode() if body is not None else None
    start = time.perf_counter()
    conn.request(method, path + "?" + urllib.parse.urlencode(query), body=data,
                 headers={"Content-Type": "application/json"} if data else {})
    answer = conn.getresponse()
    raw = answer.read()
    took = time.perf_counter() - start
    try:
        parsed = json.loads(raw) if raw else {}
    except ValueError:
        parsed = {"text": raw.decode(errors="replace")}
    return answer.status, parsed, took


def start_serve(binary, args, port):
    return subprocess.Popen([binary, "serve", "--store", "memory:", "--port", str(port), "--api-token", API_TOKEN,
                             "--log-level", "warning"] + args,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def first_answer(binary, recipe):
    """Seconds from starting serve --recipe to its first answered request."""
    port = free_port()
    start = time.perf_counter()
    proc = start_serve(binary, ["--recipe", recipe], port)
    try:
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                status, _, _ = request(conn, "GET", "/_sharelane/users")
                if status == 200:
                    return time.perf_counter() - start
            except OSError:
                pass
            if proc.poll() is not None:
                sys.exit("bench-fixture: serve --recipe stopped: " + proc.stderr.read().decode())
            if time.perf_counter() - start > 30:
                sys.exit("bench-fixture: serve --recipe did not answer within 30 s")
            time.sleep(0.005)
    finally:
        proc.terminate()
        proc.wait()


def wrapped_true(binary, recipe):
    start = time.perf_counter()
    subprocess.run([binary, "serve", "--store", "memory:", "--recipe", recipe, "--", "true"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def records_recipe(records, path):
    with open(path, "w") as out:
        out.write("\n".join([
            "sharelane: 1", f"name: reset-{records}", "users:", "  alice: { email: alice@bench.example }",
            "  bob: { email: bob@bench.example }", "owner: alice", "zones:", "  Items:",
            "    share: { participants: { bob: read-write } }", "    records:", '      "item-{{i:05}}":',
            f"        repeat: {records}", "        type: Item",
            '        fields: { title: "Item {{i}}", note: "{{fake.sentence}}", qty: 3 }', ""]))


def resets(binary, records, work, count=100):
    """Reset times (seconds) of a store seeded with `records` records, each after a write to undo."""
    recipe = os.path.join(work, f"reset-{records}.yaml")
    records_recipe(records, recipe)
    port = free_port()
    proc = start_serve(binary, ["--recipe", recipe], port)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                if request(conn, "GET", "/_sharelane/users")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                sys.exit("bench-fixture: the seeded serve did not start")
            time.sleep(0.05)
        times = []
        for _ in range(count):
            status, answer, took = request(conn, "POST", "/_sharelane/reset")
            if status != 200:
                sys.exit(f"bench-fixture: reset answered {status}: {answer}")
            times.append(took)
        return times
    finally:
        proc.terminate()
        proc.wait()


def worker_recipe(worker):
    return "\n".join([
        "sharelane: 1", f"name: worker-{worker}", f"container: iCloud.bench.w{worker}", "users:",
        f"  alice: {{ email: alice-w{worker}@bench.example }}", f"  bob: {{ email: bob-w{worker}@bench.example }}",
        f"  carol: {{ email: carol-w{worker}@bench.example }}", "owner: alice", "zones:", "  Lists:",
        "    share: { participants: { bob: read-write } }", "    records:", f'      "w{worker}-item-{{{{i}}}}":',
        "        repeat: 20", "        type: Item", '        fields: { title: "Item {{i}}" }', ""])


def scenario(args):
    """One worker: its container restored, then alice, bob and carol read and write, ROUNDS times."""
    port, worker, tokens = args
    base = f"/database/1/iCloud.bench.w{worker}/development"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    times, problems = [], []
    prefix = f"w{worker}-"

    def call(person, database, operation, body):
        status, answer, took = request(conn, "POST", f"{base}/{database}/{operation}", body,
                                       {"ckWebAuthToken": tokens[person]["webAuthToken"]})
        times.append(took)
        if status >= 500:
            problems.append(f"{operation} answered {status}")
        return status, answer

    owner = tokens["alice"]["userRecordName"]
    zone = {"zoneName": "Lists", "ownerRecordName": owner}
    for round_ in range(ROUNDS):
        status, _, took = request(conn, "POST", "/_sharelane/snapshots/seeded/restore", {"container": f"iCloud.bench.w{worker}"})
        times.append(took)
        if status != 200:
            problems.append(f"restore answered {status}")
        for person in ("alice", "bob"):
            database = "private" if person == "alice" else "shared"
            _, zones = call(person, database, "zones/list", {})
            for z in zones.get("zones", []):
                # The caller's own zones name their owner __defaultOwner__, as CloudKit's do.
                if z["zoneID"]["zoneName"] not in ("_defaultZone", "Lists") or \
                        z["zoneID"].get("ownerRecordName", owner) not in (owner, "__defaultOwner__"):
                    problems.append(f"{person} sees another worker's zone {z['zoneID']}")
        _, carols = call("carol", "shared", "zones/list", {})
        if carols.get("zones"):
            problems.append(f"carol sees {carols['zones']}")
        for step in range(5):
            name = f"{prefix}new-{round_}-{step}"
            record = {"recordName": name, "recordType": "Item", "fields": {"title": {"value": name}}}
            call("bob", "shared", "records/modify", {"zoneID": zone, "operations": [{"operationType": "create", "record": record}]})
            _, found = call("alice", "private", "records/lookup", {"zoneID": {"zoneName": "Lists"}, "records": [{"recordName": name}]})
            if found.get("records", [{}])[0].get("recordName") != name:
                problems.append(f"alice does not find {name}: {found}")
        _, page = call("alice", "private", "records/query", {"zoneID": {"zoneName": "Lists"}, "query": {"recordType": "Item"}, "resultsLimit": 200})
        for record in page.get("records", []):
            if not record.get("recordName", "").startswith(prefix):
                problems.append(f"a record of another worker: {record.get('recordName')}")
        call("carol", "private", "zones/list", {})
        call("bob", "public", "users/current", {})
    return times, problems


def parallel_workers(binary, work):
    port = free_port()
    proc = start_serve(binary, [], port)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    sys.exit("bench-fixture: serve did not start")
                time.sleep(0.05)
        url = f"http://127.0.0.1:{port}"
        env = dict(os.environ, CLOUDKIT_API_TOKEN=API_TOKEN)
        people = []
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for worker in range(1, WORKERS + 1):
            path = os.path.join(work, f"worker-{worker}.yaml")
            with open(path, "w") as out:
                out.write(worker_recipe(worker))
            subprocess.run([binary, "apply", path, "--store", url, "--yes"], check=True, env=env, cwd=work,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            request(conn, "POST", "/_sharelane/snapshots/seeded", {"container": f"iCloud.bench.w{worker}"})
            tokens = {}
            for person in ("alice", "bob", "carol"):
                body = {"emailAddress": f"{person}-w{worker}@bench.example",
                        "container": f"iCloud.bench.w{worker}", "environment": "development"}
                _, answer, _ = request(conn, "POST", "/auth/signin", body)
                tokens[person] = {"webAuthToken": answer["ckWebAuthToken"], "userRecordName": answer["userRecordName"]}
            people.append((port, worker, tokens))
        start = time.perf_counter()
        with multiprocessing.Pool(WORKERS) as pool:
            results = pool.map(scenario, people)
        seconds = time.perf_counter() - start
        times = [t for result in results for t in result[0]]
        problems = [p for result in results for p in result[1]]
        return times, problems, seconds
    finally:
        proc.terminate()
        proc.wait()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench-fixture.py SHARELANE_BINARY")
    binary = os.path.abspath(sys.argv[1])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    recipe = os.path.join(root, "Recipes", "sharelane.yaml")
    missed = []
    with tempfile.TemporaryDirectory(prefix="bench-fixture-") as work:
        first = min(first_answer(binary, recipe) for _ in range(3))
        wrapped = min(wrapped_true(binary, recipe) for _ in range(3))
        small = resets(binary, 1_000, work)
        large = resets(binary, 10_000, work, count=20)
        times, problems, seconds = parallel_workers(binary, work)
    rows = [
        ("serve --recipe: first answer", f"{first * 1000:.0f} ms", first < 1.0, "< 1 s"),
        ("serve --recipe … -- true", f"{wrapped * 1000:.0f} ms", wrapped < 1.5, "< 1.5 s"),
        ("reset, 1,000 records: p50", f"{percentile(small, 50) * 1000:.1f} ms", percentile(small, 50) < 0.020, "< 20 ms"),
        ("reset, 1,000 records: p99", f"{percentile(small, 99) * 1000:.1f} ms", percentile(small, 99) < 0.050, "< 50 ms"),
        ("reset, 10,000 records: p50", f"{percentile(large, 50) * 1000:.1f} ms", percentile(large, 50) < 0.100, "< 100 ms"),
        (f"{WORKERS} workers × {ROUNDS} scenarios: requests", f"{len(times)} in {seconds:.1f} s", True, ""),
        (f"{WORKERS} workers: p99 request", f"{percentile(times, 99) * 1000:.1f} ms", percentile(times, 99) < 0.100, "< 100 ms"),
        (f"{WORKERS} workers: another's data, or a 5xx", str(len(problems)), not problems, "0"),
    ]
    print("| fixture | measured | target |")
    print("|---|---|---|")
    for name, value, met, target in rows:
        print(f"| {name} | {value} | {target}{'' if met or not target else ' — MISSED'} |")
        if not met:
            missed.append(name)
    for problem in problems[:5]:
        print("  " + problem)
    if missed:
        sys.exit("bench-fixture: missed " + ", ".join(missed))


if __name__ == "__main__":
    main()
