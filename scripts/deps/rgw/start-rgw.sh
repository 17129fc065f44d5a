#!/usr/bin/env bash
# The S3 server of the RGW tests (tests/support/rgw.hpp): a throwaway single-node Ceph
# (1 mon, 1 memstore OSD, no mgr) and radosgw (beast) on 127.0.0.1. Debian 12's packages
# (Ceph 16.2.15): ceph-mon ceph-osd radosgw ceph-common, installed by scripts/setup.
# docs/design.md ("Ceph RGW") says how the tests use it and how RGW differs from AWS.
# Everything lives under $BASE (default ${TMPDIR:-/tmp}/fdl-rgw); no systemd; daemons are
# started by this script (they daemonize and write pid files) and stopped by pid with
# $BASE/stop-rgw.sh.  Idempotent: if the cluster under $BASE answers S3, it only reprints
# the endpoint and keys; otherwise it stops leftovers, wipes $BASE and builds a fresh one.
# Output (stdout, shell-sourceable): S3_ENDPOINT=... S3_ACCESS_KEY=... S3_SECRET_KEY=...
# Env: BASE, RGW_PORT (default: a free port), MON_PORT (default: a free port).
set -euo pipefail
BASE=${BASE:-${TMPDIR:-/tmp}/fdl-rgw}
RUN=$BASE/run
CONF=$BASE/ceph.conf
ENVF=$BASE/s3.env
T0=$(date +%s.%N)
log() { printf '[start-rgw %6.2fs] %s\n' "$(awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN { print a - b }')" "$*" >&2; }
freeport() { /usr/bin/python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# ---- the stop script (written every time, so it exists even for a half-built cluster)
mkdir -p "$BASE"
cat > "$BASE/stop-rgw.sh" <<EOF
#!/usr/bin/env bash
# Stop the daemons of the cluster under $BASE by pid. Default signal KILL: the cluster is
# throwaway (start-rgw.sh wipes it) and a graceful TERM costs about 2 s per daemon.
# STOP_SIGNAL=TERM stops gracefully (KILL after 10 s).
RUN=$RUN
sig=\${STOP_SIGNAL:-KILL}
# running = exists and not a zombie (this VM's init reaps orphans only every ~2 s)
up() { local s; s=\$(awk '/^State:/{print \$2}' /proc/\$1/status 2>/dev/null); [ -n "\$s" ] && [ "\$s" != Z ]; }
pids=()
for f in "\$RUN"/*.pid; do [ -f "\$f" ] || continue; p=\$(cat "\$f"); up "\$p" && pids+=("\$p"); done
[ \${#pids[@]} -eq 0 ] && { echo "nothing running under $BASE"; exit 0; }
kill -"\$sig" "\${pids[@]}" 2>/dev/null
for i in \$(seq 100); do
  left=(); for p in "\${pids[@]}"; do up "\$p" && left+=("\$p"); done
  [ \${#left[@]} -eq 0 ] && break; sleep 0.1
done
[ \${#left[@]} -gt 0 ] && kill -KILL "\${left[@]}" 2>/dev/null
rm -f "\$RUN"/*.pid
echo "stopped (\$sig): \${pids[*]}"
EOF
chmod +x "$BASE/stop-rgw.sh"

# ---- already up? just reprint
if [ -f "$ENVF" ] && alive "$RUN/mon.a.pid" && alive "$RUN/osd.0.pid" && alive "$RUN/client.rgw.pid"; then
  . "$ENVF"
  if curl -s -o /dev/null -m 2 "$S3_ENDPOINT"; then cat "$ENVF"; exit 0; fi
fi

# ---- fresh cluster
"$BASE/stop-rgw.sh" >/dev/null 2>&1 || true
find "$BASE" -mindepth 1 -maxdepth 1 ! -name stop-rgw.sh -exec rm -rf {} +
mkdir -p "$RUN" "$BASE/mon.a" "$BASE/osd.0"
FSID=$(uuidgen)
MON_PORT=${MON_PORT:-$(freeport)}
RGW_PORT=${RGW_PORT:-$(freeport)}

cat > "$CONF" <<EOF
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$MON_PORT
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr1 = false
auth cluster required = none
auth service required = none
auth client required = none
keyring = $BASE/keyring
run dir = $RUN
admin socket = $RUN/\$name.asok
pid file = $RUN/\$name.pid
log file = $RUN/\$name.log
log to stderr = false
err to stderr = true
debug ms = 0/0
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0
ms async op threads = 1
ms mon client mode = crc
ms client mode = crc

[mon]
mon data = $BASE/mon.\$id
mon initial members = a
mon cluster log file = $RUN/cluster.log
mon osd down out interval = 0
# commit map changes at once instead of batching for 1 s (each rgw pool setup step is a map change)
paxos propose interval = 0.01
paxos min wait = 0.001

[osd]
osd data = $BASE/osd.\$id
osd objectstore = memstore
memstore device bytes = 4294967296
osd op num shards = 1
osd op num threads per shard = 2
osd max object name len = 2048
osd class load list = *
osd class default list = *

[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw thread pool size = 32
rgw dns name = localhost
rgw enable usage log = false
rgw dynamic resharding = false
EOF
export CEPH_CONF=$CONF
log "config written (fsid $FSID, mon :$MON_PORT, rgw :$RGW_PORT)"

# ---- mon
ceph-authtool --create-keyring "$BASE/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool "$BASE/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT]" "$BASE/monmap" >/dev/null
ceph-mon -i a --mkfs --monmap "$BASE/monmap" --keyring "$BASE/keyring"
ceph-mon -i a
log "mon started"

# ---- osd (memstore)
OSD_UUID=$(uuidgen)
OSD_ID=$(ceph --connect-timeout 20 osd new "$OSD_UUID")
[ "$OSD_ID" = 0 ] || { echo "unexpected osd id $OSD_ID" >&2; exit 1; }
ceph-osd -i 0 --mkfs --osd-uuid "$OSD_UUID" 2>/dev/null
ceph-osd -i 0
up=0; for i in $(seq 300); do ceph osd stat -f json 2>/dev/null | grep -q '"num_up_osds":1' && { up=1; break; }; sleep 0.1; done
[ $up = 1 ] || { echo "osd.0 did not come up; see $RUN/osd.0.log" >&2; exit 1; }
log "osd.0 up"

# ---- rgw
radosgw -n client.rgw
up=0; for i in $(seq 600); do curl -s -o /dev/null -m 1 "http://127.0.0.1:$RGW_PORT" && { up=1; break; }; sleep 0.1; done
[ $up = 1 ] || { echo "radosgw did not answer; see $RUN/client.rgw.log" >&2; exit 1; }
log "radosgw answers on 127.0.0.1:$RGW_PORT"

# ---- S3 user
radosgw-admin user create --uid=test --display-name=test >"$BASE/user.json"
AK=$(/usr/bin/python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["keys"][0]["access_key"])' "$BASE/user.json")
SK=$(/usr/bin/python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["keys"][0]["secret_key"])' "$BASE/user.json")
cat > "$ENVF" <<EOF
S3_ENDPOINT=http://127.0.0.1:$RGW_PORT
S3_ACCESS_KEY=$AK
S3_SECRET_KEY=$SK
S3_REGION=us-east-1
CEPH_CONF=$CONF
STOP=$BASE/stop-rgw.sh
EOF
log "user created"
cat "$ENVF"
