"""inspect with no PATH: the sessions of a test home, their rows, the selectors and the group-bys (exact values)."""

from __future__ import annotations

import orjson
import pytest
from session_stores import A, B, C, D, E, HAIKU, OPUS, SONNET, env_for, project_folder, shared_home, small_home
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
    assert run(home, "inspect", "--project", "/home/dev/ap").exit_code == 2  # a prefix of a name is no folder


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
