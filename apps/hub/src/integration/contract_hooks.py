"""schemathesis hooks of contract.test.ts (loaded through SCHEMATHESIS_HOOKS).

The hub answers repeated credential failures from one address more and more slowly (up to 5 s
each, api.test.ts tests it); schemathesis sends hundreds of requests without credentials on
purpose, from one address. Each request therefore comes from an address of its own, through
X-Forwarded-For (the test's hub trusts it), so the run tests the API instead of waiting.
"""

import itertools

import schemathesis

_addresses = itertools.count(1)


@schemathesis.hook
def before_call(context, case, kwargs):
    n = next(_addresses)
    headers = dict(case.headers or {})
    headers["X-Forwarded-For"] = f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"
    case.headers = headers
