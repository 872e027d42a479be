#!/usr/bin/env python3
"""The benchmark driver behind Scripts/bench.sh: runs the built binary, times each step, reads each step's
peak memory (RSS) from the kernel's accounting of the finished child, and prints a table and JSON."""
import atexit
import json
import os
import re
import secrets
import signal
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, *, expect=(0,), stdin=subprocess.DEVNULL, env=None):
    """Runs cmd; returns (seconds, peak RSS in MB, stdout, CPU seconds: user + system).

    The peak RSS is the one GNU time reports of its child. The kernel's count for a child of this script
    starts at this script's own peak (a process keeps its peak across exec, and a forked child starts from
    its parent's), and this script holds plans of 100,000 records in memory: a child of `time`, a small
    process, starts from that."""
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    peak = tempfile.NamedTemporaryFile(mode="r")
    start = time.monotonic()
    proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", peak.name] + cmd, stdout=out, stderr=err,
                            stdin=stdin, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    out.seek(0)
    text = out.read().decode(errors="replace")
    if code not in expect:
        err.seek(0)
        sys.exit(f"bench: {' '.join(cmd)} exited {code}\n{text[-2000:]}\n{err.read().decode(errors='replace')[-2000:]}")
    # The last line: GNU time writes a note first when the command exits with a status other than 0.
    rss_kb = int(peak.read().split()[-1])
    return seconds, rss_kb / 1024.0, text, usage.ru_utime + usage.ru_stime


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def reference_sql(recipe_records, path):
    """The same rows the store writes (same columns, fields JSON-encoded), in one transaction."""
    zones, per_zone = 100, recipe_records // 100
    now = int(time.time() * 1000)
    with open(path, "w") as f:
        # The store's settings: WAL, synchronous NORMAL (Sources/ShareStoreSQLite/SQLiteStore.swift).
        f.write("PRAGMA journal_mode=WAL;\nPRAGMA synchronous=NORMAL;\nBEGIN;\n")
        f.write(
            "CREATE TABLE zone (id INTEGER PRIMARY KEY AUTOINCREMENT, scope TEXT NOT NULL, owner TEXT NOT NULL,"
            " name TEXT NOT NULL, seq INTEGER NOT NULL, UNIQUE (scope, owner, name));\n"
            "CREATE TABLE record (zoneId INTEGER NOT NULL REFERENCES zone(id) ON DELETE CASCADE,"
            " name TEXT NOT NULL, type TEXT NOT NULL, fields BLOB NOT NULL, parent TEXT, shareRoot TEXT,"
            " seq INTEGER NOT NULL, createdAt INTEGER NOT NULL, createdBy TEXT NOT NULL,"
            " modifiedAt INTEGER NOT NULL, modifiedBy TEXT NOT NULL, PRIMARY KEY (zoneId, name)) WITHOUT ROWID;\n"
            "CREATE INDEX record_changes ON record (zoneId, seq);\n"
            "CREATE INDEX record_type ON record (zoneId, type);\n"
            "CREATE INDEX record_children ON record (zoneId, parent) WHERE parent IS NOT NULL;\n"
            "CREATE INDEX record_hierarchy ON record (zoneId, shareRoot) WHERE shareRoot IS NOT NULL;\n"
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


def planned_operations(plan_json):
    """The records/modify operations an apply of this plan sends, by zone: one per record change and one per
    share save or delete (participant changes travel inside their share's save)."""
    per_zone = {}
    for change in json.loads(plan_json)["changes"]:
        kind, address = change["kind"], change["address"]
        if kind not in ("record", "share"):
            continue
        zone = address.split(" ", 1)[1].split("/", 1)[0]
        per_zone[zone] = per_zone.get(zone, 0) + 1
    return per_zone


def count_requests(log_text):
    """Requests `sharelane serve` answered, from its log: one line per request, `METHOD PATH STATUS`."""
    lines = re.findall(r"\b(GET|POST) (/\S+) (\d{3})\b", log_text)
    database = [path for _, path, _ in lines if path.startswith("/database/1/")]
    modify = [path for path in database if path.endswith("/records/modify")]
    failed = [(path, status) for _, path, status in lines if status != "200"]
    return len(lines), len(modify), failed


# Every server started and not yet stopped: stopped at exit, so a bench that fails (a `sys.exit` from `run`,
# an exception, Ctrl-C) leaves no `sharelane serve` running.
_LIVE_SERVERS = []


@atexit.register
def _stop_live_servers():
    for served in list(_LIVE_SERVERS):
        served.process.terminate()
        try:
            served.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            served.process.kill()
            served.process.wait()


def _die_with_parent():
    """In a server's child before exec: on Linux, it is sent SIGTERM when this script dies, by kill -9 too,
    which no exit handler sees."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Served:
    """`sharelane serve` on a fresh store and a free loopback port, with its log, until stop()."""

    def __init__(self, binary, work, name, network=()):
        """`network`: serve's options for a bad network (`--latency 80ms`, `--throttle 40/s`, `--faults …`)."""
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.log_path = os.path.join(work, f"serve-{name}.log")
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(
                [binary, "serve", "--store", os.path.join(work, f"served-{name}.sqlite"), "--port", str(self.port),
                 "--api-token", self.token] + list(network),
                stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        _LIVE_SERVERS.append(self)
        # A cache directory of its own: a remote store's plan cache lives there (Docs/Plans.md).
        self.env = dict(os.environ, CLOUDKIT_API_TOKEN=self.token, XDG_CACHE_HOME=os.path.join(work, f"cache-{name}"))
        self.url = f"http://127.0.0.1:{self.port}"
        self.usage = None
        # Where in the log the timed apply's requests start.
        self.apply_from = 0
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    sys.exit("bench: sharelane serve did not start:\n" + open(self.log_path).read()[-2000:])
                time.sleep(0.1)

    def cpu_seconds(self):
        """Its CPU time (user + system) so far, from /proc."""
        with open(f"/proc/{self.process.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def log(self):
        time.sleep(0.2)  # the log line of the last answer
        return open(self.log_path).read()

    def stop(self):
        """Stops the server; its peak RSS in MB, from its own memory's high-water mark (see run)."""
        if self.usage is None:
            with open(f"/proc/{self.process.pid}/status") as f:
                self.peak_kb = int(next(line for line in f if line.startswith("VmHWM:")).split()[1])
            self.process.terminate()
            _, _, self.usage = os.wait4(self.process.pid, 0)
            _LIVE_SERVERS.remove(self)
        return self.peak_kb / 1024.0


def median(values):
    return sorted(values)[len(values) // 2]


def apply_rounds(binary, size, recipe, store, work, rounds):
    """The three steps the apply targets compare, measured in alternating rounds: the SQLite apply (on a
    store of its own, planned first as the bench's first store is), the sqlite3 reference (on a fresh file),
    and the apply through `sharelane serve` (a fresh server and store, planned first too; the server's CPU
    counted in). On a
    shared machine speed drifts by a third within a minute, so each ratio is the median of the ratios within
    each round, steps seconds apart, and the order turns from round to round. The first round's SQLite store
    is `store` and its server is kept, for the steps after. Returns (rows by step, ratios, the kept server)."""
    ref_sql = os.path.join(work, f"reference-{size}.sql")
    reference_sql(size, ref_sql)
    orders = [("apply", "reference", "apply_http"), ("reference", "apply_http", "apply"),
              ("apply_http", "apply", "reference")]
    runs = {"apply": [], "reference": [], "apply_http": []}
    kept = None
    for k in range(rounds):
        for step in orders[k % len(orders)]:
            if step == "apply":
                target = store if k == 0 else "sqlite:" + os.path.join(work, f"store-{size}-{k}.sqlite")
                if k > 0:
                    run([binary, "plan", recipe, "--store", target, "--format", "json"])
                runs["apply"].append(run([binary, "apply", recipe, "--store", target, "--yes"]))
            elif step == "reference":
                with open(ref_sql) as sql:
                    runs["reference"].append(run(["sqlite3", os.path.join(work, f"reference-{size}-{k}.sqlite")],
                                                 stdin=sql))
            else:
                served = Served(binary, work, f"{size}-{k}")
                # Planned first, as the SQLite apply is and as a user plans, then applies (not timed); the
                # apply's requests are those after it.
                run([binary, "plan", recipe, "--store", served.url, "--format", "json"], env=served.env)
                served.apply_from = len(served.log())
                before = served.cpu_seconds()
                secs, rss, out, cpu = run([binary, "apply", recipe, "--store", served.url, "--yes"], env=served.env)
                cpu += served.cpu_seconds() - before
                runs["apply_http"].append((secs, rss, out, cpu))
                if k == 0:
                    kept = served
                else:
                    served.stop()
    ratios = {
        "apply_to_reference": [a[0] / r[0] for a, r in zip(runs["apply"], runs["reference"])],
        "http_apply_to_apply": [h[0] / a[0] for h, a in zip(runs["apply_http"], runs["apply"])],
    }
    rows = {}
    for step, results in runs.items():
        secs, _, _, cpu = sorted(results, key=lambda a: a[0])[len(results) // 2]
        rows[step] = (secs, max(a[1] for a in results), cpu)
    return rows, ratios, kept


def bench_size(binary, size, work):
    recipe = os.path.join(work, f"bench-{size}.yaml")
    subprocess.run([sys.executable, os.path.join(HERE, "gen-bench-recipe.py"), str(size), recipe], check=True)
    store = "sqlite:" + os.path.join(work, f"store-{size}.sqlite")
    row = {"records": size}

    secs, rss, _, cpu = run([binary, "validate", recipe])
    row["validate"] = (secs, rss, cpu)
    secs, rss, plan_json, cpu = run([binary, "plan", recipe, "--store", store, "--format", "json"])
    row["plan_empty"] = (secs, rss, cpu)
    per_zone = planned_operations(plan_json)
    rounds, ratios, served = apply_rounds(binary, size, recipe, store, work, ROUNDS)
    row.update(rounds)
    row["pair_ratios"] = ratios
    secs, rss, out, cpu = run([binary, "plan", recipe, "--store", store, "--detailed-exitcode"], expect=(0, 2))
    if "Plan: 0 to add, 0 to change, 0 to destroy." not in out:
        sys.exit(f"bench: the no-op plan after apply is not empty:\n{out[-2000:]}")
    row["plan_noop"] = (secs, rss, cpu)
    # Incremental plans (Docs/Plans.md): the apply left the cache as the store holds it, so the plan above read
    # only the change feed, and so does a second no-op plan; then 100 records
    # changed behind the plan's back, dense (in as few zones as hold them: one from 10,000 records) and spread
    # (one in each of the 100 zones), each plan showing exactly those.
    secs, rss, out, cpu = run([binary, "plan", recipe, "--store", store, "--detailed-exitcode"], expect=(0, 2))
    if "Plan: 0 to add, 0 to change, 0 to destroy." not in out:
        sys.exit(f"bench: the second no-op plan is not empty:\n{out[-2000:]}")
    row["plan_cached"] = (secs, rss, cpu)
    for label in ("plan_100_dense", "plan_100_spread"):
        behind_its_back(binary, work, size, label, store)
        secs, rss, out, cpu = run([binary, "plan", recipe, "--store", store, "--detailed-exitcode"], expect=(2,))
        if "Plan: 0 to add, 100 to change, 0 to destroy." not in out:
            sys.exit(f"bench: the plan after 100 changes behind its back does not show exactly them:\n{out[-2000:]}")
        row[label] = (secs, rss, cpu)
        run([binary, "apply", recipe, "--store", store, "--yes"])
        run([binary, "plan", recipe, "--store", store])

    # Through the emulator: the first round's server, holding what its apply wrote.
    try:
        apply_log = served.log()[served.apply_from:]
        # Incremental plans over http: the first no-op plan after the apply reads what the apply wrote; the
        # second reads the change feed: its requests are counted in the log.
        http_plan = [binary, "plan", recipe, "--store", served.url, "--detailed-exitcode"]
        run(http_plan, env=served.env)
        before = len(served.log())
        secs, rss, out, cpu = run(http_plan, env=served.env)
        if "Plan: 0 to add, 0 to change, 0 to destroy." not in out:
            sys.exit(f"bench: the cached no-op plan over http is not empty:\n{out[-2000:]}")
        row["plan_cached_http_requests"] = count_requests(served.log()[before:])[0]
        row["plan_cached_http"] = (secs, rss, cpu)
    finally:
        row["serve_peak_rss_mb"] = served.stop()
    log_text = served.log()
    requests, modify, _ = count_requests(apply_log)
    _, _, failed = count_requests(log_text)
    # The apply's plan looks its users up without creating them (`/auth/signin` with `createUser: false`):
    # a user the emulator does not have yet is a 404 by design, and the apply then signs them in.
    failed = [(path, status) for path, status in failed if not (path == "/auth/signin" and status == "404")]
    if requests == 0:
        sys.exit("bench: no request lines in the log of sharelane serve:\n" + log_text[-2000:])
    if failed:
        sys.exit(f"bench: sharelane serve answered {len(failed)} request(s) with an error, first {failed[:3]}")
    operations = sum(per_zone.values())
    row["http"] = {
        "requests": requests, "modify_requests": modify, "operations": operations,
        "modify_minimum": -(-operations // 200),
        "modify_per_zone_bound": sum(-(-n // 200) for n in per_zone.values()), "zones": len(per_zone),
    }
    return row


# Saved plans (Docs/Plans.md, "The saved-plan file"): the recipe's shape is 20 zones, each shared with 10 users.
SAVED_ZONES = 20


def disk_write_seconds(path, size):
    """The time to write `size` bytes to a new file beside `path` and sync it: the disk's part of `plan --out`."""
    scratch = path + ".disk"
    block = b"x" * (1 << 20)
    start = time.monotonic()
    with open(scratch, "wb") as f:
        left = size
        while left > 0:
            f.write(block[:min(left, len(block))])
            left -= len(block)
        f.flush()
        os.fsync(f.fileno())
    seconds = time.monotonic() - start
    os.remove(scratch)
    return seconds


def bench_saved(binary, size, work):
    """`plan --out` and `apply FILE` beside `plan` and `apply RECIPE`, into empty stores, over SQLite and over
    `sharelane serve`: in BENCH_ROUNDS//2+1 rounds, each a fresh store for each path, the order turning; each
    step's median, its peak RSS the highest. `apply FILE` applies the file `plan --out` wrote, its staleness
    check included."""
    recipe = os.path.join(work, f"saved-{size}.yaml")
    subprocess.run([sys.executable, os.path.join(HERE, "gen-bench-recipe.py"), str(size), recipe, str(SAVED_ZONES)],
                   check=True)
    rounds = ROUNDS // 2 + 1
    row = {"records": size}
    for kind in ("sqlite", "http"):
        runs = {"plan": [], "plan_out": [], "apply": [], "apply_file": []}
        file_bytes = 0
        for k in range(rounds):
            paths = ("direct", "saved") if k % 2 == 0 else ("saved", "direct")
            for path in paths:
                served = Served(binary, work, f"saved-{size}-{kind}-{path}-{k}") if kind == "http" else None
                store = served.url if served else "sqlite:" + os.path.join(work, f"saved-{size}-{path}-{k}.sqlite")
                env = served.env if served else None
                try:
                    def timed(cmd, expect=(0,)):
                        before = served.cpu_seconds() if served else 0
                        secs, rss, out, cpu = run(cmd, env=env, expect=expect)
                        return secs, rss, out, cpu + ((served.cpu_seconds() - before) if served else 0)
                    if path == "direct":
                        runs["plan"].append(timed([binary, "plan", recipe, "--store", store]))
                        runs["apply"].append(timed([binary, "apply", recipe, "--store", store, "--yes"]))
                    else:
                        plan_file = os.path.join(work, f"saved-{size}-{kind}-{k}.plan")
                        runs["plan_out"].append(timed([binary, "plan", recipe, "--store", store, "--out", plan_file]))
                        file_bytes = os.path.getsize(plan_file)
                        runs["apply_file"].append(timed([binary, "apply", plan_file, "--store", store, "--yes"]))
                    after = run([binary, "plan", recipe, "--store", store, "--detailed-exitcode"], env=env,
                                expect=(0, 2))[2]
                    if "Plan: 0 to add, 0 to change, 0 to destroy." not in after:
                        sys.exit(f"bench: the plan after the {path} apply of {size} records over {kind} is not empty:\n"
                                 f"{after[-2000:]}")
                finally:
                    if served:
                        served.stop()
        for step, results in runs.items():
            secs, _, _, cpu = sorted(results, key=lambda a: a[0])[len(results) // 2]
            row[f"{step}_{kind}"] = (secs, max(a[1] for a in results), cpu)
        row[f"file_bytes_{kind}"] = file_bytes
        row[f"disk_{kind}"] = disk_write_seconds(os.path.join(work, "saved"), file_bytes)
    return row


SAVED_STEPS = [("plan", "plan"), ("plan_out", "plan --out"), ("apply", "apply RECIPE"), ("apply_file", "apply FILE")]


def print_saved(rows):
    head = f"{'saved plans':<22}" + "".join(f" | {str(r['records']) + ' records':>26}" for r in rows)
    print(head)
    print(f"{'':<22}" + "".join(f" | {'wall':>8} {'CPU':>7} {'peak RSS':>9}" for _ in rows))
    print("-" * len(head))
    for kind in ("sqlite", "http"):
        for step, label in SAVED_STEPS:
            line = f"{label + ', ' + kind:<22}"
            for r in rows:
                secs, rss, cpu = r[f"{step}_{kind}"]
                line += f" | {secs:7.2f}s {cpu:6.2f}s {rss:6.0f} MB"
            print(line)
    for r in rows:
        for kind in ("sqlite", "http"):
            print(f"{r['records']} records over {kind}: the file {r[f'file_bytes_{kind}'] / 1e6:.1f} MB "
                  f"({r[f'file_bytes_{kind}'] / r['records']:.0f} bytes a record), written to disk alone in "
                  f"{r[f'disk_{kind}']:.2f}s")


def saved_targets(rows):
    targets = {}
    if not rows:
        return targets
    targets["saved_plan_out_at_most_1.5x_plan_plus_disk"] = all(
        r[f"plan_out_{k}"][0] <= 1.5 * r[f"plan_{k}"][0] + r[f"disk_{k}"] for r in rows for k in ("sqlite", "http"))
    targets["saved_apply_file_at_most_1.2x_apply"] = all(
        r[f"apply_file_{k}"][0] <= 1.2 * r[f"apply_{k}"][0] for r in rows for k in ("sqlite", "http"))
    # The saved plan's own steps: `plan` and `apply RECIPE` are held to the main rows' memory target.
    big = rows[-1]
    targets["saved_peak_rss_at_most_300_mb"] = max(
        big[f"{s}_{k}"][1] for s in ("plan_out", "apply_file") for k in ("sqlite", "http")) <= 300
    targets["saved_file_under_400_bytes_a_record"] = all(
        r[f"file_bytes_{k}"] / r["records"] < 400 for r in rows for k in ("sqlite", "http"))
    return targets


def saved_json(rows):
    return [{"records": r["records"],
             **{f"{s}_{k}": {"seconds": round(r[f"{s}_{k}"][0], 3), "cpu_seconds": round(r[f"{s}_{k}"][2], 3),
                             "peak_rss_mb": round(r[f"{s}_{k}"][1], 1)}
                for s, _ in SAVED_STEPS for k in ("sqlite", "http")},
             **{f"file_bytes_{k}": r[f"file_bytes_{k}"] for k in ("sqlite", "http")},
             **{f"disk_seconds_{k}": round(r[f"disk_{k}"], 3) for k in ("sqlite", "http")}} for r in rows]


# Users at scale: a recipe of N users (`uN: { email: … }`) and one zone of one record
# (`gen-bench-recipe.py --users N`), its steps as the records' rows take them.
USER_STEPS = ["validate", "plan_empty", "apply", "plan_noop"]


def bench_users(binary, users, work):
    """validate, a plan into an empty SQLite store, the apply into it, and the no-op plan right after it, of a
    recipe of `users` users; the no-op plan is checked to be empty and the store to hold every user."""
    recipe = os.path.join(work, f"users-{users}.yaml")
    subprocess.run([sys.executable, os.path.join(HERE, "gen-bench-recipe.py"), "--users", str(users), recipe],
                   check=True)
    path = os.path.join(work, f"users-{users}.sqlite")
    store = "sqlite:" + path
    row = {"users": users}
    secs, rss, _, cpu = run([binary, "validate", recipe])
    row["validate"] = (secs, rss, cpu)
    secs, rss, _, cpu = run([binary, "plan", recipe, "--store", store, "--format", "json"])
    row["plan_empty"] = (secs, rss, cpu)
    secs, rss, _, cpu = run([binary, "apply", recipe, "--store", store, "--yes"])
    row["apply"] = (secs, rss, cpu)
    secs, rss, out, cpu = run([binary, "plan", recipe, "--store", store, "--detailed-exitcode"], expect=(0, 2))
    if "Plan: 0 to add, 0 to change, 0 to destroy." not in out:
        sys.exit(f"bench: the no-op plan after the apply of {users} users is not empty:\n{out[-2000:]}")
    row["plan_noop"] = (secs, rss, cpu)
    # The owner, the users, and nobody else: what the apply signed in.
    counted = subprocess.run(["sqlite3", path, "SELECT count(*) FROM user"], capture_output=True, text=True,
                             check=True).stdout.strip()
    if counted != str(users + 1):
        sys.exit(f"bench: the store holds {counted} users after the apply of {users} users and the owner")
    return row


def bench_fifo(binary, work):
    """`validate` of a recipe whose `include:` names a FIFO, and of one whose `!asset` does: each must be
    refused at its FILE:LINE, without waiting for a writer. One not answered within 10 s is stopped and
    reported as such, so that the bench goes on."""
    fifo = os.path.join(work, "pipe")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    head = "sharelane: 1\nname: fifo\n"
    users = "users: { a: { email: a@example.com } }\nowner: a\n"
    rows = {}
    for label, text, line in [
        ("include", head + "include: [pipe]\n" + users, 3),
        ("asset", head + users + "zones:\n  Z:\n    records:\n      r: { type: T, fields: { f: !asset pipe } }\n", 8),
    ]:
        recipe = os.path.join(work, f"fifo-{label}.yaml")
        with open(recipe, "w") as f:
            f.write(text)
        start = time.monotonic()
        proc = subprocess.Popen([binary, "validate", recipe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            out, _ = proc.communicate(timeout=10)
            seconds = time.monotonic() - start
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            seconds = None
        said = out.decode(errors="replace")
        refused = proc.returncode != 0 and f"{recipe}:{line}:" in said and "FIFO" in said
        rows[label] = {"seconds": seconds, "refused": refused, "message": said.strip()[:300]}
    return rows


def print_users(rows, fifo):
    """The users' table: each step's wall time, CPU and peak RSS at each size, and its growth from the first
    size to the last by wall time and by CPU (steadier on a shared machine)."""
    head = f"{'users':<12}" + "".join(f" | {str(r['users']) + ' users':>27}" for r in rows)
    if len(rows) >= 2:
        head += f" | {str(rows[-1]['users']) + '/' + str(rows[0]['users']):>13}"
    print(head)
    print(f"{'':<12}" + "".join(f" | {'wall':>8} {'CPU':>8} {'peak RSS':>9}" for _ in rows)
          + (f" | {'wall (CPU)':>13}" if len(rows) >= 2 else ""))
    print("-" * len(head))
    for step in USER_STEPS:
        line = f"{step:<12}"
        for r in rows:
            secs, rss, cpu = r[step]
            line += f" | {secs:7.2f}s {cpu:7.2f}s {rss:6.0f} MB"
        if len(rows) >= 2:
            first, last = rows[0][step], rows[-1][step]
            line += f" | {last[0] / first[0]:5.1f}× ({last[2] / first[2]:4.1f}×)"
        print(line)
    if fifo:
        for label, f in fifo.items():
            took = "did not end within 10 s" if f["seconds"] is None else f"{f['seconds'] * 1000:.0f} ms"
            print(f"a FIFO named by {'`include:`' if label == 'include' else '`!asset`':<10}: {took}, "
                  f"{'refused with its place' if f['refused'] else 'NOT REFUSED'}")


def users_json(rows):
    """The users' rows as JSON: each step's seconds, CPU seconds, peak RSS and ratio to the first size."""
    return [{"users": r["users"],
             **{s: {"seconds": round(r[s][0], 3), "cpu_seconds": round(r[s][2], 3), "peak_rss_mb": round(r[s][1], 1),
                    "to_first": round(r[s][0] / rows[0][s][0], 2)} for s in USER_STEPS}} for r in rows]


def users_targets(rows, fifo):
    targets = {}
    if rows:
        big = rows[-1]
        targets[f"users_{big['users']}_apply_under_5s"] = big["apply"][0] < 5
        targets[f"users_{big['users']}_noop_plan_under_1s"] = big["plan_noop"][0] < 1
        if len(rows) >= 2:
            targets["users_growth_at_most_12x"] = all(
                big[s][0] / rows[0][s][0] <= 12 for s in USER_STEPS)
    if fifo:
        targets["fifo_refused_under_0.1s"] = all(f["refused"] and f["seconds"] is not None and f["seconds"] < 0.1
                                                 for f in fifo.values())
    return targets


# A real link (Docs/CloudKit.md, "Limits the client follows"): serve playing Apple's distance and its throttle.
LATENCY = 0.080
THROTTLE = 40
PARALLELISM = 10


def network_requests(log_text):
    """The requests of a stretch of serve's log under network conditions: every answered line and every reset
    (`-` for its status), the throttled (429) and unavailable (503) answers among them, and lost answers."""
    lines = re.findall(r"\bfault=([a-z-]+).*?\b(GET|POST) (/\S+) (\d{3}|-)$", log_text, re.MULTILINE)
    # The throttle counts each user's requests apart, as CloudKit's does: the busiest user's admitted requests
    # bound the time from below more tightly than all of them.
    per_user = {}
    for user, status in re.findall(r"\buser=(\S+).*? (\d{3}|-)$", log_text, re.MULTILINE):
        if status != "429" and user != "-":
            per_user[user] = per_user.get(user, 0) + 1
    throttled = sum(1 for fault, _, _, status in lines if status == "429")
    unavailable = sum(1 for fault, _, _, status in lines if status == "503")
    resets = sum(1 for fault, _, _, _ in lines if fault == "reset")
    lost = sum(1 for fault, _, _, _ in lines if fault == "lost-answer")
    errors = [(path, status) for fault, _, path, status in lines
              if status not in ("200", "429", "503", "-") and not (path == "/auth/signin" and status == "404")]
    return {"requests": len(lines), "throttled": throttled, "unavailable": unavailable, "resets": resets,
            "lost_answers": lost, "errors": errors, "busiest_user": max(per_user.values(), default=0)}


def behind_its_back(binary, work, size, label, store, env=None):
    """Changes 100 records behind sharelane's back in `store` (dense: in as few zones as hold them; spread: one
    in each zone), each to a value the recipe does not hold, with a lane of `save` steps."""
    records_per_zone = max(size // 100, 1)
    # Generated records are numbered from 1 in each zone.
    places = ([(1 + k // records_per_zone, 1 + k % records_per_zone) for k in range(100)] if label.endswith("dense")
              else [(z, 1) for z in range(1, 101)])
    qty = 4 if label.endswith("dense") else 5
    behind = os.path.join(work, f"behind-{size}-{label}.yaml")
    with open(behind, "w") as f:
        f.write("sharelane: 1\nname: behind\nusers:\n  owner: { email: owner@bench.example }\nowner: owner\n"
                "lanes:\n  change:\n    steps:\n")
        for zone, item in places:
            # The zones are the bench recipe's, not this one's: `undeclared: true` says so.
            f.write(f"      - save: {{ zone: Z{zone:03}, record: item-{item:05}, type: Item, fields: {{ qty: {qty} }}, "
                    "undeclared: true }\n")
    run([binary, "run", "change", behind, "--store", store], env=env)


def bench_network(binary, size, work):
    """Over `serve --latency 80ms`: the apply and its lower bound (requests × latency ÷ parallelism), a cached
    no-op plan, plans after 100 changes behind its back; over `serve --throttle 40/s --faults
    'unavailable=3%,lost-answer=1%'`: the apply (in one run, no error) against requests ÷ 40 s, and the plan
    after it (empty)."""
    recipe = os.path.join(work, f"bench-{size}.yaml")
    if not os.path.exists(recipe):
        subprocess.run([sys.executable, os.path.join(HERE, "gen-bench-recipe.py"), str(size), recipe], check=True)
    row = {"records": size}

    slow = Served(binary, work, f"latency-{size}", ["--latency", f"{int(LATENCY * 1000)}ms"])
    try:
        run([binary, "plan", recipe, "--store", slow.url, "--format", "json"], env=slow.env)
        start = len(slow.log())
        secs, rss, out, cpu = run([binary, "apply", recipe, "--store", slow.url, "--yes",
                                   "--parallelism", str(PARALLELISM)], env=slow.env)
        counted = network_requests(slow.log()[start:])
        bound = counted["requests"] * LATENCY / PARALLELISM
        row["latency_apply"] = {"seconds": secs, "requests": counted["requests"], "bound": bound,
                                "ratio": secs / bound, "peak_rss_mb": rss}
        plan = [binary, "plan", recipe, "--store", slow.url, "--detailed-exitcode"]
        run(plan, env=slow.env)  # reads the zones the apply wrote (over http: tags come with the records)
        start = len(slow.log())
        secs, rss, out, cpu = run(plan, env=slow.env)
        if "Plan: 0 to add, 0 to change, 0 to destroy." not in out:
            sys.exit(f"bench: the cached no-op plan through --latency is not empty:\n{out[-2000:]}")
        row["latency_plan_cached"] = {"seconds": secs, "requests": network_requests(slow.log()[start:])["requests"]}
        for label in ("latency_plan_100_dense", "latency_plan_100_spread"):
            behind_its_back(binary, work, size, label, slow.url, slow.env)
            start = len(slow.log())
            secs, rss, out, cpu = run(plan, env=slow.env, expect=(2,))
            if "Plan: 0 to add, 100 to change, 0 to destroy." not in out:
                sys.exit(f"bench: the plan after 100 changes through --latency does not show exactly them:\n{out[-2000:]}")
            row[label] = {"seconds": secs, "requests": network_requests(slow.log()[start:])["requests"]}
            run([binary, "apply", recipe, "--store", slow.url, "--yes"], env=slow.env)
            run(plan, env=slow.env)
    finally:
        slow.stop()

    faults = "unavailable=3%,lost-answer=1%"
    rough = Served(binary, work, f"throttle-{size}", ["--throttle", f"{THROTTLE}/s", "--faults", faults,
                                                      "--fault-seed", "7"])
    try:
        run([binary, "plan", recipe, "--store", rough.url, "--format", "json"], env=rough.env)
        start = len(rough.log())
        secs, rss, out, cpu = run([binary, "apply", recipe, "--store", rough.url, "--yes"], env=rough.env,
                                  expect=(0, 1))
        if "Apply complete!" not in out:
            sys.exit(f"bench: the apply through --throttle and --faults did not complete in one run:\n{out[-3000:]}")
        counted = network_requests(rough.log()[start:])
        # The throttle admits 40 a second: the requests it refused (429) are not counted by it, nor here.
        admitted = counted["requests"] - counted["throttled"]
        bound = admitted / THROTTLE
        row["throttled_apply"] = {"seconds": secs, "bound": bound, "ratio": secs / bound, **counted,
                                  "admitted": admitted}
        secs, rss, out, cpu = run([binary, "plan", recipe, "--store", rough.url, "--detailed-exitcode"],
                                  env=rough.env, expect=(0, 2))
        row["throttled_plan_after_empty"] = "Plan: 0 to add, 0 to change, 0 to destroy." in out
    finally:
        rough.stop()
    row["plan_after_apply"] = bench_plan_after_apply(binary, work)
    return row


def bench_plan_after_apply(binary, work):
    """Over `serve --latency 80ms`, a 2,000-record recipe in 20 zones, each shared with 10 participants: the
    first plan right after an apply (what CI runs to prove convergence) and the second, in BENCH_ROUNDS//2+1
    rounds, each on a fresh server; the medians, and the requests of the last round."""
    recipe = os.path.join(work, "bench-after-apply.yaml")
    subprocess.run([sys.executable, os.path.join(HERE, "gen-bench-recipe.py"), str(AFTER_APPLY_RECORDS), recipe,
                    str(AFTER_APPLY_ZONES), "10"], check=True)
    firsts, seconds = [], []
    requests = {}
    for round_number in range(max(1, ROUNDS // 2 + 1)):
        slow = Served(binary, work, f"after-apply-{round_number}", ["--latency", f"{int(LATENCY * 1000)}ms"])
        try:
            run([binary, "apply", recipe, "--store", slow.url, "--yes", "--parallelism", str(PARALLELISM)],
                env=slow.env)
            plan = [binary, "plan", recipe, "--store", slow.url, "--detailed-exitcode"]
            for label, into in (("first", firsts), ("second", seconds)):
                start = len(slow.log())
                secs, rss, out, cpu = run(plan, env=slow.env)
                if "Plan: 0 to add, 0 to change, 0 to destroy." not in out:
                    sys.exit(f"bench: the {label} plan after the apply is not empty:\n{out[-2000:]}")
                into.append(secs)
                requests[label] = network_requests(slow.log()[start:])["requests"]
        finally:
            slow.stop()
    first, second = median(firsts), median(seconds)
    return {"records": AFTER_APPLY_RECORDS, "zones": AFTER_APPLY_ZONES, "first": first, "second": second,
            "ratio": first / second, "firsts": firsts, "seconds": seconds,
            "first_requests": requests["first"], "second_requests": requests["second"]}


# Ctrl-C during an apply over `serve --latency 80ms` (Docs/Plans.md, "Stopping an apply"): the recipe of 20,000
# records in 20 zones, each shared with 10 participants, stopped at several moments after its first write
# (before it, the apply plans, and a signal ends it at once).
STOP_RECORDS = 20000
STOP_ZONES = 20
STOP_AFTER_SECONDS = (0.0, 0.6, 1.5)


def bench_stop(binary, work):
    """For each moment: the seconds from SIGINT to the apply's exit, against the slowest request serve answered
    (its log's `ms=`) plus a second; the exit status; and whether the next apply converged (the plan after it
    empty)."""
    recipe = os.path.join(work, "bench-stop.yaml")
    subprocess.run([sys.executable, os.path.join(HERE, "gen-bench-recipe.py"), str(STOP_RECORDS), recipe,
                    str(STOP_ZONES), "100"], check=True)
    rows = []
    for after in STOP_AFTER_SECONDS:
        slow = Served(binary, work, f"stop-{after}", ["--latency", f"{int(LATENCY * 1000)}ms"])
        try:
            with open(os.path.join(work, "stop-apply.out"), "w") as out:
                apply = subprocess.Popen([binary, "apply", recipe, "--store", slow.url, "--yes"], env=slow.env,
                                         stdout=out, stderr=subprocess.STDOUT)
                deadline = time.monotonic() + 120
                while "/records/modify" not in open(slow.log_path).read() and time.monotonic() < deadline:
                    time.sleep(0.01)
                time.sleep(after)
                signalled = time.monotonic()
                apply.send_signal(signal.SIGINT)
                status = apply.wait()
                stopped_in = time.monotonic() - signalled
            said = open(os.path.join(work, "stop-apply.out")).read()
            slowest = max([float(ms) for ms in re.findall(r"\bms=([0-9.]+)", slow.log())] or [0.0]) / 1000
            run([binary, "apply", recipe, "--store", slow.url, "--yes"], env=slow.env)
            secs, rss, out, cpu = run([binary, "plan", recipe, "--store", slow.url, "--detailed-exitcode"],
                                      env=slow.env, expect=(0, 2))
            rows.append({"after": after, "stopped_in": stopped_in, "slowest_request": slowest, "status": status,
                         "said_stopping": "Stopping: " in said,
                         "reported": "Apply stopped: it was asked to stop" in said or "Apply complete!" in said,
                         "converged": "Plan: 0 to add, 0 to change, 0 to destroy." in out})
        finally:
            slow.stop()
    return rows


def print_stop(rows):
    for r in rows:
        print(f"SIGINT {r['after']:.1f}s after the first write: exit {r['status']} after {r['stopped_in']:.2f}s (slowest request "
              f"{r['slowest_request']:.2f}s); stopping line {'yes' if r['said_stopping'] else 'NO'}, report "
              f"{'yes' if r['reported'] else 'NO'}, next apply converged {'yes' if r['converged'] else 'NO'}")
    met = all(r["status"] == 130 and r["stopped_in"] <= r["slowest_request"] + 1 and r["said_stopping"]
              and r["reported"] and r["converged"] for r in rows)
    print(f"{'met    ' if met else 'NOT MET'}  Ctrl-C ends an apply within its slowest request + 1 s, exit 130, "
          f"and the next apply converges")


def print_network(rows):
    """The real-link table: each step against its lower bound or its target."""
    print(f"{'over a real link':<28} | {'records':>7} | {'wall':>7} | {'requests':>8} | {'lower bound':>11} | "
          f"{'× bound':>7} | target")
    print("-" * 96)
    for r in rows:
        a = r["latency_apply"]
        print(f"{'apply, 80 ms':<28} | {r['records']:>7} | {a['seconds']:6.2f}s | {a['requests']:>8} | "
              f"{a['bound']:10.2f}s | {a['ratio']:6.2f}× | ≤ 1.3× (requests × 80 ms ÷ {PARALLELISM})")
        for key, label, target in [("latency_plan_cached", "cached no-op plan, 80 ms", "< 0.5 s"),
                                   ("latency_plan_100_dense", "plan, 100 changed (dense)", "< 1 s"),
                                   ("latency_plan_100_spread", "plan, 100 changed (spread)", "< 1 s")]:
            p = r[key]
            print(f"{label:<28} | {r['records']:>7} | {p['seconds']:6.2f}s | {p['requests']:>8} | "
                  f"{'':>11} | {'':>7} | {target}")
        t = r["throttled_apply"]
        print(f"{'apply, 40/s + faults':<28} | {r['records']:>7} | {t['seconds']:6.2f}s | {t['admitted']:>8} | "
              f"{t['bound']:10.2f}s | {t['ratio']:6.2f}× | ≤ 1.5× (requests ÷ 40/s); "
              f"{t['throttled']} throttled, {t['unavailable']} unavailable, {t['lost_answers']} lost answers; "
              f"plan after: {'empty' if r['throttled_plan_after_empty'] else 'NOT EMPTY'}")
        if "plan_after_apply" in r:
            a = r["plan_after_apply"]
            print(f"{'first plan after apply, 80 ms':<28} | {a['records']:>7} | {a['first']:6.2f}s | "
                  f"{a['first_requests']:>8} | {'':>11} | {a['ratio']:6.2f}× | ≤ 1.2× the second, < 0.5 s "
                  f"({a['zones']} zones; × is over the second)")
            print(f"{'second plan after apply':<28} | {a['records']:>7} | {a['second']:6.2f}s | "
                  f"{a['second_requests']:>8} | {'':>11} | {'':>7} | (rounds: "
                  + ", ".join(f"{x:.2f}/{y:.2f}" for x, y in zip(a["firsts"], a["seconds"])) + ")")
        print(f"{'':<28}   the throttle counts each user apart: the busiest user sent {t['busiest_user']} "
              f"admitted requests, {t['busiest_user'] / THROTTLE:.2f} s at 40/s "
              f"({t['seconds'] / max(t['busiest_user'] / THROTTLE, 1e-9):.2f}× that)")


def network_targets(rows):
    big = rows[-1]
    return {
        "latency_apply_at_most_1.3x_bound": big["latency_apply"]["ratio"] <= 1.3,
        "latency_cached_noop_plan_under_0.5s": big["latency_plan_cached"]["seconds"] < 0.5,
        "latency_plan_after_100_changes_under_1s": max(big["latency_plan_100_dense"]["seconds"],
                                                       big["latency_plan_100_spread"]["seconds"]) < 1,
        "throttled_apply_at_most_1.5x_bound": big["throttled_apply"]["ratio"] <= 1.5,
        "throttled_apply_then_empty_plan": big["throttled_plan_after_empty"],
        "latency_first_plan_after_apply_within_1.2x_second": big["plan_after_apply"]["ratio"] <= 1.2,
        "latency_first_plan_after_apply_under_0.5s": big["plan_after_apply"]["first"] < 0.5,
    }


# Rounds of the apply, the sqlite3 reference and the apply over http: (apply_rounds).
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
STEPS = ["validate", "plan_empty", "apply", "plan_noop", "plan_cached", "plan_100_dense", "plan_100_spread", "apply_http",
         "plan_cached_http", "reference"]
LIMIT_RSS_MB = 400
# The plan after an apply: the shape of a recipe a team keeps in git (bench_plan_after_apply).
AFTER_APPLY_RECORDS = 2000
AFTER_APPLY_ZONES = 20


def bench_replay(binary, work, exchanges=1000):
    """`sharelane replay` of a recording of `exchanges` exchanges (a sign-in, a zone, then one record created
    a request), made through `sharelane record` in front of serve: the replay's wall time against a fresh
    in-process emulator, and that every exchange replays the same."""
    import urllib.request
    served = Served(binary, work, "replay")
    folder = os.path.join(work, "recording")
    port = free_port()
    log_path = os.path.join(work, "record.log")
    with open(log_path, "w") as log:
        recorder = subprocess.Popen([binary, "record", "--upstream", served.url, "--out", folder, "--port", str(port)],
                                    stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or recorder.poll() is not None:
                    sys.exit("bench: sharelane record did not start:\n" + open(log_path).read()[-2000:])
                time.sleep(0.1)
        base = f"http://127.0.0.1:{port}"

        def post(path, body):
            request = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                             headers={"Content-Type": "text/plain"})
            with urllib.request.urlopen(request) as answer:
                return json.loads(answer.read())

        signed = post(f"/auth/signin?ckAPIToken={served.token}",
                      {"emailAddress": "bench@example.test", "container": "iCloud.bench.replay",
                       "environment": "development"})
        from urllib.parse import quote
        query = f"ckAPIToken={served.token}&ckWebAuthToken={quote(signed['ckWebAuthToken'], safe='')}"
        db = f"/database/1/iCloud.bench.replay/development/private"
        post(f"{db}/zones/modify?{query}",
             {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Bench"}}}]})
        for number in range(exchanges - 2):
            post(f"{db}/records/modify?{query}", {"zoneID": {"zoneName": "Bench"}, "operations": [
                {"operationType": "create", "record": {"recordName": f"r{number}", "recordType": "Item",
                                                       "fields": {"title": {"value": f"Item {number}"},
                                                                  "n": {"value": number}}}}]})
    finally:
        recorder.send_signal(signal.SIGINT)
        recorder.wait()
        served.stop()
    seconds, rss, text, cpu = run([binary, "replay", folder])
    summary = text.strip().splitlines()[-1]
    return {"exchanges": exchanges, "seconds": round(seconds, 3), "cpu_seconds": round(cpu, 3),
            "peak_rss_mb": round(rss, 1), "summary": summary}


def print_replay(row):
    print(f"replay of {row['exchanges']} exchanges: {row['seconds']:.2f}s (CPU {row['cpu_seconds']:.2f}s, "
          f"peak RSS {row['peak_rss_mb']:.0f} MB): {row['summary']}")


def replay_targets(row):
    same = row["summary"] == f"{row['exchanges']} exchanges, {row['exchanges']} the same, 0 differ"
    return {"replay_of_1000_exchanges_at_most_5s": row["seconds"] <= 5 and same}


def main():
    # A bench stopped with SIGTERM (a CI's timeout, `kill`) exits through Python's exit, so the servers it
    # started are stopped too (_stop_live_servers), as after a failure or Ctrl-C.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    binary = os.path.abspath(sys.argv[1])
    sizes = [int(s) for s in sys.argv[2:]] or [10000, 100000]
    work = tempfile.mkdtemp(prefix="sharelane-bench-")
    # BENCH_ONLY=network runs only the real link's steps; BENCH_NETWORK_SIZES chooses their sizes (default: the
    # first size: the throttled apply alone takes requests ÷ 40 s).
    only_network = os.environ.get("BENCH_ONLY") == "network"
    if os.environ.get("BENCH_ONLY") == "stop":
        # Ctrl-C during an apply alone (bench_stop): a minute, not the whole bench.
        try:
            print_stop(bench_stop(binary, work))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
    if os.environ.get("BENCH_ONLY") == "replay":
        # `sharelane replay` of 1,000 recorded exchanges alone (bench_replay).
        try:
            row = bench_replay(binary, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print_replay(row)
        for name, met in replay_targets(row).items():
            print(f"{'met    ' if met else 'NOT MET'}  {name}")
        return
    if os.environ.get("BENCH_ONLY") == "after-apply":
        # The plan after an apply alone (bench_plan_after_apply): a minute, not the whole bench.
        try:
            a = bench_plan_after_apply(binary, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(json.dumps(a, indent=2))
        met = a["ratio"] <= 1.2 and a["first"] < 0.5
        print(f"{'met    ' if met else 'NOT MET'}  first plan after apply {a['first']:.2f}s ({a['first_requests']} "
              f"requests), second {a['second']:.2f}s ({a['second_requests']} requests): {a['ratio']:.2f}×")
        return
    if os.environ.get("BENCH_ONLY") == "owners":
        # A recipe's records over 10 owners beside the same records under one (Scripts/bench_owners.py).
        sys.path.insert(0, HERE)
        import bench_owners
        try:
            rows = [bench_owners.bench_owners(binary, size, work, run, Served, ROUNDS // 2 + 1) for size in sizes]
        finally:
            shutil.rmtree(work, ignore_errors=True)
        bench_owners.print_owners(rows)
        for name, met in bench_owners.owners_targets(rows).items():
            print(f"{'met    ' if met else 'NOT MET'}  {name}")
        return
    if os.environ.get("BENCH_ONLY") == "saved":
        # Saved plans alone (bench_saved): `plan --out` and `apply FILE` beside `plan` and `apply RECIPE`.
        try:
            saved_rows = [bench_saved(binary, size, work) for size in sizes]
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print_saved(saved_rows)
        print()
        targets = saved_targets(saved_rows)
        for name, met in targets.items():
            print(f"{'met    ' if met else 'NOT MET'}  {name}")
        out = os.environ.get("BENCH_JSON", "bench-results.json")
        with open(out, "w") as f:
            json.dump({"saved": saved_json(saved_rows), "targets": targets}, f, indent=2)
        print(f"\nwrote {out}")
        return
    network_sizes = [int(s) for s in os.environ.get("BENCH_NETWORK_SIZES", str(sizes[0])).split()]
    # BENCH_ONLY=users runs only the users' rows and the FIFO refusals; BENCH_USERS chooses their sizes.
    only_users = os.environ.get("BENCH_ONLY") == "users"
    user_sizes = [int(s) for s in os.environ.get("BENCH_USERS", "10000 100000").split()]
    try:
        user_rows = [] if only_network else [bench_users(binary, users, work) for users in user_sizes]
        fifo = {} if only_network else bench_fifo(binary, work)
        if only_users:
            print_users(user_rows, fifo)
            print()
            targets = users_targets(user_rows, fifo)
            for name, met in targets.items():
                print(f"{'met    ' if met else 'NOT MET'}  {name}")
            out = os.environ.get("BENCH_JSON", "bench-results.json")
            with open(out, "w") as f:
                json.dump({"users": users_json(user_rows), "fifo": fifo, "targets": targets}, f, indent=2)
            print(f"\nwrote {out}")
            return
        rows = [] if only_network else [bench_size(binary, size, work) for size in sizes]
        saved_rows = [] if only_network else [bench_saved(binary, size, work) for size in sizes]
        network_rows = [bench_network(binary, size, work) for size in network_sizes]
        replay_row = None if only_network else bench_replay(binary, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if user_rows:
        print_users(user_rows, fifo)
        print()
    print_network(network_rows)
    print()
    for name, met in network_targets(network_rows).items():
        print(f"{'met    ' if met else 'NOT MET'}  {name}")
    print()
    if only_network:
        out = os.environ.get("BENCH_JSON", "bench-results.json")
        with open(out, "w") as f:
            json.dump({"network": network_rows, "targets": network_targets(network_rows)}, f, indent=2)
        print(f"wrote {out}")
        return

    print_saved(saved_rows)
    print()
    # One line per step; for each size its wall time, its ratio to that size's sqlite3 reference, its CPU
    # time (user + system; steadier than wall time on a loaded machine) and its peak RSS.
    head = f"{'step':<16}" + "".join(f" | {str(r['records']) + ' records':>36}" for r in rows)
    if len(rows) >= 2:
        growth = f"{rows[-1]['records']}/{rows[0]['records']}"
        head += f" | {growth:>11}"
    print(head)
    print(f"{'':<16}" + "".join(f" | {'wall':>8} {'× ref':>7} {'CPU':>8} {'peak RSS':>9}" for _ in rows)
          + (f" | {'wall (CPU)':>11}" if len(rows) >= 2 else ""))
    print("-" * len(head))
    for step in STEPS:
        line = f"{step:<16}"
        for r in rows:
            secs, rss, cpu = r[step]
            line += f" | {secs:7.2f}s {secs / r['reference'][0]:6.2f}× {cpu:7.2f}s {rss:6.0f} MB"
        if len(rows) >= 2:
            line += f" | {rows[-1][step][0] / rows[0][step][0]:4.1f}× ({rows[-1][step][2] / rows[0][step][2]:4.1f}×)"
        print(line)
    print()
    for r in rows:
        h = r["http"]
        print(f"{r['records']} records over http: {h['requests']} requests, {h['modify_requests']} records/modify "
              f"for {h['operations']} operations in {h['zones']} zones (⌈operations/200⌉ = {h['modify_minimum']}, "
              f"per zone Σ⌈n/200⌉ = {h['modify_per_zone_bound']}); serve peak RSS {r['serve_peak_rss_mb']:.0f} MB; "
              f"a cached no-op plan: {r['plan_cached_http_requests']} requests")
    print()
    # The targets' ratios, from the alternating rounds (apply_rounds): each round's ratio, and their median.
    for r in rows:
        for name, label in [("apply_to_reference", "apply ÷ sqlite3 reference"),
                            ("http_apply_to_apply", "apply over http ÷ apply")]:
            each = r["pair_ratios"][name]
            print(f"{r['records']} records, {label}: {median(each):.2f}× (median of {len(each)} rounds: "
                  + ", ".join(f"{v:.2f}" for v in each) + ")")

    results = []
    for r in rows:
        ref = r["reference"][0]
        results.append({
            "records": r["records"],
            **{s: {"seconds": round(r[s][0], 3), "to_reference": round(r[s][0] / ref, 2),
                   "cpu_seconds": round(r[s][2], 3), "peak_rss_mb": round(r[s][1], 1)} for s in STEPS},
            "serve_peak_rss_mb": round(r["serve_peak_rss_mb"], 1),
            "http": r["http"],
            "plan_cached_http_requests": r["plan_cached_http_requests"],
            "ratios": {"apply_to_reference": round(median(r["pair_ratios"]["apply_to_reference"]), 2),
                       "noop_plan_to_apply": round(r["plan_noop"][0] / r["apply"][0], 2),
                       "http_apply_to_apply": round(median(r["pair_ratios"]["http_apply_to_apply"]), 2)},
            "round_ratios": {name: [round(v, 3) for v in each] for name, each in r["pair_ratios"].items()},
        })
    scaling = {}
    cpu_scaling = {}
    targets = {}
    if rows:
        big = rows[-1]
        ratios = results[-1]["ratios"]
        h = big["http"]
        targets = {
            "apply_at_most_3x_reference": ratios["apply_to_reference"] <= 3,
            "noop_plan_at_most_half_apply": ratios["noop_plan_to_apply"] <= 0.5,
            "peak_rss_at_most_400_mb": max([big[s][1] for s in STEPS if s != "reference"] + [big["serve_peak_rss_mb"]])
            <= LIMIT_RSS_MB,
            "http_modify_requests_per_zone_bound": h["modify_requests"] == h["modify_per_zone_bound"],
            "http_apply_at_most_4x_apply": ratios["http_apply_to_apply"] <= 4,
            # The targets for incremental plans, on SQLite: the first plan after the apply (which leaves
            # the cache as the store holds it) and the second.
            "noop_plan_after_apply_at_most_0.1s": big["plan_noop"][0] <= 0.1,
            "cached_noop_plan_at_most_0.1s": big["plan_cached"][0] <= 0.1,
            "plan_after_100_changes_at_most_0.2s": max(big["plan_100_dense"][0], big["plan_100_spread"][0]) <= 0.2,
            "cached_noop_plan_over_http_at_most_10_requests": big["plan_cached_http_requests"] <= 10,
            # The targets for applies, at every size.
            "apply_at_most_2.5x_reference": all(x["ratios"]["apply_to_reference"] <= 2.5 for x in results),
            "http_apply_at_most_2x_apply": all(x["ratios"]["http_apply_to_apply"] <= 2 for x in results),
            "peak_rss_at_most_300_mb": max([big[s][1] for s in STEPS if s != "reference"] + [big["serve_peak_rss_mb"]])
            <= 300,
        }
    targets.update(saved_targets(saved_rows))
    targets.update(network_targets(network_rows))
    targets.update(users_targets(user_rows, fifo))
    if replay_row:
        print_replay(replay_row)
        targets.update(replay_targets(replay_row))
    if len(rows) >= 2:
        scaling = {s: round(rows[-1][s][0] / rows[0][s][0], 2) for s in STEPS}
        cpu_scaling = {s: round(rows[-1][s][2] / rows[0][s][2], 2) for s in STEPS}
        targets["growth_at_most_12x"] = all(v <= 12 for s, v in scaling.items() if s != "reference")
    print()
    for name, met in targets.items():
        print(f"{'met    ' if met else 'NOT MET'}  {name}")
    out = os.environ.get("BENCH_JSON", "bench-results.json")
    with open(out, "w") as f:
        json.dump({"results": results, "scaling": scaling, "cpu_scaling": cpu_scaling, "network": network_rows,
                   "users": users_json(user_rows), "fifo": fifo, "replay": replay_row,
                   "saved": saved_json(saved_rows), "targets": targets}, f, indent=2)
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
