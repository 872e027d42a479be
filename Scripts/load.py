#!/usr/bin/env python3
"""The emulator under load: 20 concurrent clients on loopback against `sharelane serve`, each
signing in and running a bounded mix of 200-record lookups and queries and one-record modifies in its own zone
and lookups in a zone shared with it; then the same clients against a bare Hummingbird server answering a
stored response of the same size (the server stack's own limit). Reports requests per second, p50 and p99
latency and errors for each, and the ratio of the throughputs.

Usage: load.py SHARELANE_BINARY BASELINE_BINARY [CLIENTS] [ROUNDS] [PAIRS]
Each client runs ROUNDS rounds of four requests (default 20 clients, 25 rounds). Clients are processes, so
Python's lock does not serialise them. The two servers run side by side and are measured in turn, PAIRS times
each (default 3): on a shared machine the speed of both drifts by a third within a minute, so the ratio is the
median of the ratios of each pair, measured seconds apart, and each server's row is its median run.
"""
import http.client
import json
import multiprocessing
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

CONTAINER = "iCloud.local.sharelane"
RECORDS = 200
TOKEN_HEADER = "X-Apple-CloudKit-Web-Auth-Token"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port, proc, what):
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                sys.exit(f"load: {what} did not start")
            time.sleep(0.1)


def recipe(owner, neighbour):
    """One user's recipe: a zone of 200 records shared read-write with the next user, who has accepted."""
    lines = ["sharelane: 1", f"name: load-{owner}", "users:",
             f"  {owner}: {{ email: {owner}@load.example }}",
             f"  {neighbour}: {{ email: {neighbour}@load.example }}",
             f"owner: {owner}", "zones:", "  Z:", "    share:", "      participants:",
             f"        {neighbour}: read-write", "    records:",
             '      "r-{{i:03}}":', f"        repeat: {RECORDS}", "        type: Item",
             '        fields: { title: "Item {{i}}", note: "{{fake.sentence}}", qty: 3, price: 1.5 }']
    return "\n".join(lines) + "\n"


def post(conn, path, token, api_token, body):
    query = f"ckAPIToken={urllib.parse.quote(api_token, safe='')}"
    if token:
        query += f"&ckWebAuthToken={urllib.parse.quote(token, safe='')}"
    data = json.dumps(body).encode()
    start = time.perf_counter()
    conn.request("POST", f"{path}?{query}", body=data, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    payload = response.read()
    elapsed = time.perf_counter() - start
    return response.status, response.getheader(TOKEN_HEADER), payload, elapsed


def client(args):
    """One client's rounds; returns [(kind, seconds, ok)]."""
    port, api_token, me, token, neighbour_owner, rounds = args
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    base = f"/database/1/{CONTAINER}/development"
    names = [{"recordName": f"r-{i:03}"} for i in range(1, RECORDS + 1)]
    own = {"zoneName": "Z"}
    shared = {"zoneName": "Z", "ownerRecordName": neighbour_owner}
    requests = [
        ("lookup", f"{base}/private/records/lookup", {"records": names, "zoneID": own}),
        ("query", f"{base}/private/records/query", {"zoneID": own, "query": {"recordType": "Item"}, "resultsLimit": RECORDS}),
        ("modify", f"{base}/private/records/modify",
         {"zoneID": own, "operations": [{"operationType": "forceUpdate", "record": {
             "recordName": "r-001", "recordType": "Item", "fields": {"qty": {"value": 4}}}}]}),
        ("shared_lookup", f"{base}/shared/records/lookup", {"records": names, "zoneID": shared}),
    ]
    results = []
    for _ in range(rounds):
        for kind, path, body in requests:
            status, next_token, payload, elapsed = post(conn, path, token, api_token, body)
            ok = status == 200 and b'"serverErrorCode"' not in payload
            results.append((kind, elapsed, ok))
            if next_token:
                token = next_token
    return results


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else 0.0


def cpu_seconds(pid):
    """The CPU time (user + system) a process has used so far, from /proc; None where there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def run_clients(port, api_token, people, rounds, server_pid):
    jobs = [(port, api_token, p["me"], p["token"], p["neighbour_owner"], rounds) for p in people]
    cpu_before = cpu_seconds(server_pid)
    start = time.perf_counter()
    with multiprocessing.Pool(len(jobs)) as pool:
        results = [r for rs in pool.map(client, jobs) for r in rs]
    wall = time.perf_counter() - start
    cpu_after = cpu_seconds(server_pid)
    latencies = [r[1] for r in results]
    lookups = [r[1] for r in results if r[0] in ("lookup", "shared_lookup")]
    return {
        "requests": len(results), "seconds": round(wall, 3), "requests_per_second": round(len(results) / wall, 1),
        "p50_ms": round(percentile(latencies, 50) * 1000, 2), "p99_ms": round(percentile(latencies, 99) * 1000, 2),
        "lookup_200_p99_ms": round(percentile(lookups, 99) * 1000, 2),
        "errors": sum(1 for r in results if not r[2]),
        # The server's own CPU time per request: steadier than requests per second on a shared machine, where the
        # clients and the neighbours take the cores too.
        "server_cpu_ms_per_request": None if cpu_before is None or cpu_after is None
        else round((cpu_after - cpu_before) * 1000 / len(results), 3),
    }


def median_run(runs):
    """The run of median throughput."""
    return sorted(runs, key=lambda r: r["requests_per_second"])[len(runs) // 2]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, baseline = sys.argv[1], sys.argv[2]
    clients = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 25
    pairs = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    work = tempfile.mkdtemp(prefix="sharelane-load-")
    api_token = secrets.token_hex(16)
    port = free_port()
    log = open(os.path.join(work, "serve.log"), "w")
    serve = subprocess.Popen([binary, "serve", "--store", os.path.join(work, "served.sqlite"), "--port", str(port),
                              "--api-token", api_token], stdout=log, stderr=subprocess.STDOUT)
    bare = None
    try:
        wait_for(port, serve, "sharelane serve")
        env = dict(os.environ, CLOUDKIT_API_TOKEN=api_token, XDG_CACHE_HOME=os.path.join(work, "cache"))
        users = [f"u{n:02}" for n in range(1, clients + 1)]
        for index, me in enumerate(users):
            neighbour = users[(index + 1) % len(users)]
            path = os.path.join(work, f"{me}.yaml")
            with open(path, "w") as f:
                f.write(recipe(me, neighbour))
            subprocess.run([binary, "apply", path, "--store", f"http://127.0.0.1:{port}", "--yes"], env=env,
                           check=True, stdout=subprocess.DEVNULL)
        # Each client signs in; the zone shared with it is its predecessor's.
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        people = []
        for me in users:
            status, _, payload, _ = post(conn, "/auth/signin", None, api_token, {"emailAddress": f"{me}@load.example"})
            answer = json.loads(payload)
            people.append({"me": me, "token": answer["ckWebAuthToken"], "record": answer["userRecordName"]})
        for index, person in enumerate(people):
            person["neighbour_owner"] = people[index - 1]["record"]
        # The stored response for the baseline: a real 200-record lookup answer.
        first = people[0]
        status, token, payload, _ = post(
            conn, f"/database/1/{CONTAINER}/development/private/records/lookup", first["token"], api_token,
            {"records": [{"recordName": f"r-{i:03}"} for i in range(1, RECORDS + 1)], "zoneID": {"zoneName": "Z"}})
        if status != 200:
            sys.exit(f"load: the sample lookup failed: {status} {payload[:300]}")
        first["token"] = token
        response_file = os.path.join(work, "lookup-response.json")
        with open(response_file, "wb") as f:
            f.write(payload)
        base_port = free_port()
        bare = subprocess.Popen([baseline, str(base_port), response_file], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        wait_for(base_port, bare, "the baseline server")
        emulator_runs, bare_runs = [], []
        for _ in range(pairs):
            emulator_runs.append(run_clients(port, api_token, people, rounds, serve.pid))
            bare_runs.append(run_clients(base_port, api_token, people, rounds, bare.pid))
    finally:
        for process in (serve, bare):
            if process is not None:
                process.terminate()
                process.wait()
    ratios = sorted(e["requests_per_second"] / b["requests_per_second"] for e, b in zip(emulator_runs, bare_runs))
    ratio = ratios[len(ratios) // 2]
    emulator, bare_result = median_run(emulator_runs), median_run(bare_runs)
    # Errors and the latency target hold in every run, not only the median one.
    errors = sum(r["errors"] for r in emulator_runs)
    worst_lookup_p99 = max(r["lookup_200_p99_ms"] for r in emulator_runs)
    print(f"{clients} clients × {rounds} rounds × 4 requests (200-record lookups and queries, one-record modifies, "
          f"shared lookups); response of {len(payload)} bytes; each server measured {pairs} times in turn")
    print(f"{'server':<10} | {'req/s':>8} | {'p50':>8} | {'p99':>8} | {'lookup p99':>10} | {'errors':>6} | "
          f"{'server CPU/req':>14}")
    for name, r in [("emulator", emulator), ("baseline", bare_result)]:
        cpu = r["server_cpu_ms_per_request"]
        print(f"{name:<10} | {r['requests_per_second']:8.1f} | {r['p50_ms']:6.2f}ms | {r['p99_ms']:6.2f}ms | "
              f"{r['lookup_200_p99_ms']:8.2f}ms | {r['errors']:6} | "
              + (f"{cpu:12.3f}ms" if cpu is not None else f"{'?':>14}"))
    print("throughput ratio emulator/baseline: " + f"{ratio:.2f} (median; each pair: "
          + ", ".join(f"{e['requests_per_second'] / b['requests_per_second']:.2f}"
                      for e, b in zip(emulator_runs, bare_runs)) + ")")
    targets = {"no_errors": errors == 0, "lookup_200_p99_at_most_50ms": worst_lookup_p99 <= 50,
               "throughput_at_least_30_percent_of_baseline": ratio >= 0.3}
    for name, met in targets.items():
        print(f"{'met     ' if met else 'NOT MET '} {name}")
    out = os.environ.get("LOAD_JSON", "load-results.json")
    with open(out, "w") as f:
        json.dump({"clients": clients, "rounds": rounds, "pairs": pairs, "emulator": emulator,
                   "baseline": bare_result, "emulator_runs": emulator_runs, "baseline_runs": bare_runs,
                   "ratio": round(ratio, 3), "pair_ratios": [round(r, 3) for r in ratios], "targets": targets}, f,
                  indent=2)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
