#!/usr/bin/env python3
"""Tools of daemon_ha_test.sh: see the subcommands.

proxy LISTEN_PORT_FILE UPSTREAM_PORT LOG
    An HTTP proxy in front of the S3 server for one daemon, recording every exchange as a
    JSON line (start and end times, method, path, status; a lease write's body too). It
    forwards requests as they are (SigV4 signs the Host header the daemon sent, which the
    server checks as it receives it) and answers with the server's status, headers and
    body. Writes the port it listens on to LISTEN_PORT_FILE.

sample ENDPOINT BUCKET KEYS_FILE REPOS OUT STOP_FILE
    Until STOP_FILE exists, reads every mirror's refs/heads/main straight from the server
    (REPOS: comma-separated prefixes) and checks that it never moves back (version ids are
    UUIDv7s, ordered by time) and never names a version whose version.json is absent.
    Writes one line per sample round and one per problem (PROBLEM ...) to OUT.

analyse LEASE_SECONDS LOG...
    Reads the proxies' logs: every write (PUT, POST, DELETE) a daemon made to a repository,
    other than to its lease, must have started while that daemon held the repository's
    lease, as the lease writes the server accepted say (the last one before the write
    names the daemon, is not a release, and was made less than LEASE_SECONDS earlier).
    Prints a summary; exits 1 with the offending writes when any is outside.
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


def sample(endpoint, bucket, keys_file, repos, out_path, stop_file):
    keys = dict(line.split(" = ", 1) for line in open(keys_file).read().splitlines() if " = " in line)
    auth = ["--aws-sigv4", "aws:amz:us-east-1:s3", "--user", f"{keys['access_key_id']}:{keys['secret_access_key']}",
            "-H", "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"]
    repos = repos.split(",")
    seen = {}
    out = open(out_path, "a", buffering=1)
    rounds = 0
    work = os.path.dirname(out_path)
    while not os.path.exists(stop_file):
        files = [os.path.join(work, f"sample-{i}") for i in range(len(repos))]
        for f in files:
            if os.path.exists(f):
                os.remove(f)
        command = ["curl", "-s", "--no-progress-meter", "-Z", "--max-time", "5"] + auth  # -Z: all at once
        for repo, f in zip(repos, files):
            command += ["-o", f, f"{endpoint}/{bucket}/{repo}/refs/heads/main"]
        subprocess.run(command, check=False)
        checks = []
        for repo, f in zip(repos, files):
            text = open(f).read().strip() if os.path.exists(f) else ""
            if len(text) != 36 or "<" in text:
                continue  # not there yet (an S3 error document), or not read this round
            before = seen.get(repo)
            if before is not None and text < before:
                out.write(f"PROBLEM {repo}: refs/heads/main moved back from {before} to {text}\n")
            seen[repo] = max(text, before or text)
            checks.append((repo, text))
        if checks:
            command = ["curl", "-s", "--no-progress-meter", "-Z", "--max-time", "5", "-I", "-w", "%{url_effective} %{http_code}\n"] + auth
            urls = {}
            for repo, v in checks:  # each URL its own -o: one -o serves one URL
                url = f"{endpoint}/{bucket}/{repo}/versions/{v}/version.json"
                urls[url] = (repo, v)
                command += ["-o", "/dev/null", url]
            answered = subprocess.run(command, capture_output=True, text=True, check=False).stdout.splitlines()
            codes = dict(line.rsplit(" ", 1) for line in answered if " " in line)
            for url, (repo, version) in urls.items():
                code = codes.get(url, "none")
                if code != "200":
                    out.write(f"PROBLEM {repo}: refs/heads/main names {version}, whose version.json answers {code}\n")
        rounds += 1
        out.write(f"round {rounds} {len(checks)}\n")
        time.sleep(0.2)


def analyse(lease_seconds, logs):
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
    writes = outside = refused = 0
    problems = []
    for e in sorted(events, key=lambda e: e["start"]):
        if e["method"] not in ("PUT", "POST", "DELETE") or "/.fdl-mirror/" in e["path"]:
            continue
        if e["path"].count("/") < 3 or e["path"].split("/")[2] == "members":
            continue  # the bucket, or the daemons' heartbeats (no repository's)
        repo = "/".join(e["path"].split("/")[:3])
        if e["status"] == 412:
            refused += 1
            continue
        if not 200 <= e["status"] < 300:
            continue
        writes += 1
        before = [l for l in leases.get(repo, []) if l[0] <= e["start"]]
        if not before:
            problems.append(f"{e['daemon']} wrote {e['method']} {e['path']} at {e['start']:.3f} before any lease")
            continue
        _, asked, holder, record = before[-1]
        ok = holder == e["daemon"] and record["expires"] != 0 and e["start"] < asked + lease_seconds
        if not ok:
            outside += 1
            problems.append(f"{e['daemon']} wrote {e['method']} {e['path']} at {e['start']:.3f}; the lease was "
                            f"last written by {holder} at {asked:.3f} (token {record['token']}, expires "
                            f"{record['expires']})")
    takes = {}
    for repo, written in leases.items():
        tokens = [r["token"] for _, _, _, r in written]
        if tokens != sorted(tokens):
            problems.append(f"{repo}: the fencing token went down: {tokens}")
        takes[repo] = len({(d, r["token"]) for _, _, d, r in written})
    print(f"{writes} writes to {len(leases)} repositories checked, {outside} outside a lease, "
          f"{refused} refused by a condition; holders per repository: "
          + ", ".join(f"{k.split('/')[-1]}={v}" for k, v in sorted(takes.items())))
    if writes < 100:
        problems.append(f"only {writes} writes were recorded: too few to show anything")
    for p in problems[:50]:
        print("PROBLEM " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "proxy":
        proxy(args[0], int(args[1]), args[2])
    elif command == "sample":
        sample(*args)
    elif command == "analyse":
        sys.exit(analyse(args[0], args[1:]))
    else:
        sys.exit(f"unknown command {command}")
