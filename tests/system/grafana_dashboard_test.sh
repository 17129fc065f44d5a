# The Grafana dashboard (systemd/fdl-mirror.grafana.json) against the real daemon: it is valid
# JSON with the structure Grafana imports (uid, title, templating variables, panels with
# targets); every panel and query reads the DS_PROMETHEUS variable; every query filters on
# $job and $instance, and on $repo where the series has a repo; every metric name a query or
# a variable uses is one the daemon exported when scraped with all its families present (a
# held version, a version published with a problem, HTTP answers and HTTP failures); and
# promtool parses every query, Grafana's variables replaced. The checker is also run on
# broken copies of the dashboard, which it must refuse.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"
dashboard=$SOURCE_DIR/systemd/fdl-mirror.grafana.json

# --- an exposition with every family ------------------------------------------------------
# population, over HTTP (requests by code): a new main whose data file is one byte longer than
# its catalog says, held (versions_held, held-since, refs behind).
mkdir -p "$work/www"
"$FDL_PUBLISHER" sample "$work/www/population" >/dev/null
stage "$work/www/population"
"$FDL_PUBLISHER" add "$work/stage" main 1000 >/dev/null
data=$(staged_new_files "$work/www/population" | grep '^\./data/')
printf 'x' >>"$work/stage/$data"
install_staged "$work/www/population"

# lake, a folder: its files.json says one row more than the catalog, and version.json has the
# edited file's digest, so the version is published with a problem (version_problems_total).
"$FDL_PUBLISHER" lake "$work/lake" >/dev/null
"$python" - "$work/lake" "$(ref_of "$work/lake" refs/heads/main)" <<'PY'
import hashlib, json, sys
root, version = sys.argv[1], sys.argv[2]
index_path = f"{root}/versions/{version}/files.json"
index = json.load(open(index_path))
first = next(iter(index["tables"].values()))["files"][0]
first["rows"] += 1
text = json.dumps(index, separators=(",", ":")).encode()
open(index_path, "wb").write(text)
record_path = f"{root}/versions/{version}/version.json"
record = json.load(open(record_path))
record["files"].update(bytes=len(text), sha256=hashlib.sha256(text).hexdigest())
open(record_path, "w").write(json.dumps(record, separators=(",", ":")))
PY

# unreachable: an HTTP origin on a port nobody listens on (request errors, kind connect).
start_nginx "$work/www"
closed=$(free_port)
cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
defaults: { interval: 1h, signatures: off }
stores:
  - { match: "http://127.0.0.1:$nginx_port/", allow_plain_http: true }
  - { match: "http://127.0.0.1:$closed/", allow_plain_http: true }
repositories:
  - { name: population, origin: "http://127.0.0.1:$nginx_port/population", mirror: $work/population-mirror }
  - { name: lake, origin: $work/lake, mirror: $work/lake-mirror }
  - { name: unreachable, origin: "http://127.0.0.1:$closed/none", mirror: $work/unreachable-mirror }
YAML
start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_versions_held{repo="population",reason="size_mismatch"}' == 1 30 "population's version held"
wait_for_series 'fdl_mirror_version_held_since_timestamp_seconds{repo="population"}' 1 10 "its held-since series"
wait_for_metric 'fdl_mirror_version_problems_total{repo="lake",kind="catalog.index_disagrees"}' == 1 30 \
  "lake's version published with a problem"
wait_for_metric 'fdl_mirror_passes_total{repo="unreachable",result="failed"}' == 1 30 "unreachable's pass failed"
expect_series 'fdl_mirror_request_errors_total{repo="unreachable",kind="connect"}' == 1 "a connect error counted"
expect_series 'fdl_mirror_requests_total{repo="population",code="200"}' '>=' 1 "HTTP answers counted"
cp "$work/metrics" "$work/exposition"
stop_daemon TERM 10
expect_clean_exit "the daemon stops"

# --- the checker ----------------------------------------------------------------------------
# check.py DASHBOARD EXPOSITION RULES: one line per check, "ok: …" or "FAIL: …"; writes each
# query, Grafana's variables replaced, as a recording rule into RULES for promtool.
cat >"$work/check.py" <<'PY'
import json, re, sys

dashboard_path, exposition_path, rules_path = sys.argv[1:4]
VAR = "DS_PROMETHEUS"
DATASOURCE_REFS = {"${%s}" % VAR, "$%s" % VAR}
# Grafana's variables, as a query would see them with every instance and repository chosen.
VALUES = {"job": "fdl-mirror", "instance": ".*", "repo": ".*", "__rate_interval": "1m",
          "__interval": "15s", "__range": "6h"}
# Not exported by the daemon, but by Prometheus itself for each target.
SYNTHETIC = {"up"}
KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
            "group_left", "group_right", "inf", "nan", "start", "end"}


def report(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)


try:
    board = json.load(open(dashboard_path))
except (OSError, ValueError) as e:
    report(False, f"{dashboard_path} is not JSON: {e}")
    sys.exit(0)
report(True, "the dashboard is JSON")

# The exposition: families by # TYPE, sample names, and the labels each family's samples carry.
types, samples, labels_of = {}, set(), {}
for line in open(exposition_path):
    if line.startswith("# TYPE "):
        _, _, name, kind = line.split()
        types[name] = kind
    elif line.strip() and not line.startswith("#"):
        name = re.match(r"[A-Za-z_:][\w:]*", line).group(0)
        samples.add(name)
        labels_of.setdefault(name, set()).update(re.findall(r'([A-Za-z_]\w*)="', line.split(" ")[0]))


def family_of(name):
    """The metric family a sample name belongs to (histogram series map to theirs)."""
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[: -len(suffix)]
        if name.endswith(suffix) and types.get(base) in ("histogram", "summary"):
            return base
    return name


# --- the structure ---
report(isinstance(board.get("uid"), str) and board["uid"] != "", f"uid is set ({board.get('uid')!r})")
report(isinstance(board.get("title"), str) and board["title"] != "", f"title is set ({board.get('title')!r})")
report(isinstance(board.get("schemaVersion"), int) and 36 <= board["schemaVersion"] <= 39,
       f"schemaVersion {board.get('schemaVersion')!r} is one Grafana 9 and 10 read (36 to 39)")
inputs = {i.get("name"): i for i in board.get("__inputs", [])}
report(inputs.get(VAR, {}).get("type") == "datasource" and inputs[VAR].get("pluginId") == "prometheus",
       f"__inputs asks for a Prometheus data source as {VAR}")
variables = {v.get("name"): v for v in board.get("templating", {}).get("list", [])}
ds_var = variables.get(VAR, {})
report(ds_var.get("type") == "datasource" and ds_var.get("query") == "prometheus",
       f"templating variable {VAR} picks a Prometheus data source")
for name in ("job", "instance", "repo"):
    v = variables.get(name, {})
    query = v.get("query")
    query = query.get("query") if isinstance(query, dict) else query
    report(v.get("type") == "query" and isinstance(query, str) and query.startswith("label_values("),
           f"templating variable {name} comes from label_values")
    report((v.get("datasource") or {}).get("uid") in DATASOURCE_REFS,
           f"templating variable {name} queries the {VAR} data source")
job_current = (variables.get("job", {}).get("current") or {}).get("value")
report(job_current == "fdl-mirror", f"job defaults to fdl-mirror (is {job_current!r})")
known_variables = set(VALUES) | set(variables)


def flatten(panels):
    for p in panels:
        yield p
        yield from flatten(p.get("panels", []))  # a collapsed row holds its panels


panels = list(flatten(board.get("panels", [])))
graphs = [p for p in panels if p.get("type") != "row"]
report(len(graphs) >= 20, f"{len(graphs)} panels besides rows, want at least 20")
ids = [p.get("id") for p in panels]
report(len(ids) == len(set(ids)) and None not in ids, "every panel has an id of its own")
report(len([p for p in panels if p.get("type") == "row"]) >= 7, "a row for each part (at least 7)")

# (where, expr, filtered) for every query: the panels' targets, which must filter on the
# variables, and the variables' label_values selectors, which need not.
queries = []
for p in graphs:
    where = f"panel {p.get('id')} {p.get('title')!r}"
    report(isinstance(p.get("gridPos"), dict) and {"x", "y", "w", "h"} <= set(p["gridPos"]), f"{where} has a gridPos")
    report((p.get("datasource") or {}).get("uid") in DATASOURCE_REFS,
           f"{where}: its datasource is the {VAR} variable (is {p.get('datasource')!r})")
    targets = p.get("targets") or []
    report(len(targets) >= 1, f"{where} has targets")
    refs = [t.get("refId") for t in targets]
    report(len(refs) == len(set(refs)) and None not in refs, f"{where}: each target has a refId of its own")
    for t in targets:
        twhere = f"{where} target {t.get('refId')}"
        if "datasource" in t:
            report((t["datasource"] or {}).get("uid") in DATASOURCE_REFS,
                   f"{twhere}: its datasource is the {VAR} variable (is {t['datasource']!r})")
        expr = t.get("expr")
        report(isinstance(expr, str) and expr.strip() != "", f"{twhere} has an expr")
        if isinstance(expr, str):
            queries.append((twhere, expr, True))
for name in ("job", "instance", "repo"):
    v = variables.get(name, {})
    query = v.get("query")
    query = query.get("query") if isinstance(query, dict) else query
    m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\s*\)\s*", query or "", re.S)
    report(m is not None, f"variable {name}: label_values(SELECTOR, LABEL)")
    if m:
        queries.append((f"variable {name}", m.group(1), False))
        label = m.group(2)
        metric = re.match(r"\s*([A-Za-z_:][\w:]*)", m.group(1)).group(1)
        report(label in ("job", "instance") or label in labels_of.get(metric, set()),
               f"variable {name}: the daemon's {metric} has the label {label}")


def substitute(expr, where):
    def value(m):
        name = m.group(1) or m.group(2) or m.group(3)
        if name not in known_variables:
            report(False, f"{where}: unknown variable ${name}")
            return "x"
        return VALUES.get(name, ".*")
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]", value, expr)


# One token at a time: strings, matcher blocks and ranges whole, so that no label name or
# regular expression is taken for a metric.
TOKEN = re.compile(r"""\s+|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`|\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}"""
                   r"""|\[[^\]]*\]|[A-Za-z_:][\w:]*|\d[\w.]*|.""", re.S)
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}


def selectors(expr):
    """(metric name, its matcher block or None) for each vector selector in expr: an identifier
    that is no keyword, no function (before "(") and no aggregation (before by or without)."""
    tokens = [t for t in TOKEN.findall(expr) if not t.isspace()]
    out, i = [], 0
    while i < len(tokens):
        t, after = tokens[i], tokens[i + 1] if i + 1 < len(tokens) else ""
        if t.startswith("{"):
            out.append((None, t))  # a selector without a name: {__name__=~…}
        elif t in GROUPING and after == "(":  # a list of labels, not of metrics
            while i < len(tokens) and tokens[i] != ")":
                i += 1
        elif re.fullmatch(r"[A-Za-z_:][\w:]*", t) and t not in KEYWORDS and after not in ("(", "by", "without"):
            if after.startswith("{"):
                out.append((t, after))
                i += 1
            else:
                out.append((t, None))
        i += 1
    return out


used = set()
rules = []
for n, (where, expr, filtered) in enumerate(queries):
    concrete = substitute(expr, where)
    found = selectors(expr)
    if not found and filtered:
        report(False, f"{where}: no metric in {expr!r}")
    for name, matchers in found:
        if name is None:
            report(False, f"{where}: a selector without a metric name ({matchers}) cannot be checked")
            continue
        if filtered:  # job and instance always, repo where the series has it
            for want in ('job="$job"', 'instance=~"$instance"'):
                report(want in (matchers or ""), f"{where}: {name} filtered on {want}")
            if name in samples or name in SYNTHETIC:  # an unknown name is reported below
                if "repo" in labels_of.get(name, set()):
                    report('repo=~"$repo"' in (matchers or ""), f'{where}: {name} filtered on repo=~"$repo"')
                else:
                    report("repo" not in (matchers or ""), f"{where}: {name} has no repo label to filter on")
        if name in SYNTHETIC:
            report(True, f"{where}: {name} (Prometheus' own)")
            continue
        family = family_of(name)
        report(family in types and name in samples,
               f"{where}: {name} is in the daemon's exposition" + (f" (family {family})" if family != name else ""))
        used.add(family)
    rules.append({"record": f"dashboard:query_{n}", "expr": concrete})

with open(rules_path, "w") as out:
    out.write("groups:\n  - name: dashboard\n    rules:\n")
    for rule in rules:
        out.write(f"      - record: {rule['record']}\n        expr: {json.dumps(rule['expr'])}\n")
report(len(rules) >= 40, f"{len(rules)} queries, want at least 40")
unused = sorted(set(types) - used)
print("note: exported families the dashboard does not show: " + (", ".join(unused) or "none"))
PY

# run_checker DASHBOARD: the checker on DASHBOARD, its lines in $work/checked and its queries in
# $work/rules.yml.
run_checker() { "$python" "$work/check.py" "$1" "$work/exposition" "$work/rules.yml" >"$work/checked" 2>&1; }

# promtool_check DESCRIPTION WANT: `promtool check rules` on the last checker's queries exits WANT.
promtool=$(find_promtool)
promtool_check() {
  if [ -z "$promtool" ]; then fail "$1: promtool not found: run scripts/setup"; return 0; fi
  expect_status "$2" "$1" -- "$promtool" check rules "$work/rules.yml"
}

# --- the shipped dashboard ---------------------------------------------------------------------
run_checker "$dashboard" || fail "the checker crashed: $(tail -n 5 "$work/checked")"
while IFS= read -r line; do
  case $line in
    "ok: "*) pass ;;
    "FAIL: "*) fail "${line#FAIL: }" ;;
    "note: "*) echo "$line" ;;
    *) fail "the checker said: $line" ;;
  esac
done <"$work/checked"
grep -q 'is in the daemon.s exposition' "$work/checked" && pass || fail "no metric name checked"
promtool_check "promtool parses every query of the dashboard" 0

# --- the checks can fail -------------------------------------------------------------------------
# broken PYTHON: the dashboard changed by PYTHON (on `d`, and `panels`, those not rows) in
# $work/broken.json, and the checker run on it.
broken() {
  "$python" -c "import json, sys
d = json.load(open(sys.argv[1]))
panels = [p for p in d['panels'] if p['type'] != 'row']
$1
json.dump(d, open(sys.argv[2], 'w'))" "$dashboard" "$work/broken.json"
  run_checker "$work/broken.json" || true
}
# expect_refused DESCRIPTION TEXT PYTHON: the checker reports a FAIL line containing TEXT on the
# dashboard changed by PYTHON.
expect_refused() {
  broken "$3"
  if grep -F 'FAIL: ' "$work/checked" | grep -qF -- "$2"; then pass; else
    fail "the checker takes a dashboard with $1"
    grep -v '^ok: ' "$work/checked" | sed 's/^/  checker: /' >&2
  fi
}
expect_refused "a metric the daemon does not export" "fdl_mirror_pending_bites is in" \
  "panels[0]['targets'][0]['expr'] = 'sum(fdl_mirror_pending_bites{job=\"\$job\",instance=~\"\$instance\",repo=~\"\$repo\"})'"
expect_refused "a metric name without the daemon's prefix" "mirror_pending_files is in" \
  "panels[0]['targets'][0]['expr'] = 'sum(mirror_pending_files{job=\"\$job\",instance=~\"\$instance\"})'"
expect_refused "a histogram series the daemon does not have" "fdl_mirror_pass_duration_seconds_total is in" \
  "panels[0]['targets'][0]['expr'] = 'rate(fdl_mirror_pass_duration_seconds_total{job=\"\$job\",instance=~\"\$instance\",repo=~\"\$repo\"}[5m])'"
expect_refused "a panel on a fixed data source" "its datasource is the DS_PROMETHEUS variable" \
  "panels[1]['datasource'] = {'type': 'prometheus', 'uid': 'P1809F7CD0C75ACF3'}"
expect_refused "a panel without a data source" "its datasource is the DS_PROMETHEUS variable" \
  "del panels[1]['datasource']"
expect_refused "a query without the repo filter" 'filtered on repo=~"$repo"' \
  "panels[0]['targets'][0]['expr'] = 'sum(fdl_mirror_pending_files{job=\"\$job\",instance=~\"\$instance\"})'"
expect_refused "a query without the job filter" 'filtered on job="$job"' \
  "panels[0]['targets'][0]['expr'] = 'process_open_fds{instance=~\"\$instance\"}'"
expect_refused "no templating variable repo" "variable repo comes from label_values" \
  "d['templating']['list'] = [v for v in d['templating']['list'] if v['name'] != 'repo']"
# An expr that names known metrics but is no PromQL: increase of an instant vector.
broken "panels[0]['targets'][0]['expr'] = 'increase(fdl_mirror_repositories{job=\"\$job\",instance=~\"\$instance\"})'"
promtool_check "promtool refuses an expr that is not PromQL" 1
expect_output "expected type range vector" "promtool names the problem"

finish
