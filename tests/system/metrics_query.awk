# Reads a Prometheus text exposition (what the daemon's /metrics served) for the daemon system
# tests (daemon_lib.sh); plain POSIX awk, so that a query costs no interpreter start-up. A
# selector is a metric name and labels, as in PromQL but with = only:
# 'fdl_mirror_passes_total{repo="alpha",result="ok"}'. The labels given must all match, others
# may be present; the name may be left out ('{repo="beta"}': any metric).
#
#   awk -f metrics_query.awk -v command=value -v selector=S FILE
#       the one matching sample's value; exit 1 when none, 2 when several
#   awk -f metrics_query.awk -v command=check -v selector=S -v op=OP -v want=N FILE
#       exit 0 when the one matching sample compares so (OP: == != < <= > >=), 1 when not or absent
#   awk -f metrics_query.awk -v command=count -v selector=S FILE    how many samples match
#   awk -f metrics_query.awk -v command=list -v selector=S FILE     the matching samples

# labels_of(TEXT, OUT): reads `k="v",k2="v2"` into OUT[k]; returns how many, -1 when malformed.
function labels_of(text, out,    n, key, value, c) {
    n = 0
    for (key in out)
        delete out[key]
    while (1) {
        sub(/^[ ,]+/, "", text)
        if (text == "")
            return n
        if (!match(text, /^[a-zA-Z_][a-zA-Z0-9_]*[ ]*=[ ]*"/))
            return -1
        key = substr(text, 1, RLENGTH - 1)
        sub(/[ ]*=[ ]*$/, "", key)
        text = substr(text, RLENGTH + 1)
        value = ""
        while (1) {
            c = substr(text, 1, 1)
            if (c == "")
                return -1
            if (c == "\\") {
                c = substr(text, 2, 1)
                value = value (c == "n" ? "\n" : c)
                text = substr(text, 3)
                continue
            }
            text = substr(text, 2)
            if (c == "\"")
                break
            value = value c
        }
        out[key] = value
        n++
    }
}

# split_sample(LINE): sets sample_name, sample_labels (the text between braces) and
# sample_value; returns 0 when LINE is not a sample.
function split_sample(line,    rest, close_at) {
    if (!match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*/))
        return 0
    sample_name = substr(line, 1, RLENGTH)
    rest = substr(line, RLENGTH + 1)
    sample_labels = ""
    if (substr(rest, 1, 1) == "{") {
        close_at = length(rest)
        while (close_at > 0 && substr(rest, close_at, 1) != "}")
            close_at--
        if (close_at == 0)
            return 0
        sample_labels = substr(rest, 2, close_at - 2)
        rest = substr(rest, close_at + 1)
    }
    split(rest, fields, " ")
    sample_value = fields[1]
    return sample_value != ""
}

function number(text) {
    if (text == "+Inf")
        return 1e308 * 10
    if (text == "-Inf")
        return -1e308 * 10
    return text + 0
}

BEGIN {
    selector_name = ""
    rest = selector
    if (match(rest, /^[a-zA-Z_:][a-zA-Z0-9_:]*/)) {
        selector_name = substr(rest, 1, RLENGTH)
        rest = substr(rest, RLENGTH + 1)
    }
    wanted_count = 0
    if (rest != "") {
        if (substr(rest, 1, 1) != "{" || substr(rest, length(rest), 1) != "}") {
            print "not a selector: " selector > "/dev/stderr"
            bad = 1
            exit 3
        }
        wanted_count = labels_of(substr(rest, 2, length(rest) - 2), wanted)
        if (wanted_count < 0) {
            print "not a selector: " selector > "/dev/stderr"
            bad = 1
            exit 3
        }
    }
    found = 0
}

/^[ \t]*#/ || /^[ \t]*$/ { next }

{
    if (!split_sample($0)) {
        print "not a sample line: " $0 > "/dev/stderr"
        bad = 1
        exit 3
    }
    if (selector_name != "" && sample_name != selector_name)
        next
    if (labels_of(sample_labels, have) < 0) {
        print "not a sample line: " $0 > "/dev/stderr"
        bad = 1
        exit 3
    }
    for (key in wanted)
        if (!(key in have) || have[key] != wanted[key])
            next
    found++
    found_value = sample_value
    found_line[found] = $0
}

END {
    if (bad)
        exit 3
    if (command == "count") {
        print found
        exit 0
    }
    if (command == "list") {
        for (i = 1; i <= found; i++)
            print found_line[i]
        exit 0
    }
    if (found > 1) {
        print found " samples match " selector > "/dev/stderr"
        exit 2
    }
    if (command == "value") {
        if (found == 0)
            exit 1
        v = number(found_value)
        if (v == int(v) && v < 1e15 && v > -1e15)
            printf "%.0f\n", v
        else
            print found_value
        exit 0
    }
    if (command == "check") {
        if (found == 0)
            exit 1
        v = number(found_value)
        w = want + 0
        if (op == "==") exit !(v == w)
        if (op == "!=") exit !(v != w)
        if (op == "<") exit !(v < w)
        if (op == "<=") exit !(v <= w)
        if (op == ">") exit !(v > w)
        if (op == ">=") exit !(v >= w)
        print "unknown comparison " op > "/dev/stderr"
        exit 3
    }
    print "unknown command " command > "/dev/stderr"
    exit 3
}
