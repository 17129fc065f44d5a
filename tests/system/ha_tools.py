#!/usr/bin/env python3
"""Tools of daemon_ha_test.sh: see the subcommands.

proxy LISTEN_PORT_FILE UPSTREAM_PORT LOG
    An HTTP proxy in front of the S3 server for one daemon, recording every exchange as a
    JSON line (start and end times, method, path, status; a lease write's body too). It
    forwards requests as they are (SigV4 signs the Host header the daemon sent, which the
    server checks as it receives it) and answers with the server's status, headers and
    body. Writes the port it listens on to LISTEN_PORT_FILE.

sample ENDPOINT BUCKET KEYS_FILE REPOS OUT STOP_FILE
    Until STOP_FILE exists, reads straight from the server, for every mirror (REPOS:
    comma-separated prefixes), its refs.json, its HEAD and every ref refs.json ever listed
    (branches and tags), then asks for the version.json of every version they name. Writes
    one JSON line per round to OUT: what each read answered, and when.

check PUBLISHED_DIR ROUNDS [--catch-up NAME T0 TARGETS BOUND]...
    Checks the sampler's rounds against each origin's publication order (PUBLISHED_DIR/REPO:
    the version ids it published, one a line, in order): a ref (a ref file, its entry in
    refs.json, a detached HEAD) never moves back in that order, never names a version the
    origin did not publish or whose version.json the mirror lacked in that round, a tag
    never moves, and refs.json, HEAD and a ref never vanish (404) after having existed, nor
    leave refs.json. --catch-up: every mirror's refs/heads/main reached the version TARGETS
    names for it (lines "REPO ID", the origins' mains at the instant T0) within BOUND
    seconds of T0. Prints a summary; exits 1 with the problems when there is any.

analyse LEASE_SECONDS MEMBERS_PATH EVENTS LOG...
    Reads the proxies' logs. Every write (PUT, POST, DELETE) a daemon made to a repository
    (its data, refs, ledger: everything but the lease itself, the daemon's own probe object
    `.fdl-mirror/probe-DAEMON` and the heartbeats under MEMBERS_PATH) must have started
    while that daemon held the repository's lease, as the lease writes the server accepted
    say (the last one before the write names the daemon, is not a release, and was made less
    than LEASE_SECONDS earlier). EVENTS, lines the test wrote as it went:
      lost DAEMON T BOUND   DAEMON was killed or stopped at T: every lease it held then is
                            taken by another daemon (the server accepts its lease write)
                            within BOUND seconds;
      settled N T1 T2       from T1 to T2, with N live daemons, no daemon ever holds more
                            than ceil(M/N) + 1 of the M leases (held: from an accepted lease
                            write until a release, another's write, or LEASE_SECONDS on).
    Prints a summary; exits 1 with the offending writes and events when any is wrong.
"""
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time


def read_head(stream):
    lines = []
    while True:
        line = stream.readline(65537)
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            return lines
        lines.append(line)


def proxy(port_file, upstream_port, log_path):
    log_lock = threading.Lock()
    log = open(log_path, "a", buffering=1)

    def record(entry):
        with log_lock:
            log.write(json.dumps(entry) + "\n")

    def serve(client):
        upstream = socket.create_connection(("127.0.0.1", upstream_port))
        reader = client.makefile("rb")
        try:
            while True:
                head = read_head(reader)
                if not head:
                    return
                method, target = head[0].decode("latin-1").split(" ")[:2]
                length = 0
                for line in head[1:]:
                    name, _, value = line.decode("latin-1").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                body = reader.read(length) if length else b""
                started = time.time()
                upstream.sendall(b"".join(head) + b"\r\n" + body)
                answer = http.client.HTTPResponse(upstream, method=method)
                answer.begin()
                payload = answer.read()
                ended = time.time()
                out = [f"HTTP/1.1 {answer.status} {answer.reason}\r\n".encode("latin-1")]
                for name, value in answer.getheaders():
                    if name.lower() not in ("transfer-encoding", "content-length", "connection"):
                        out.append(f"{name}: {value}\r\n".encode("latin-1"))
                if method != "HEAD" or answer.getheader("content-length") is None:
                    out.append(f"Content-Length: {len(payload)}\r\n".encode())
                else:
                    out.append(f"Content-Length: {answer.getheader('content-length')}\r\n".encode())
                client.sendall(b"".join(out) + b"\r\n" + (payload if method != "HEAD" else b""))
                entry = {"start": started, "end": ended, "method": method, "path": target.split("?")[0],
                         "query": target.partition("?")[2], "status": answer.status}
                if target.split("?")[0].endswith("/.fdl-mirror/lease") and method == "PUT":
                    entry["body"] = body.decode("utf-8", "replace")
                record(entry)
        except (OSError, http.client.HTTPException, ValueError):
            pass
        finally:
            client.close()
            upstream.close()

    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(listener.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client,), daemon=True).start()


def curl_all(auth, urls, head=False):
    """GETs (or HEADs) every URL at once; returns {url: (status, body)}, status "000" when
    no answer came."""
    folder = os.environ.get("TMPDIR", "/tmp")
    files = [os.path.join(folder, f"ha-sample-{os.getpid()}-{i}") for i in range(len(urls))]
    for f in files:
        if os.path.exists(f):
            os.remove(f)
    command = ["curl", "-s", "--no-progress-meter", "-Z", "--max-time", "5", "-w", "%{url_effective} %{http_code}\n"]
    command += (["-I"] if head else []) + auth  # -Z: all at once
    for url, f in zip(urls, files):
        command += ["-o", f, url]  # each URL its own -o: one -o serves one URL
    answered = subprocess.run(command, capture_output=True, text=True, check=False).stdout.splitlines()
    codes = dict(line.rsplit(" ", 1) for line in answered if " " in line)
    out = {}
    for url, f in zip(urls, files):
        code = codes.get(url, "000")
        body = open(f, errors="replace").read() if code == "200" and not head and os.path.exists(f) else ""
        out[url] = (code, body)
    return out


def refs_json_entries(text):
    """The refs refs.json lists ({name: id}), in the project's shape or the flat one."""
    document = json.loads(text)
    refs = document.get("refs", document) if isinstance(document, dict) else {}
    return {k: v for k, v in refs.items() if k.startswith("refs/") and isinstance(v, str)}


def sample(endpoint, bucket, keys_file, repos, out_path, stop_file):
    keys = dict(line.split(" = ", 1) for line in open(keys_file).read().splitlines() if " = " in line)
    auth = ["--aws-sigv4", "aws:amz:us-east-1:s3", "--user", f"{keys['access_key_id']}:{keys['secret_access_key']}",
            "-H", "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"]
    repos = repos.split(",")
    listed = {repo: set() for repo in repos}  # every ref refs.json ever listed, read every round
    out = open(out_path, "a", buffering=1)
    rounds = 0
    base = f"{endpoint}/{bucket}"
    while not os.path.exists(stop_file):
        started = time.time()
        # refs.json and HEAD first: a ref is written before refs.json, which names it.
        answers = curl_all(auth, [f"{base}/{r}/{k}" for r in repos for k in ("refs.json", "HEAD")])
        for repo in repos:
            code, body = answers[f"{base}/{repo}/refs.json"]
            if code == "200":
                try:
                    listed[repo] |= set(refs_json_entries(body))
                except (ValueError, AttributeError):
                    pass  # the checker says so
        answers |= curl_all(auth, [f"{base}/{r}/{name}" for r in repos for name in sorted(listed[r])])
        read = time.time()
        reads = {r: {} for r in repos}
        for url, answer in answers.items():
            repo, key = url[len(base) + 1:].split("/", 1)
            reads[repo][key] = answer
        named = set()
        for repo in repos:
            for key, (code, body) in reads[repo].items():
                if code != "200":
                    continue
                if key == "refs.json":
                    try:
                        named |= {(repo, v) for v in refs_json_entries(body).values()}
                    except (ValueError, AttributeError):
                        pass
                elif not body.startswith("ref: "):
                    named.add((repo, body.strip()))
        named = sorted((r, v) for r, v in named if len(v) == 36 and "/" not in v)
        checked = curl_all(auth, [f"{base}/{r}/versions/{v}/version.json" for r, v in named], head=True)
        versions = {f"{r}/{v}": checked[f"{base}/{r}/versions/{v}/version.json"][0] for r, v in named}
        rounds += 1
        out.write(json.dumps({"round": rounds, "start": started, "read": read, "reads": reads,
                              "versions": versions}) + "\n")
        time.sleep(0.2)


def check(published_dir, rounds_path, catch_ups):
    order = {}
    for repo in os.listdir(published_dir):
        ids = open(os.path.join(published_dir, repo)).read().split()
        order[repo] = {v: i for i, v in enumerate(ids)}
    problems = []
    last = {}      # (repo, what) -> the version id last seen
    existed = set()  # (repo, key) read once with 200
    ever_listed = {}
    rounds = [json.loads(line) for line in open(rounds_path)]
    reads = unread = 0

    def see(repo, what, value, version_code, n):
        if value not in order.get(repo, {}):
            problems.append(f"{repo}: {what} names {value}, which the origin never published (round {n})")
            return
        if version_code != "200":
            problems.append(f"{repo}: {what} names {value}, whose version.json answered {version_code} (round {n})")
        before = last.get((repo, what))
        if before is not None and before != value:
            if "refs/tags/" in what:
                problems.append(f"{repo}: {what} moved from {before} to {value}: a tag never moves (round {n})")
            elif order[repo][value] < order[repo][before]:
                problems.append(f"{repo}: {what} moved back from {before} to {value} (round {n})")
        last[(repo, what)] = value

    for r in rounds:
        n = r["round"]
        for repo, answers in r["reads"].items():
            refs_listed = None
            for key, (code, body) in sorted(answers.items()):
                reads += 1
                if code == "404":
                    if (repo, key) in existed:
                        problems.append(f"{repo}: {key} vanished (404) after having existed (round {n})")
                    continue
                if code != "200":
                    unread += 1
                    continue
                existed.add((repo, key))
                if key == "refs.json":
                    try:
                        refs_listed = refs_json_entries(body)
                    except (ValueError, AttributeError):
                        problems.append(f"{repo}: refs.json does not parse (round {n}): {body[:80]!r}")
                        continue
                    for name, value in refs_listed.items():
                        see(repo, f"refs.json[{name}]", value, r["versions"].get(f"{repo}/{value}", "none"), n)
                    gone = ever_listed.get(repo, set()) - set(refs_listed)
                    if gone:
                        problems.append(f"{repo}: refs.json no longer lists {', '.join(sorted(gone))} (round {n})")
                    ever_listed.setdefault(repo, set()).update(refs_listed)
                elif key == "HEAD" and body.startswith("ref: "):
                    continue  # checked below, once refs.json is known
                else:
                    value = body.strip()
                    see(repo, key, value, r["versions"].get(f"{repo}/{value}", "none"), n)
            code, body = answers.get("HEAD", ("000", ""))
            if code == "200" and body.startswith("ref: ") and refs_listed is not None:
                if body[5:].strip() not in refs_listed:
                    problems.append(f"{repo}: HEAD names {body[5:].strip()}, which refs.json does not list (round {n})")
    summary = [f"{len(rounds)} rounds, {reads} reads ({unread} unanswered), "
               f"{len({k for k in last})} refs followed"]
    for name, t0, targets, bound in catch_ups:
        t0, bound = float(t0), float(bound)
        slowest = []
        for line in open(targets).read().splitlines():
            repo, target = line.split()
            reached = None
            for r in rounds:
                code, body = r["reads"].get(repo, {}).get("refs/heads/main", ("000", ""))
                v = body.strip()
                if r["start"] >= t0 and code == "200" and v in order[repo] and order[repo][v] >= order[repo][target]:
                    reached = r["read"] - t0
                    break
            if reached is None:
                problems.append(f"{repo}: after {name}, refs/heads/main never reached {target}")
            else:
                slowest.append((reached, repo))
                if reached >= bound:
                    problems.append(f"{repo}: after {name}, refs/heads/main reached {target} only {reached:.1f} s later, "
                                    f"not within {bound:g} s")
        if slowest:
            t, repo = max(slowest)
            summary.append(f"after {name} every mirror held the origin's main of that instant within {t:.1f} s "
                           f"({repo} last; bound {bound:g} s)")
    print("; ".join(summary))
    for p in problems[:50]:
        print("PROBLEM " + p)
    return 1 if problems else 0


def analyse(lease_seconds, members_path, events_path, logs):
    lease_seconds = float(lease_seconds)
    events = []
    for log in logs:
        daemon = os.path.basename(log).split(".")[0]
        for line in open(log):
            entry = json.loads(line)
            entry["daemon"] = daemon
            events.append(entry)
    # Accepted lease writes, by repository, in the order the server took them.
    leases = {}
    for e in events:
        if e["method"] == "PUT" and e["path"].endswith("/.fdl-mirror/lease") and 200 <= e["status"] < 300:
            repo = e["path"][: -len("/.fdl-mirror/lease")]
            record = json.loads(e["body"])
            leases.setdefault(repo, []).append((e["end"], e["start"], e["daemon"], record))
    for repo in leases:
        leases[repo].sort()
    writes = outside = refused = ledger = 0
    problems = []
    for e in sorted(events, key=lambda e: e["start"]):
        path = e["path"]
        if e["method"] not in ("PUT", "POST", "DELETE"):
            continue
        if path.startswith(members_path) or path.count("/") < 3:
            continue  # the daemons' heartbeats (no repository's), or the bucket
        if path.endswith("/.fdl-mirror/lease") or path.endswith(f"/.fdl-mirror/probe-{e['daemon']}"):
            continue  # the lease itself, decided by the server; this daemon's own probe
        repo = "/".join(path.split("/")[:3])
        if e["status"] == 412:
            refused += 1
            continue
        if not 200 <= e["status"] < 300:
            continue
        writes += 1
        ledger += "/.fdl-mirror/ledger/" in path
        before = [l for l in leases.get(repo, []) if l[0] <= e["start"]]
        if not before:
            problems.append(f"{e['daemon']} wrote {e['method']} {path} at {e['start']:.3f} before any lease")
            continue
        _, asked, holder, record = before[-1]
        # An idle lease (left so after a pass, until the next) covers no write.
        ok = (holder == e["daemon"] and record["expires"] != 0 and not record.get("idle")
              and e["start"] < asked + lease_seconds)
        if not ok:
            outside += 1
            problems.append(f"{e['daemon']} wrote {e['method']} {path} at {e['start']:.3f}; the lease was "
                            f"last written by {holder} at {asked:.3f} (token {record['token']}, expires "
                            f"{record['expires']})")
    takes = {}
    for repo, written in leases.items():
        tokens = [r["token"] for _, _, _, r in written]
        if tokens != sorted(tokens):
            problems.append(f"{repo}: the fencing token went down: {tokens}")
        takes[repo] = len({(d, r["token"]) for _, _, d, r in written})

    def holder_at(repo, t):
        """Who holds the repository's lease at t, by the server's accepted writes; None."""
        before = [l for l in leases.get(repo, []) if l[0] <= t]
        if not before:
            return None
        _, asked, holder, record = before[-1]
        if record.get("idle"):  # between its holder's passes: its claim, until the expiry it wrote
            return holder if t < record["expires"] / 1000 else None
        return holder if record["expires"] != 0 and t < asked + lease_seconds else None

    # Coordination cost (issue 33, section 5): every lease write the server took, per pass
    # that ended holding the lease (each leaves it idle once): the pass's take, its renewals,
    # its rest; and the takeovers and releases besides.
    lease_writes = sum(len(w) for w in leases.values())
    rests = sum(1 for w in leases.values() for _, _, _, r in w if r.get("idle"))
    per_pass = lease_writes / max(rests, 1)
    if per_pass > 3:
        problems.append(f"{lease_writes} lease writes for {rests} passes: {per_pass:.2f} a pass, more than 3")
    summary = [f"coordination: {lease_writes} lease writes for {rests} passes ({per_pass:.2f} a pass)"]
    summary += [f"{writes} writes to {len(leases)} repositories checked ({ledger} to the ledger), {outside} outside "
               f"a lease, {refused} refused by a condition; holders per repository: "
               + ", ".join(f"{k.split('/')[-1]}={v}" for k, v in sorted(takes.items()))]
    for line in open(events_path).read().splitlines():
        kind, *args = line.split()
        if kind == "lost":
            daemon, t0, bound = args[0], float(args[1]), float(args[2])
            held = [repo for repo in leases if holder_at(repo, t0) == daemon]
            slowest = 0.0
            for repo in held:
                taken = [l for l in leases[repo] if l[0] > t0 and l[2] != daemon and l[3]["expires"] != 0]
                if not taken:
                    problems.append(f"{repo}: held by {daemon} when it was lost, and never taken by another")
                    continue
                took = taken[0][0] - t0
                slowest = max(slowest, took)
                if took >= bound:
                    problems.append(f"{repo}: taken by {taken[0][2]} {took:.1f} s after {daemon} was lost, "
                                    f"not within {bound:g} s")
            summary.append(f"{daemon} lost with {len(held)} leases, all taken over within {slowest:.1f} s "
                           f"(bound {bound:g} s)")
            if not held:
                problems.append(f"{daemon} held no lease when it was lost: nothing shown")
        elif kind == "settled":
            live, t1, t2 = int(args[0]), float(args[1]), float(args[2])
            most = -(-len(leases) // live) + 1
            instants = sorted({l[0] for w in leases.values() for l in w if t1 <= l[0] <= t2}
                              | {l[1] + lease_seconds for w in leases.values() for l in w
                                 if t1 <= l[1] + lease_seconds <= t2} | {t1, t2})
            peak = 0
            for t in instants:
                count = {}
                for repo in leases:
                    h = holder_at(repo, t)
                    if h:
                        count[h] = count.get(h, 0) + 1
                if count and max(count.values()) > most:
                    problems.append(f"at {t:.3f}, {max(count, key=count.get)} held {max(count.values())} leases, "
                                    f"more than ceil({len(leases)}/{live}) + 1 = {most}: {sorted(count.items())}")
                peak = max([peak] + list(count.values()))
            summary.append(f"{t2 - t1:.0f} s settled with {live} daemons: at most {peak} leases each "
                           f"(bound {most}, {len(instants)} instants)")
    print("; ".join(summary))
    if writes < 100:
        problems.append(f"only {writes} writes were recorded: too few to show anything")
    if ledger == 0:
        problems.append("no ledger write was recorded: the ledger went unchecked")
    for p in problems[:50]:
        print("PROBLEM " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "proxy":
        proxy(args[0], int(args[1]), args[2])
    elif command == "sample":
        sample(*args)
    elif command == "check":
        catch_ups = [args[i + 1:i + 5] for i in range(2, len(args), 5) if args[i] == "--catch-up"]
        sys.exit(check(args[0], args[1], catch_ups))
    elif command == "analyse":
        sys.exit(analyse(args[0], args[1], args[2], args[3:]))
    else:
        sys.exit(f"unknown command {command}")
