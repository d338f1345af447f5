"""inspect with no PATH: the sessions of a test home, their rows, the selectors and the group-bys (exact values)."""

from __future__ import annotations

import orjson
import pytest
from session_stores import (A, B, C, D, E, FALLS_TO_ZERO, HAIKU, OPUS, SONNET, USAGE_CLAUDE, USAGE_CODEX, claude_fork,
                            codex_rollout,
                            env_for, project_folder, shared_home, small_home, usage_only_home)
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.errors import TcompactError
from tcompact.sessions import make_selector, one_session, session_files


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return small_home(tmp_path_factory.mktemp("home"))


def run(home, *args):
    result = CliRunner().invoke(app, list(args), env=env_for(home))
    return result


def doc(home, *args):
    result = run(home, "inspect", "--json", *args)
    assert result.exit_code == 0, result.stderr
    return orjson.loads(result.stdout)


def ids(home, *args):
    return [r["id"] for r in doc(home, *args)["sessions"]]


def cost(usd, priced=None, requests=0, unpriced=0, models=()):
    return {"usd": usd, "priced_usd": usd if priced is None else priced, "requests": requests,
            "unpriced_requests": unpriced, "unpriced_models": list(models)}


def test_every_session_is_a_row_newest_first_with_its_figures(home):
    d = doc(home, "--timezone", "UTC")
    assert d["view"] == "sessions" and d["timezone"] == "UTC"
    assert d["prices"] == {"package": "genai-prices", "version": "0.2.3"}
    rows = {r["id"]: r for r in d["sessions"]}
    assert list(rows) == [D, C, B, A]
    app_folder = home / ".claude" / "projects" / project_folder("/home/dev/app")
    assert rows[A]["files"] == [str(app_folder / f"{A}.jsonl"), str(app_folder / A / "subagents" / "agent-x1.jsonl")]
    assert rows[B]["files"] == [str(app_folder / f"{B}.jsonl"), str(app_folder / "agent-y2.jsonl")]
    day = home / ".codex" / "sessions" / "2026" / "01" / "09"
    assert rows[D]["files"] == [str(day / f"rollout-2026-01-09T08-00-00-{D}.jsonl"),
                                str(day / f"rollout-2026-01-09T08-00-02-{E}.jsonl")]
    expected = {  # id: agent, project, first, last, models, messages, tool calls, usage, cost
        D: ("codex", "/home/dev/app", "2026-01-09T08:00:00.000+00:00", "2026-01-09T08:00:06.100+00:00",
            ["gpt-5.1-codex"], 6, 1, (3, 5100, 310, 0, 6000), cost(0.010225, requests=3)),
        C: ("claude", "/home/dev/lib", "2026-01-08T12:00:00.000+00:00", "2026-01-08T12:10:05.000+00:00",
            ["claude-mystery-9", SONNET], 4, 0, (2, 1010, 2010, 50000, 160000),
            cost(None, 0.567, 2, 1, ["claude-mystery-9"])),
        B: ("claude", "/home/dev/app", "2026-01-06T23:30:00.000+00:00", "2026-01-07T00:30:05.000+00:00",
            [OPUS], 6, 0, (3, 58, 107, 10, 4000), cost(0.0050275, requests=3)),
        A: ("claude", "/home/dev/app", "2026-01-05T10:00:00.000+00:00", "2026-01-05T10:05:00.000+00:00",
            [SONNET, HAIKU], 6, 1, (3, 130, 160, 1200, 1000), cost(0.00729, requests=3)),
    }
    for sid, (agent, project, first, last, models, messages, calls, usage, price) in expected.items():
        r = rows[sid]
        assert (r["agent"], r["project"], r["first_activity"], r["last_activity"], r["models"]) == \
            (agent, project, first, last, models)
        assert (r["messages"], r["tool_calls"], r["transcripts"]) == (messages, calls, 2 if sid != C else 1)
        assert r["usage"] == dict(zip(("requests", "input", "output", "cache_write", "cache_read"), usage),
                                  copied_requests=0)
        assert r["cost"] == price
    assert d["totals"]["usage"] == {"requests": 11, "input": 6298, "output": 2587, "cache_write": 51210,
                                    "cache_read": 171000}
    assert d["totals"]["cost"] == cost(None, 0.5895425, 11, 1, ["claude-mystery-9"])
    assert d["not_transcripts"] == [] and d["errors"] == []


def test_counted_figures_are_those_of_inspect_on_the_files(home):
    rows = doc(home)["sessions"]
    for r in rows:
        files = orjson.loads(run(home, "inspect", "--json", *r["files"]).stdout)["files"]
        ts = [t for f in files for t in f["transcripts"]]
        assert r["tokens"] == sum(t["tokens"]["total"] for t in ts)
        main = next(t for t in ts if t["kind"] == "main")
        assert r["context"] == {"tokens": main["window"]["tokens"], "context_window": main["window"]["context_window"],
                                "utilisation": main["window"]["utilisation"]}


@pytest.mark.parametrize(("args", "expected"), [
    (("--agent", "codex"), [D]),
    (("--agent", "claude"), [C, B, A]),
    (("--project", "/home/dev/lib"), [C]),
    (("--project", "/home/dev"), [D, C, B, A]),
    (("--since", "20260107", "--timezone", "UTC"), [D, C, B]),
    (("--since", "20260107", "--timezone", "America/New_York"), [D, C]),  # B ended at 19:30 on the 6th there
    (("--until", "2026-01-06", "--timezone", "UTC"), [B, A]),
    (("--since", "2026-01-08T12:05:00Z", "--until", "2026-01-08T12:06:00+00:00"), [C]),  # overlapping activity
    (("--last", "2"), [D, C]),
    (("--last", "2", "--agent", "claude", "--since", "20260106", "--timezone", "UTC"), [C, B]),
])
def test_selectors_give_exactly_these_sessions(home, args, expected):
    assert ids(home, *args) == expected


def test_the_library_api_resolves_selectors_to_session_files(home):
    paths = session_files(make_selector(agent="claude", last=2), env=env_for(home))
    folder = home / ".claude" / "projects"
    assert paths == [folder / project_folder("/home/dev/lib") / f"{C}.jsonl",
                     folder / project_folder("/home/dev/app") / f"{B}.jsonl"]


def test_one_session_is_the_store_session_of_a_path_or_the_one_the_selector_names(home, tmp_path):
    env = env_for(home)
    main = home / ".claude" / "projects" / project_folder("/home/dev/app") / f"{B}.jsonl"
    assert one_session(main, make_selector(), env=env).id == B
    assert one_session(None, make_selector(session="c3"), env=env).id == C
    loose = tmp_path / "loose.jsonl"
    loose.write_bytes(main.read_bytes())

    def error(path, **selector):
        with pytest.raises(TcompactError) as exc:
            one_session(path, make_selector(**selector), env=env)
        return str(exc.value)

    assert error(loose) == (f"{loose}: this file is not a session of the Claude Code or Codex stores on this machine — "
                            "name a stored session with --session ID (see `tcompact inspect`)")
    assert error(None) == ("name the session: a PATH, or --session ID (or --session last) — `tcompact inspect` lists "
                           "the sessions on this machine")
    assert error(None, project="/home/dev/app") == (f"3 sessions match ({D[:8]}, {B[:8]}, {A[:8]}); this command "
                                                    "works on one — name it with --session ID or --session last")


def test_project_is_the_directory_or_below_it_relative_to_the_current_one(home, monkeypatch, tmp_path):
    monkeypatch.chdir("/")
    assert ids(home, "--project", "home/dev/app") == [D, B, A]
    assert ids(home, "--project", "/home/dev/ap") == []  # a prefix of a name is no folder


def test_session_names_one_session_in_detail(home):
    d = doc(home, "--session", "a1b")
    assert [f["path"].rsplit("/", 1)[1] for f in d["files"]] == [f"{B}.jsonl", "agent-y2.jsonl"]
    assert d["session"]["id"] == B and d["session"]["cost"] == cost(0.0050275, requests=3)
    assert doc(home, "--session", "last")["session"]["id"] == D
    result = run(home, "inspect", "--session", "a1")
    assert result.exit_code == 2
    assert result.stderr == (f"Error: --session a1 matches 2 sessions ({B}, {A}) — give more characters of the id\n")
    result = run(home, "inspect", "--session", "zz")
    assert (result.exit_code, result.stderr) == (2, "Error: no session id starts with 'zz' (4 session(s) searched) "
                                                    "— run `tcompact inspect` to list the sessions and their ids\n")


def test_group_by_project_day_and_model(home):
    d = doc(home, "--group-by", "project")
    assert [(g["key"], g["sessions"], g["usage"]["requests"], g["cost"]["usd"], g["cost"]["priced_usd"])
            for g in d["groups"]] == [("/home/dev/app", 3, 9, 0.0225425, 0.0225425), ("/home/dev/lib", 1, 2, None, 0.567)]
    app_group = d["groups"][0]
    assert app_group["usage"] == {"requests": 9, "input": 5288, "output": 577, "cache_write": 1210, "cache_read": 11000}
    assert app_group["messages"] == 18 and app_group["tool_calls"] == 2
    assert [(g["key"], g["sessions"]) for g in doc(home, "--group-by", "day", "--timezone", "UTC")["groups"]] == [
        ("2026-01-09", 1), ("2026-01-08", 1), ("2026-01-07", 1), ("2026-01-05", 1)]
    assert [g["key"] for g in doc(home, "--group-by", "day", "--timezone", "America/New_York")["groups"]] == [
        "2026-01-09", "2026-01-08", "2026-01-06", "2026-01-05"]
    models = doc(home, "--group-by", "model")["groups"]
    assert [(g["key"], g["sessions"], g["usage"]["requests"], g["cost"]["usd"]) for g in models] == [
        (SONNET, 2, 3, 0.57414), ("gpt-5.1-codex", 1, 3, 0.010225), (OPUS, 1, 3, 0.0050275), (HAIKU, 1, 1, 0.00015),
        ("claude-mystery-9", 1, 1, None)]
    assert models[0]["usage"] == {"requests": 3, "input": 1030, "output": 2150, "cache_write": 51200,
                                  "cache_read": 161000}


def test_group_by_tool(home):
    d = doc(home, "--group-by", "tool")
    rows = {g["key"]: (g["sessions"], g["calls"], g["results"], g["errors"]) for g in d["groups"]}
    assert rows == {"Bash": (1, 1, 1, 0), "shell": (1, 1, 1, 0)}
    assert d["totals"]["calls"] == 2 and d["totals"]["sessions"] == 4


def test_no_cost_leaves_cost_and_prices_out(home):
    d = doc(home, "--no-cost")
    assert d["prices"] is None and all("cost" not in r for r in d["sessions"]) and "cost" not in d["totals"]


def test_terminal_view_shows_the_rows_the_cost_and_the_price_table(home):
    result = run(home, "inspect", "--timezone", "UTC")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Sessions on this machine, newest first (times in UTC)"
    row_c = next(x for x in lines if "c3c3c3c3" in x)
    assert "/home/dev/lib" in row_c and "2026-01-08 12:00–12:10" in row_c and "$0.57 + unknown" in row_c
    assert "$0.0073" in next(x for x in lines if "a1a1a1a1" in x)
    assert lines[-1] == ("Cost: provider-reported usage priced with genai-prices 0.2.3 (offline table); "
                         "no price for claude-mystery-9 (shown as unknown)")


@pytest.mark.parametrize(("args", "error"), [
    (("sample.jsonl", "--agent", "claude"), "Error: PATH and the session selectors"),
    (("--timezone", "Mars/Olympus"), "Error: --timezone: unknown time zone 'Mars/Olympus'"),
    (("--since", "2026-13-45"), "Error: --since: cannot read '2026-13-45' as a date"),
    (("--group-by", "week"), "Error: --group-by: unknown grouping 'week'"),
    (("--last", "0"), "Error: --last must be 1 or more, not 0"),
    (("--agent", "gemini"), "Error: --agent must be claude or codex, not 'gemini'"),
    (("--since", "20260110", "--until", "20260101"), "Error: --since 20260110 is after --until 20260101"),
    (("--session", "a1", "--last", "2"), "Error: --session and --last exclude each other"),
])
def test_bad_selectors_are_one_error_line(home, args, error):
    result = run(home, "inspect", *args)
    assert result.exit_code == 2 and result.stderr.startswith(error) and result.stderr.count("\n") == 1


def test_a_filter_that_matches_nothing_is_an_empty_listing(home):
    d = doc(home, "--since", "20300101", "--timezone", "UTC")
    assert d["sessions"] == [] and d["groups"] is None and d["errors"] == [] and d["not_transcripts"] == []
    assert d["totals"] == {"sessions": 0, "messages": 0, "tool_calls": 0, "tokens": 0, "usage": None, "cost": None}
    assert doc(home, "--agent", "codex", "--project", "/srv", "--group-by", "project")["groups"] == []
    result = run(home, "inspect", "--until", "20200101", "--timezone", "UTC")
    assert (result.exit_code, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines[0] == "Sessions on this machine, newest first (times in UTC)"
    assert next(x for x in lines if "sessions" in x and "│" in x).split("│")[1].strip() == "0 sessions"
    # an unknown --session stays an error, and a command that works on one session needs one
    result = run(home, "inspect", "--session", "zz", "--since", "20300101")
    assert (result.exit_code, result.stderr) == (2, "Error: no session id starts with 'zz' (0 session(s) searched) "
                                                    "— run `tcompact inspect` to list the sessions and their ids\n")
    result = run(home, "compact", "--since", "20300101", "--fork", "-c", "truncate")
    assert (result.exit_code, result.stderr) == (2, "Error: no session matches --since 20300101 (4 session(s) on this "
                                                    "machine) — run `tcompact inspect` to list the sessions\n")


def test_inspect_file_and_the_sessions_view_read_codex_usage_alike(tmp_path):
    # two requests, then a running total that falls back to 0 (as a resumed Codex reports it): one reading for both
    path = codex_rollout(tmp_path, FALLS_TO_ZERO, [((5000, 1000, 200), (5000, 1000, 200)),
                                                   ((16341, 3000, 500), (11341, 2000, 300)), ((0, 0, 0), (0, 0, 0))])
    (row,) = doc(tmp_path)["sessions"]
    assert row["usage"] == {"requests": 2, "input": 13341, "output": 500, "cache_write": 0, "cache_read": 3000,
                            "copied_requests": 0}
    assert doc(tmp_path, "--session", "019b")["session"]["usage"] == row["usage"]
    report = orjson.loads(run(tmp_path, "inspect", str(path), "--json").stdout)
    usage = report["files"][0]["transcripts"][0]["provider_usage"]
    assert {k: usage[k] for k in ("source", "events", "requests", "last_context_tokens", "last_line")} == {
        "source": "codex", "events": 3, "requests": 2, "last_context_tokens": 11341, "last_line": 6}
    assert usage["total"] == {"input_tokens": 16341, "cached_input_tokens": 3000, "output_tokens": 500,
                              "reasoning_output_tokens": 0, "total_tokens": 16841}
    assert usage["total"]["input_tokens"] - usage["total"]["cached_input_tokens"] == row["usage"]["input"]
    lines = run(tmp_path, "inspect", str(path)).stdout.splitlines()
    assert "Provider usage (codex, 2 requests from 3 token_count events): input 16,341 (cached 3,000), output 500; " \
           "last request input 11,341" in lines


def test_a_session_with_usage_and_no_message_is_listed_with_its_usage_and_cost(tmp_path):
    rows = {r["id"]: r for r in doc(usage_only_home(tmp_path))["sessions"]}
    assert list(rows) == [USAGE_CLAUDE, USAGE_CODEX]
    claude, codex = rows[USAGE_CLAUDE], rows[USAGE_CODEX]
    assert (claude["messages"], claude["transcripts"], claude["context"]) == (0, 0, None)
    assert claude["usage"] == {"requests": 3, "input": 5000, "output": 700, "cache_write": 0, "cache_read": 300,
                               "copied_requests": 0}
    # the cost a line recorded (costUSD) is its cost; the line without one is priced: 2,000 × $3 + 100 × $15 per MTok
    assert claude["cost"] == cost(pytest.approx(0.0123 + 0.02 + 0.0075, rel=1e-12), requests=3)
    assert claude["models"] == [SONNET]
    assert codex["usage"] == {"requests": 2, "input": 5000, "output": 300, "cache_write": 0, "cache_read": 6000,
                              "copied_requests": 0}
    assert codex["cost"]["usd"] == pytest.approx(0.01, rel=1e-12)
    assert doc(tmp_path)["not_transcripts"] == []
    detail = doc(tmp_path, "--session", "e5e5")  # in detail: no transcript to show, the row with its usage
    assert (detail["files"], detail["session"]["usage"], detail["session"]["cost"]) == ([], claude["usage"],
                                                                                       claude["cost"])
    assert [x["path"] for x in detail["not_transcripts"]] == claude["files"]
    result = run(tmp_path, "inspect", "--session", "019b")
    assert result.exit_code == 0, result.stderr
    assert "Provider usage of the session: input 5,000, output 300, cache w 0, cache r 6,000; cost $0.01" in \
        result.stdout.splitlines()


A_OWN = {"requests": 3, "input": 130, "output": 160, "cache_write": 1200, "cache_read": 1000, "copied_requests": 0}


@pytest.mark.parametrize("marked", [False, True])
def test_a_fork_counts_only_what_it_adds_and_the_original_keeps_its_usage(tmp_path, marked):
    # forks whose ids sort before the original's, with the original's times (the tie that gave them its usage)
    home = small_home(tmp_path)
    adds = claude_fork(home, A, "0a0a0a0a-0000-4000-8000-00000000000f", marked=marked)
    bare = claude_fork(home, A, "0b0b0b0b-0000-4000-8000-00000000000e", marked=marked, reply=False)
    rows = {r["id"]: r for r in doc(home)["sessions"]}
    assert rows[A]["usage"] == A_OWN and rows[A]["cost"] == cost(0.00729, requests=3)
    assert rows[adds.stem]["usage"] == {"requests": 1, "input": 7, "output": 30, "cache_write": 0, "cache_read": 1000,
                                        "copied_requests": 2}
    assert rows[bare.stem]["usage"] == {"requests": 0, "input": 0, "output": 0, "cache_write": 0, "cache_read": 0,
                                        "copied_requests": 2}
    assert rows[bare.stem]["cost"] is None
    # the same without the original in the listing, and in the detailed view of each
    assert doc(home, "--session", adds.stem[:4])["session"]["usage"] == rows[adds.stem]["usage"]
    assert doc(home, "--session", A[:4])["session"]["usage"] == A_OWN
    assert [(r["id"], r["usage"]) for r in doc(home, "--last", "1")["sessions"]] == [
        (adds.stem, rows[adds.stem]["usage"])]
    # no usage column shows 0 for "none": a fork that added no request shows "—"
    line = next(x for x in run(home, "inspect").stdout.splitlines() if bare.stem[:8] in x)
    assert [c.strip() for c in line.split("│")[10:15]] == ["—"] * 5  # input, output, cache w, cache r, cost


def _live_home(tmp_path):
    """small_home while Claude Code writes: A's file ends in a half-written line (no newline), B's has two bad lines."""
    home = small_home(tmp_path)
    folder = home / ".claude" / "projects" / project_folder("/home/dev/app")
    a, b = folder / f"{A}.jsonl", folder / f"{B}.jsonl"
    with a.open("ab") as fh:
        fh.write(b'{"parentUuid":"a-a2","isSidechain":false,"type":"assistant","message":{"id":"msg_A3","usage":'
                 b'{"input_tokens":5')
    lines = b.read_bytes().splitlines(keepends=True)
    lines[1:1] = [b'{"parentUuid":"b-u1","type":"user","mess\n']  # line 2: broken JSON
    lines[3:3] = [b'[1, 2]\n']  # line 4: JSON, but no record
    b.write_bytes(b"".join(lines))
    return home, a, b


@pytest.mark.parametrize("skip", [(), ("--skip-bad-lines",)])
def test_a_live_session_does_not_break_the_sessions_view(tmp_path, skip):
    home, a, b = _live_home(tmp_path)
    d = doc(home, *skip)
    rows = {r["id"]: r for r in d["sessions"]}
    assert list(rows) == [D, C, B, A] and d["errors"] == []
    assert rows[A]["usage"] == A_OWN  # read without its unfinished line
    assert rows[B]["usage"]["requests"] == 3 and rows[B]["messages"] == 6  # its good lines all read
    assert d["skipped_lines"] == [
        {"path": str(b), "line": 2, "reason": "not valid JSON (unexpected control character in string at column 41)"},
        {"path": str(b), "line": 4, "reason": "expected a JSON object, got an array"},
        {"path": str(a), "line": 6, "reason": "the last line is cut off (truncated JSON)"}]
    result = run(home, "inspect", *skip)
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        f"Warning: {b}: skipped 2 bad line(s) (2, 4); line 2: not valid JSON (unexpected control character in string at column 41)",
        f"{a}: line 6 is not finished (the session is being written): read without it"]
    # in detail, the same
    result = run(home, "inspect", "--session", A[:8], "--json", *skip)
    assert result.exit_code == 0, result.stderr
    detail = orjson.loads(result.stdout)
    assert detail["session"]["usage"] == A_OWN
    assert detail["files"][0]["skipped_lines"] == [{"line": 6, "reason": "the last line is cut off (truncated JSON)"}]


def test_a_machine_without_sessions_says_so(tmp_path):
    result = run(tmp_path, "inspect")
    assert (result.exit_code, result.stderr) == (
        2, f"Error: no Claude Code or Codex sessions found (looked in {tmp_path}/.claude/projects, "
           f"{tmp_path}/.codex/sessions) — give a PATH, or set CLAUDE_CONFIG_DIR / CODEX_HOME to where your "
           "sessions are\n")


def test_the_shared_sessions_laid_out_as_the_agents_keep_them(tmp_path):
    home = shared_home(tmp_path)
    rows = {r["id"]: r for r in doc(home)["sessions"]}
    assert list(rows) == ["019e1695-0522-7c83-8b39-0dd379793f80", "c7d3d95c-57f0-4359-8f4b-926a9bef5a3f",
                          "3fe1b6bc-dbd0-4320-b980-4f147befa187", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"]
    assert [r["project"] for r in rows.values()] == ["/Users/Sample_User/naya", "/tmp/tmpqwh7888i",
                                                      "/Users/user/repo", "/path/to/Demo"]
    codex = rows["019e1695-0522-7c83-8b39-0dd379793f80"]
    assert (codex["usage"], codex["cost"], codex["models"]) == (None, None, [])  # no token_count events recorded
    assert (codex["messages"], codex["tool_calls"]) == (62, 38)
    demo = rows["5c0375b4-57a5-4f26-b12d-d022ee4e51b7"]
    assert (demo["transcripts"], demo["messages"], demo["tool_calls"]) == (3, 45, 21)  # two sub-agents inside
    assert demo["usage"] == {"requests": 20, "input": 129, "output": 3629, "cache_write": 47747, "cache_read": 324259,
                             "copied_requests": 0}
    assert demo["first_activity"].startswith("2025-09-07") and demo["models"] == ["claude-sonnet-4-20250514"]


def test_every_sessions_json_key_is_in_the_readme_schema(home):
    import re

    from conftest import REPO

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("### Sessions `--json` schema")
    schema = readme[start: readme.index("\n## ", start)]
    keys: set[str] = set()

    def walk(value):
        if isinstance(value, dict):
            for k, v in value.items():
                keys.add(k)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for group in ("session", "project", "model", "tool"):
        walk(doc(home, "--group-by", group))
    assert sorted(k for k in keys if not re.search(rf'"{re.escape(k)}"', schema)) == []


@pytest.mark.parametrize(("args", "error"), [
    (("--html", "r.html"), "--html shows one session in detail"),
    (("--transcript", "main"), "--transcript shows one session in detail"),
    (("--html", "r.html", "--transcript", "main"), "--html and --transcript show one session in detail"),
])
def test_options_of_one_session_without_one_name_only_themselves(home, args, error):
    # issue 23 item 21: `inspect --html FILE` with no PATH named a --transcript that was never given
    result = run(home, "inspect", *args)
    assert (result.exit_code, result.stderr) == (2, f"Error: {error} — name it with --session ID (or --session "
                                                    "last)\n")
