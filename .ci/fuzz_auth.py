"""Schemathesis hook for .ci/fuzz-api: signs the fuzzer in as the admin, and again whenever the
server answers 401. Fuzzed writes take access away (D39 revokes the admin's older tokens, for
example when a policy is detached from the admin), and without signing in again every later
request of the run would meet only the 401 of a revoked token."""

import os

import requests
import schemathesis

BASE = os.environ["PHARMAPAY_FUZZ_BASE"]
EMAIL = os.environ["PHARMAPAY_FUZZ_EMAIL"]
PASSWORD = os.environ["PHARMAPAY_FUZZ_PASSWORD"]


@schemathesis.auth(refresh_interval=None, retry_on=[401])
class AdminToken:
    def get(self, case, context):
        answer = requests.post(f"{BASE}/api/auth/login", json={"email": EMAIL, "password": PASSWORD}, timeout=30)
        answer.raise_for_status()
        return answer.json()["token"]

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"
