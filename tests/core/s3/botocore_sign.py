#!/usr/bin/python3
"""Signs requests with botocore's S3SigV4Auth (or SigV4Auth for other services), for the
differential test of core/s3/sigv4 (tests/core/s3/sigv4_botocore_test.cpp).

Run it with Debian's /usr/bin/python3: Debian 12's `awscli` package (AWS CLI v2) carries
botocore inside it as awscli/botocore, importable as the top-level `botocore` only once
`awscli` is imported (awscli installs an import alias; importing awscli.botocore.auth by
that name fails on a circular import).

Input, argv[1]: a JSON array of requests, each an object with
  method, scheme, host, raw_path (the decoded path; encoded here as botocore's S3
  serializer does) or path (already encoded), query ([[name, value], ...] decoded),
  headers ([[name, value], ...]), payload (the x-amz-content-sha256 value),
  amz_date, region, service, token (null or a session token), and optionally
  access_key and secret_key (the fixed ones below otherwise).
Output, stdout: a JSON array of {path, authorization, canonical_request, string_to_sign}.
Exits 2, with the reason on stderr, when botocore cannot be imported.
"""

import datetime
import json
import os
import sys
import types
from urllib.parse import quote

# The default credentials; sigv4_botocore_test.cpp uses the same.
ACCESS_KEY = "AKIDEXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

try:
    import awscli  # noqa: F401  (installs the `botocore` alias for awscli.botocore)
    import botocore
    import botocore.auth
    import botocore.awsrequest
    import botocore.credentials
    import botocore.utils
except ImportError as e:
    sys.stderr.write(f"botocore_sign.py: cannot import awscli's botocore under {sys.executable}: {e}"
                     " (install the Debian package awscli)\n")
    sys.exit(2)


def signer_class(base, payload):
    """`base` with its payload hash fixed to the caller's (botocore hashes the body)."""
    class fixed_payload(base):
        def payload(self, request):
            return payload

        def canonical_request(self, request):
            self.last_canonical_request = super().canonical_request(request)
            return self.last_canonical_request

        def string_to_sign(self, request, canonical_request):
            self.last_string_to_sign = super().string_to_sign(request, canonical_request)
            return self.last_string_to_sign
    return fixed_payload


def fixed_clock(amz_date):
    """A stand-in for botocore.auth's `datetime` module whose utcnow() is `amz_date`."""
    at = datetime.datetime.strptime(amz_date, botocore.auth.SIGV4_TIMESTAMP)

    class clock(datetime.datetime):
        @classmethod
        def utcnow(cls):
            return at
    return types.SimpleNamespace(datetime=clock)


def sign(case):
    if "raw_path" in case:
        # How botocore's rest serializer encodes a greedy key label: quote(key, safe='/~').
        path = botocore.utils.percent_encode(case["raw_path"], safe="/~")
    else:
        path = case["path"]
    url = f"{case['scheme']}://{case['host']}{path}"
    query = [(name, value) for name, value in case["query"]]
    params = None
    if len({name for name, _ in query}) == len(query):
        params = dict(query)  # botocore's own encoding of request params
    elif query:
        # botocore's params are a dict, so repeated names go in the URL, encoded the way
        # _canonical_query_string_params would encode them.
        url += "?" + "&".join(f"{quote(n, safe='-_.~')}={quote(v, safe='-_.~')}" for n, v in query)
    request = botocore.awsrequest.AWSRequest(method=case["method"], url=url, params=params)
    for name, value in case["headers"]:
        request.headers[name] = value  # HTTPHeaders appends, so a repeated name stays repeated
    if case["service"] != "s3":
        # Plain SigV4Auth does not add x-amz-content-sha256; we always do, and botocore
        # signs it (and uses it as the payload line) when it is present.
        request.headers["X-Amz-Content-SHA256"] = case["payload"]
    base = botocore.auth.S3SigV4Auth if case["service"] == "s3" else botocore.auth.SigV4Auth
    creds = botocore.credentials.Credentials(case.get("access_key", ACCESS_KEY),
                                             case.get("secret_key", SECRET_KEY), case.get("token"))
    auth = signer_class(base, case["payload"])(creds, case["service"], case["region"])
    botocore.auth.datetime = fixed_clock(case["amz_date"])
    auth.add_auth(request)
    return {
        "path": path,
        "authorization": request.headers["Authorization"],
        "canonical_request": auth.last_canonical_request,
        "string_to_sign": auth.last_string_to_sign,
    }


def main():
    # The argument's bytes as given, whatever the locale: json reads UTF-8 bytes itself.
    cases = json.loads(os.fsencode(sys.argv[1]))
    json.dump([sign(case) for case in cases], sys.stdout, ensure_ascii=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
