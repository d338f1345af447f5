"""Secret redaction: every pattern redacts what it should and leaves code, hashes, ids and base64 alone."""

from __future__ import annotations

import base64
import random
import re
import uuid
from types import MappingProxyType

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tcompact.redact import PATTERNS, SECRET_KEY, redact, redact_value

OPENAI = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2
OPENAI_LEGACY = "sk-" + "a1B2c3D4e5F6g7H8i9J0" * 2 + "kL"
ANTHROPIC = "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0" * 3 + "-AbCdEfAA"
GITHUB_CLASSIC = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GITHUB_FINE = "github_pat_11ABCDEFG0" + "x" * 20 + "_" + "Y7" * 20
SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
GOOGLE = "AIzaSyD-1234567890abcdefghijklmnopqrstu"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
       ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
       "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----")

# (kind, text, expected): one positive case or more for every kind in PATTERNS.
POSITIVE = [
    ("openai_key", f"export OPENAI_API_KEY={OPENAI}", "export OPENAI_API_KEY=[REDACTED:openai_key]"),
    ("openai_key", f"key {OPENAI_LEGACY} end", "key [REDACTED:openai_key] end"),
    ("anthropic_key", f"client = Anthropic(api_key='{ANTHROPIC}')",
     "client = Anthropic(api_key='[REDACTED:anthropic_key]')"),
    ("aws_access_key_id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
     "aws_access_key_id = [REDACTED:aws_access_key_id]"),
    ("aws_access_key_id", "temp creds ASIAY34FZKBOKMUTVV7A ok", "temp creds [REDACTED:aws_access_key_id] ok"),
    ("aws_secret_access_key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "aws_secret_access_key = [REDACTED:aws_secret_access_key]"),
    ("aws_secret_access_key", '"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
     '"AWS_SECRET_ACCESS_KEY": "[REDACTED:aws_secret_access_key]"'),
    ("github_token", f"git clone https://{GITHUB_CLASSIC}@github.com/o/r.git",
     "git clone https://[REDACTED:github_token]@github.com/o/r.git"),
    ("github_token", f"GH_TOKEN={GITHUB_FINE}", "GH_TOKEN=[REDACTED:github_token]"),
    ("github_token", "token gho_" + "B1" * 18 + " and ghs_" + "C2" * 18,
     "token [REDACTED:github_token] and [REDACTED:github_token]"),
    ("slack_token", f"SLACK_BOT_TOKEN: {SLACK}", "SLACK_BOT_TOKEN: [REDACTED:slack_token]"),
    ("google_api_key", f"?key={GOOGLE}&q=1", "?key=[REDACTED:google_api_key]&q=1"),
    ("stripe_key", "stripe.api_key = 'sk_live_51H8abcdefghijklmnop'", "stripe.api_key = '[REDACTED:stripe_key]'"),
    ("stripe_key", "restricted rk_live_abcdefghij12345", "restricted [REDACTED:stripe_key]"),
    ("jwt", f"cookie session={JWT}; Path=/", "cookie session=[REDACTED:jwt]; Path=/"),
    ("authorization", "Authorization: Bearer abcdef1234567890abcdef",
     "Authorization: Bearer [REDACTED:authorization]"),
    ("authorization", 'curl -H "Authorization: Basic dXNlcjpwYXNzd29yZA==" https://api.example.com',
     'curl -H "Authorization: Basic [REDACTED:authorization]" https://api.example.com'),
    ("bearer_token", "send Bearer 0123456789abcdefABCDEF.xyz please", "send Bearer [REDACTED:bearer_token] please"),
    ("private_key", f"before\n{PEM}\nafter", "before\n[REDACTED:private_key]\nafter"),
    ("url_credentials", "DATABASE_URL=postgres://admin:hunter2@db.example.com:5432/app",
     "DATABASE_URL=postgres://[REDACTED:url_credentials]@db.example.com:5432/app"),
    ("url_credentials", "https://user:p%40ss@example.com/x", "https://[REDACTED:url_credentials]@example.com/x"),
    ("generic_secret", "password=hunter22 ok", "password=[REDACTED:generic_secret] ok"),
    ("generic_secret", 'api_key: "abcdEFGH"', 'api_key: "[REDACTED:generic_secret]"'),
    ("generic_secret", "secret=s3cr3tvalue", "secret=[REDACTED:generic_secret]"),
    ("generic_secret", "token=abc123xyz", "token=[REDACTED:generic_secret]"),
    ("generic_secret", "DB_PASSWORD='correct horse'", "DB_PASSWORD='correct horse'"),  # whitespace: not a literal
    ("generic_secret", '{"client_secret": "zzTop_42"}', '{"client_secret": "[REDACTED:generic_secret]"}'),
    ("generic_secret", "mysql --password=Secr3tPw -u root", "mysql --password=[REDACTED:generic_secret] -u root"),
]

NEGATIVE = [
    "password = request.form['password']",
    "token = get_token()",
    "api_key: str = Field(default=None)",
    "max_tokens=4096, input_tokens: 1200",
    'password: "Password"',
    "export TOKEN=$GITHUB_TOKEN",
    'headers = {"Authorization": f"Bearer {token}"}',
    "A Bearer token is sent in the Authorization header.",
    "ssh://git@github.com/owner/repo.git and git@github.com:owner/repo.git",
    "https://github.com/openai/codex/issues/25686",
    "commit 3f63cd0e2b1a4c5d6e7f8091a2b3c4d5e6f70812 (HEAD -> main)",
    "the task-runner-configuration-1234567890 file and disk-usage-2024",
    "def risk_score(task): return task.risk",
    "sk-short",
    "for (const [key, secret] of Object.entries(secrets)) { use(secret); }",
]


def test_patterns_are_an_ordered_tuple_of_kinds_and_compiled_regexes():
    assert isinstance(PATTERNS, tuple)
    kinds = [kind for kind, _ in PATTERNS]
    assert all(isinstance(p, re.Pattern) for _, p in PATTERNS)
    # specific provider keys come before the generic ones, so their kind is the one reported
    assert kinds.index("anthropic_key") < kinds.index("openai_key") < kinds.index("generic_secret")
    assert kinds.index("private_key") == 0


def test_every_pattern_has_a_positive_case():
    assert {kind for kind, _, _ in POSITIVE} == {kind for kind, _ in PATTERNS}


@pytest.mark.parametrize(("kind", "text", "expected"), POSITIVE,
                         ids=[f"{k}-{n}" for n, (k, _, _) in enumerate(POSITIVE)])
def test_positive(kind, text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("text", NEGATIVE)
def test_ordinary_text_is_untouched(text):
    assert redact(text) == text


def test_git_sha_uuid_and_hex_digests_are_untouched():
    sha = "9fceb02d0ae598e95dc970b74767f19372d61af8"
    text = f"HEAD is now at {sha}\nid={uuid.UUID(int=2**127 + 12345)}\nsha256:{'ab' * 32}"
    assert redact(text) == text


def test_base64_image_blob_is_untouched():
    blob = base64.b64encode(random.Random(7).randbytes(1500)).decode()[:2000]
    assert len(blob) == 2000
    data_uri = f'{{"type": "image_url", "image_url": {{"url": "data:image/png;base64,{blob}"}}}}'
    assert redact(blob) == blob
    assert redact(data_uri) == data_uri


def test_pem_block_is_redacted_whole_even_when_cut_off():
    assert redact(PEM) == "[REDACTED:private_key]"
    truncated = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
    assert redact(truncated) == "[REDACTED:private_key]"
    escaped = PEM.replace("\n", "\\n")  # the block inside a JSON string
    assert redact(f'{{"key": "{escaped}"}}') == '{"key": "[REDACTED:private_key]"}'


@pytest.mark.parametrize(("secret", "kind"), [
    (OPENAI, "openai_key"), (ANTHROPIC, "anthropic_key"), (GITHUB_CLASSIC, "github_token"),
    (GITHUB_FINE, "github_token"), (SLACK, "slack_token"), (GOOGLE, "google_api_key"), (JWT, "jwt"),
    ("AKIAIOSFODNN7EXAMPLE", "aws_access_key_id"), ("sk_live_51H8abcdefghijklmnop", "stripe_key"),
])
def test_a_key_right_after_an_escape_of_json_text_is_redacted(secret, kind):
    # tool output that is JSON text: a key at the start of an escaped line follows the "n" of "\n"
    text = f'{{"stdout": "keys:\\n{secret}\\tdone\\r\\n{secret}"}}'
    assert redact(text) == f'{{"stdout": "keys:\\n[REDACTED:{kind}]\\tdone\\r\\n[REDACTED:{kind}]"}}'
    assert redact(f"glued{secret}") == f"glued{secret}"  # an ordinary letter before it still glues it


def test_a_bearer_token_right_after_an_escape_is_redacted():
    assert redact('"curl -H \\"x\\"\\nBearer 0123456789abcdefABCDEF.xyz"') == \
        '"curl -H \\"x\\"\\nBearer [REDACTED:bearer_token]"'


def test_url_credentials_keep_scheme_and_host():
    assert redact("amqp://guest:guest123@rabbit.local/") == "amqp://[REDACTED:url_credentials]@rabbit.local/"
    assert redact("redis://:s3cret@cache:6379/0") == "redis://[REDACTED:url_credentials]@cache:6379/0"
    assert redact("https://user@example.com/x") == "https://user@example.com/x"  # no password, nothing secret


def test_assignment_keeps_the_name_and_quotes():
    assert redact('config = {"password": "pa55word!", "user": "bob"}') == \
        'config = {"password": "[REDACTED:generic_secret]", "user": "bob"}'
    assert redact("API_KEY=abcd1234efgh\nDEBUG=true") == "API_KEY=[REDACTED:generic_secret]\nDEBUG=true"


def test_redact_is_idempotent():
    text = "\n".join(t for _, t, _ in POSITIVE)
    once = redact(text)
    assert redact(once) == once
    assert "hunter22" not in once and OPENAI not in once and ANTHROPIC not in once


def test_redact_value_walks_nested_structures():
    value = {
        "api_key": "plain-looking-value",
        "Authorization": "Bearer x",
        "headers": {"X-Api-Key": "k", "Accept": "application/json"},
        "messages": [
            {"role": "user", "content": f"use {OPENAI} please"},
            ("tuple", "password=hunter22"),
        ],
        "max_tokens": 4096,
        "tokens": "not a secret",
        "token_count": 12,
        "empty_password": "",
        "nested": MappingProxyType({"client_secret": "abc", "note": None}),
    }
    out = redact_value(value)
    assert out == {
        "api_key": "[REDACTED:secret_field]",
        "Authorization": "[REDACTED:secret_field]",
        "headers": {"X-Api-Key": "[REDACTED:secret_field]", "Accept": "application/json"},
        "messages": [
            {"role": "user", "content": "use [REDACTED:openai_key] please"},
            ("tuple", "password=[REDACTED:generic_secret]"),
        ],
        "max_tokens": 4096,
        "tokens": "not a secret",
        "token_count": 12,
        "empty_password": "",
        "nested": {"client_secret": "[REDACTED:secret_field]", "note": None},
    }
    assert value["api_key"] == "plain-looking-value"  # the input is not modified


def test_redact_value_keeps_keys_and_non_strings():
    assert redact_value([1, 2.5, None, True, {"password": 123}]) == [1, 2.5, None, True, {"password": 123}]
    assert redact_value({OPENAI: "value"}) == {OPENAI: "value"}  # keys are kept as they are
    assert redact_value("token=abc123xyz") == "token=[REDACTED:generic_secret]"


@pytest.mark.parametrize(("key", "secret"), [
    ("api_key", True), ("OPENAI_API_KEY", True), ("password", True), ("db.password", True), ("x-api-key", True),
    ("authorization", True), ("Proxy-Authorization", True), ("client_secret", True), ("token", True),
    ("access_token", True), ("max_tokens", False), ("tokens", False), ("token_count", False), ("author", False),
    ("secretary", False), ("keyboard", False),
])
def test_secret_key_names(key, secret):
    assert bool(SECRET_KEY.match(key)) is secret


@pytest.mark.parametrize(("text", "expected"), [
    # "İ" lower-cases to two characters, so positions in the lower-cased text shift: the generic patterns then
    # run over the whole text, with the same result
    ("İstanbul: password=hunter22 ok", "İstanbul: password=[REDACTED:generic_secret] ok"),
    (f"İ {OPENAI} İ token=abc123xyz", "İ [REDACTED:openai_key] İ token=[REDACTED:generic_secret]"),
    # letters of other scripts do not glue a key to them (only ASCII token characters do)
    (f"鍵{OPENAI}です", "鍵[REDACTED:openai_key]です"),
    (f"ключ={GITHUB_CLASSIC}", "ключ=[REDACTED:github_token]"),
    # ... but ASCII ones do: a longer identifier or a key with more characters than its shape is not a key
    ("AKIAIOSFODNN7EXAMPLEX", "AKIAIOSFODNN7EXAMPLEX"),
    (f"x{ANTHROPIC}", f"x{ANTHROPIC}"),
    ("", ""),
])
def test_unicode_neighbours_and_glued_tokens(text, expected):
    assert redact(text) == expected


SECRETS = [OPENAI, OPENAI_LEGACY, ANTHROPIC, GITHUB_CLASSIC, GITHUB_FINE, SLACK, GOOGLE, JWT, "AKIAIOSFODNN7EXAMPLE",
           "sk_live_51H8abcdefghijklmnop", PEM]
WORDS = ["the", "password", "=", ":", "token", "Bearer", "Authorization:", "https://x.org", "日本語", "İstanbul", "(",
         '"', "'", ",", "key", "export", "X=", "\n", "[REDACTED", "sk-", "://", "@"]


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.sampled_from(SECRETS + WORDS), max_size=12),
       st.sampled_from([" ", "\n", "\t", '"', "'", "=", ": ", "(", "&", ";", ",", "\\n", "|", "`", "日"]))
def test_no_key_survives_next_to_any_separator_and_redacting_again_changes_nothing(parts, sep):
    text = sep.join(parts)
    once = redact(text)
    assert [secret for secret in SECRETS if secret in once] == []
    assert redact(once) == once


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.sampled_from([t for _, t, _ in POSITIVE] + NEGATIVE + WORDS), max_size=8))
def test_redacting_is_idempotent_on_any_mix_of_the_cases(parts):
    once = redact("".join(parts))
    assert redact(once) == once


def test_redact_value_fills_and_uses_the_shared_cache():
    cache: dict[str, str] = {}
    first = redact_value({"a": "password=hunter22", "b": ["password=hunter22", "plain"]}, cache)
    assert first == {"a": "password=[REDACTED:generic_secret]", "b": ["password=[REDACTED:generic_secret]", "plain"]}
    assert cache == {"password=hunter22": "password=[REDACTED:generic_secret]", "plain": "plain"}
    cache["plain"] = "taken from the cache"  # a later call with the same string reads it from there
    assert redact_value(["plain"], cache) == ["taken from the cache"]


def test_a_secret_field_already_redacted_keeps_its_label():
    assert redact_value({"api_key": "[REDACTED:openai_key]", "token": "[REDACTED]"}) == {
        "api_key": "[REDACTED:openai_key]", "token": "[REDACTED]"}
    assert redact_value({"password": ["hunter22"]}) == {"password": ["hunter22"]}  # only string values are blanked


# issue 26: two patterns were made faster; the patterns they were, to check that they redact the same.
_URL_BEFORE = re.compile(r"(?<=[A-Za-z0-9])://(?P<secret>[^\s:/?#@\"'<>\[\]]{0,256}:[^\s/?#@\"'<>]{1,256})@(?=[\w\[])")
URL_PIECES = ["https", "http", "s", "1", "-", " ", "://", "user", ":", "pa ss", "p@ss", "@", "host", "[::1]", "/path",
              "?q", "#", "\n", '"', "日", "Ω", "x" * 300, "ſ", ":://", "@@"]
PLACED_PIECES = ["aws", "AWS", "Aws", "awſ", "aWs", "_", "secret", "SECRET", "ſecret", "_access", "access", "_key",
                 "KEY", "\u212aey", "ı", " = ", "=", ":", "=>", '"', "'", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                 "+" * 40, "token", "password=", "x", " ", "\n", "日", "sk_live_", "rk_test_", "Sk_live_", "k_live_",
                 "51H8abcdefghijklmnop", "Authorization", "AUTHORIZATION", "authorızation", "Bearer", "bearer", "BEARER",
                 "Basic ", "tok3n-abcdef0123456789", "İ"]


@settings(max_examples=800, deadline=None, database=None)
@given(st.lists(st.sampled_from(PLACED_PIECES), max_size=16))
@example(["Authorization", " ", "x", " ", "authorızation", ":", " ", "Bearer", " ", "tok3n-abcdef0123456789"])
@example(["aws", "_", "secret", "_access", "_key", "=", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", " ", "awſ", "_",
          "secret", "_access", "_key", "=", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"])
def test_patterns_tried_where_their_words_start_redact_as_the_whole_pattern(parts):
    """Some patterns are tried only where the lower-case text holds their first word (those that take ſ
    and ı for s and i: in texts holding neither) — the same redaction as running them everywhere."""
    from tcompact import redact as module

    text = "".join(parts)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(module, "_SUBS", tuple((n, p, s, w if w is None or w[0] is module._GENERIC_STARTS else None)
                                          for n, p, s, w in module._SUBS))
        expected = redact(text)
    assert redact(text) == expected
