#!/usr/bin/env python3
"""The benchmark driver behind Scripts/bench.sh: runs the built binary, times each step, reads each step's
peak memory (RSS) from the kernel's accounting of the finished child, and prints a table and JSON."""
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, *, expect=(0,), stdin=subprocess.DEVNULL, env=None):
    """Runs cmd; returns (seconds, peak RSS in MB, stdout)."""
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=stdin, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    out.seek(0)
    text = out.read().decode(errors="replace")
    if code not in expect:
        err.seek(0)
        sys.exit(f"bench: {' '.join(cmd)} exited {code}\n{text[-2000:]}\n{err.read().decode(errors='replace')[-2000:]}")
    return seconds, usage.ru_maxrss / 1024.0, text


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def reference_sql(recipe_records, path):
    """The same rows the store writes (same columns, fields JSON-encoded), in one transaction."""
    zones, per_zone = 100, recipe_records // 100
    now = int(time.time() * 1000)
    with open(path, "w") as f:
        f.write("PRAGMA journal_mode=WAL;\nBEGIN;\n")
        f.write(
            "CREATE TABLE zone (id INTEGER PRIMARY KEY AUTOINCREMENT, scope TEXT NOT NULL, owner TEXT NOT NULL,"
            " name TEXT NOT NULL, seq INTEGER NOT NULL, UNIQUE (scope, owner, name));\n"
            "CREATE TABLE record (zoneId INTEGER NOT NULL REFERENCES zone(id) ON DELETE CASCADE,"
            " name TEXT NOT NULL, type TEXT NOT NULL, fields BLOB NOT NULL, parent TEXT, shareRoot TEXT,"
            " seq INTEGER NOT NULL, createdAt INTEGER NOT NULL, createdBy TEXT NOT NULL,"
            " modifiedAt INTEGER NOT NULL, modifiedBy TEXT NOT NULL, PRIMARY KEY (zoneId, name)) WITHOUT ROWID;\n"
            "CREATE INDEX record_changes ON record (zoneId, seq);\n"
            "CREATE INDEX record_type ON record (zoneId, type);\n"
        )
        seq = 0
        for z in range(1, zones + 1):
            f.write(f"INSERT INTO zone (scope, owner, name, seq) VALUES ('private', '_owner', 'Z{z:03}', {z});\n")
            for i in range(1, per_zone + 1):
                seq += 1
                fields = json.dumps({
                    "title": {"type": "STRING", "value": f"Item {i}"},
                    "note": {"type": "STRING", "value": "A generated sentence of about this length."},
                    "qty": {"type": "INT64", "value": 3},
                    "price": {"type": "DOUBLE", "value": 1.5},
                }).replace("'", "''")
                f.write(
                    "INSERT INTO record VALUES "
                    f"({z}, 'item-{i:05}', 'Item', '{fields}', NULL, NULL, {seq}, {now}, '_owner', {now}, '_owner');\n"
                )
        f.write("COMMIT;\n")


def bench_size(binary, size, work):
    recipe = os.path.join(work, f"bench-{size}.yaml")
    subprocess.run([sys.executable, os.path.join(HERE, "gen-bench-recipe.py"), str(size), recipe], check=True)
    store = "sqlite:" + os.path.join(work, f"store-{size}.sqlite")
    row = {"records": size}

    row["validate"] = run([binary, "validate", recipe])[:2]
    row["plan_empty"] = run([binary, "plan", recipe, "--store", store, "--format", "json"])[:2]
    row["apply"] = run([binary, "apply", recipe, "--store", store, "--yes"])[:2]
    secs, rss, out = run([binary, "plan", recipe, "--store", store, "--detailed-exitcode"], expect=(0, 2))
    if "Plan: 0 to add, 0 to change, 0 to destroy." not in out:
        sys.exit(f"bench: the no-op plan after apply is not empty:\n{out[-2000:]}")
    row["plan_noop"] = (secs, rss)

    # Through the emulator: a fresh store served on a free loopback port.
    port = free_port()
    token = secrets.token_hex(16)
    log_path = os.path.join(work, f"serve-{size}.log")
    with open(log_path, "w") as log:
        server = subprocess.Popen(
            [binary, "serve", "--store", os.path.join(work, f"served-{size}.sqlite"), "--port", str(port),
             "--api-token", token],
            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    sys.exit("bench: sharelane serve did not start:\n" + open(log_path).read()[-2000:])
                time.sleep(0.1)
        env = dict(os.environ, CLOUDKIT_API_TOKEN=token)
        row["apply_http"] = run([binary, "apply", recipe, "--store", f"http://127.0.0.1:{port}", "--yes"], env=env)[:2]
    finally:
        server.terminate()
        server.wait(timeout=30)
    log_text = open(log_path).read()
    row["http_requests"] = len(re.findall(r"/database/1/[^ ]+", log_text)) + len(re.findall(r"/auth/signin", log_text))
    row["http_modify_requests"] = len(re.findall(r"records/modify", log_text))

    ref_sql = os.path.join(work, f"reference-{size}.sql")
    reference_sql(size, ref_sql)
    with open(ref_sql) as sql:
        row["reference"] = run(["sqlite3", os.path.join(work, f"reference-{size}.sqlite")], stdin=sql)[:2]
    return row


def main():
    binary = os.path.abspath(sys.argv[1])
    sizes = [int(s) for s in sys.argv[2:]] or [10000, 100000]
    work = tempfile.mkdtemp(prefix="sharelane-bench-")
    try:
        rows = [bench_size(binary, size, work) for size in sizes]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    steps = ["validate", "plan_empty", "apply", "plan_noop", "apply_http", "reference"]
    header = f"{'records':>8} | " + " | ".join(f"{s:>18}" for s in steps) + " | apply/ref | noop/apply | http/apply | modify reqs | all reqs"
    print(header)
    print("-" * len(header))
    results = []
    for row in rows:
        cells = [f"{row[s][0]:7.2f}s {row[s][1]:6.0f}MB" for s in steps]
        apply_ref = row["apply"][0] / row["reference"][0]
        noop_apply = row["plan_noop"][0] / row["apply"][0]
        http_apply = row["apply_http"][0] / row["apply"][0]
        print(f"{row['records']:>8} | " + " | ".join(f"{c:>18}" for c in cells)
              + f" | {apply_ref:9.2f} | {noop_apply:10.2f} | {http_apply:10.2f} | {row['http_modify_requests']:11} | {row['http_requests']:8}")
        results.append({
            "records": row["records"],
            **{s: {"seconds": round(row[s][0], 3), "peak_rss_mb": round(row[s][1], 1)} for s in steps},
            "ratios": {"apply_to_reference": round(apply_ref, 2), "noop_plan_to_apply": round(noop_apply, 2),
                       "http_apply_to_apply": round(http_apply, 2)},
            "http_requests": row["http_requests"], "http_modify_requests": row["http_modify_requests"],
        })
    scaling = {}
    if len(rows) >= 2:
        small, large = rows[0], rows[-1]
        scaling = {s: round(large[s][0] / small[s][0], 2) for s in steps}
        print(f"\nscaling {large['records']}/{small['records']}: " + ", ".join(f"{s} {v}x" for s, v in scaling.items()))
    out = os.environ.get("BENCH_JSON", "bench-results.json")
    with open(out, "w") as f:
        json.dump({"results": results, "scaling": scaling}, f, indent=2)
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
