"""Costs and usage against ccusage 20.0.24 (npm, installed by .ci/install.d/20-npm.sh) on the same test homes.

On every shared session the usage is equal and the cost within 1% (in fact equal). On the invented
sessions the differences the README explains are checked figure by figure: ccusage lists a flat
``agent-*.jsonl`` and a spawned Codex sub-agent as sessions of their own (tcompact counts them in
their parent), prices no long-context tier (tcompact: Anthropic's rule, the whole request at the
tier price once its prompt passes 200k tokens), and counts an unknown model as $0 (tcompact: unknown).
"""

from __future__ import annotations

import subprocess

import orjson
import pytest
from session_stores import (A, B, BEDROCK_DIFF, BEDROCK_SAME, C, D, E, FALLS_TO_ZERO, LAST_DIFFERS, SHARED, USAGE_CLAUDE,
                            USAGE_CODEX, bedrock_home, claude_fork, codex_rollout, env_for, shared_home, small_home,
                            usage_only_home)
from tools import npm_bin
from typer.testing import CliRunner

from tcompact.app import app


def ccusage(home, agent):
    binary = npm_bin("ccusage", "20.0.24", "ccusage")
    done = subprocess.run([str(binary), agent, "session", "--json", "--offline"], env={**env_for(home), "PATH":
                          "/usr/bin:/bin", "NO_COLOR": "1"}, capture_output=True, timeout=120, check=True)
    return {s["sessionId"]: s for s in orjson.loads(done.stdout)["sessions"]}


def ours(home):
    result = CliRunner().invoke(app, ["inspect", "--json"], env=env_for(home))
    assert result.exit_code == 0, result.stderr
    return {r["id"]: r for r in orjson.loads(result.stdout)["sessions"]}


def usage_of(theirs):
    return (theirs["inputTokens"], theirs["outputTokens"], theirs["cacheCreationTokens"], theirs["cacheReadTokens"])


def mine(row):
    u = row["usage"]
    return (u["input"], u["output"], u["cache_write"], u["cache_read"])


def test_every_shared_session_costs_what_ccusage_says(tmp_path):
    home = shared_home(tmp_path)
    rows, claude, codex = ours(home), ccusage(home, "claude"), ccusage(home, "codex")
    for agent, sid, _ in SHARED.values():
        if agent == "codex":  # the shared rollout has no token_count events: neither tool has usage to price
            assert sid not in codex and rows[sid]["usage"] is None and rows[sid]["cost"] is None
            continue
        theirs = claude[sid]
        assert mine(rows[sid]) == usage_of(theirs), sid
        assert rows[sid]["cost"]["usd"] == pytest.approx(theirs["totalCost"], rel=0.01), sid
        assert sorted(rows[sid]["models"]) == sorted(theirs["modelsUsed"])
    assert codex == {}


def test_the_explained_differences_on_the_invented_sessions(tmp_path):
    home = small_home(tmp_path)
    rows, claude, codex = ours(home), ccusage(home, "claude"), ccusage(home, "codex")
    # A (a nested sub-agent, which ccusage counts in its parent too): the same figures
    assert mine(rows[A]) == usage_of(claude[A])
    assert rows[A]["cost"]["usd"] == pytest.approx(claude[A]["totalCost"], rel=1e-9)
    # B: ccusage lists the flat agent-y2.jsonl as a session of its own
    both = [usage_of(claude[B]), usage_of(claude["agent-y2"])]
    assert mine(rows[B]) == tuple(map(sum, zip(*both)))
    assert rows[B]["cost"]["usd"] == pytest.approx(claude[B]["totalCost"] + claude["agent-y2"]["totalCost"], rel=1e-9)
    # C: the same usage; ccusage prices the 211k-token request at the base prices (one-hour writes at 2x base),
    # tcompact at the >200k tier of genai-prices; and ccusage counts claude-mystery-9 as $0
    assert mine(rows[C]) == usage_of(claude[C])
    base = (1000 * 3 + 2000 * 15 + 40000 * 3.75 + 10000 * 6 + 160000 * 0.3) / 1e6
    tier = (1000 * 6 + 2000 * 22.5 + 40000 * 7.5 + 10000 * 12 + 160000 * 0.6) / 1e6
    assert claude[C]["totalCost"] == pytest.approx(base, rel=1e-9)
    assert rows[C]["cost"] == {"usd": None, "priced_usd": pytest.approx(tier, rel=1e-9), "requests": 2,
                               "unpriced_requests": 1, "unpriced_models": ["claude-mystery-9"]}
    # D: ccusage lists the spawned sub-agent's rollout (E) as a session of its own; its input excludes cached tokens
    codex_d = next(s for k, s in codex.items() if k.endswith(D))
    codex_e = next(s for k, s in codex.items() if k.endswith(E))
    assert (rows[D]["usage"]["input"], rows[D]["usage"]["output"], rows[D]["usage"]["cache_read"]) == (
        codex_d["inputTokens"] + codex_e["inputTokens"], codex_d["outputTokens"] + codex_e["outputTokens"],
        codex_d["cacheReadTokens"] + codex_e["cacheReadTokens"])
    assert rows[D]["cost"]["usd"] == pytest.approx(codex_d["costUSD"] + codex_e["costUSD"], rel=1e-9)


def test_bedrock_ids_cost_what_ccusage_says(tmp_path):
    home = bedrock_home(tmp_path)
    rows, claude = ours(home), ccusage(home, "claude")
    # Haiku 4.5 costs $0.0058 for these tokens at Anthropic, Sonnet 4.5 $0.0174; a regional Bedrock id 10% more
    assert mine(rows[BEDROCK_SAME]) == usage_of(claude[BEDROCK_SAME]) == (4000, 1600, 8000, 12000)
    assert claude[BEDROCK_SAME]["totalCost"] == pytest.approx(0.00638 + 0.01914 + 0.0058 + 0.00638, rel=1e-9)
    assert rows[BEDROCK_SAME]["cost"]["usd"] == pytest.approx(claude[BEDROCK_SAME]["totalCost"], rel=1e-9)
    # in-region and apac. ids: ccusage (its LiteLLM-derived table) charges Anthropic's price, tcompact the regional
    # price of genai-prices' Bedrock table
    assert claude[BEDROCK_DIFF]["totalCost"] == pytest.approx(2 * 0.0058, rel=1e-9)
    assert rows[BEDROCK_DIFF]["cost"]["usd"] == pytest.approx(2 * 0.00638, rel=1e-9)


def test_codex_running_totals_count_as_ccusage_counts_them(tmp_path):
    # a total that falls back to 0; an event whose last usage is not the growth of the total, then that event again
    codex_rollout(tmp_path, FALLS_TO_ZERO, [((5000, 1000, 200), (5000, 1000, 200)),
                                            ((16341, 3000, 500), (11341, 2000, 300)), ((0, 0, 0), (0, 0, 0))])
    codex_rollout(tmp_path, LAST_DIFFERS, [((5000, 1000, 200), (5000, 1000, 200)), ((16341, 3000, 500), (999, 0, 1)),
                                           ((16341, 3000, 500), (999, 0, 1))], hour=9)
    same_as_ccusage(ours(tmp_path), ccusage(tmp_path, "codex"), {FALLS_TO_ZERO: (13341, 500, 3000),
                                                                 LAST_DIFFERS: (4999, 201, 1000)})


def same_as_ccusage(rows, codex, expected):
    for sid, figures in expected.items():
        theirs = next(s for k, s in codex.items() if k.endswith(sid))
        u = rows[sid]["usage"]
        assert (u["input"], u["output"], u["cache_read"]) == (
            theirs["inputTokens"], theirs["outputTokens"], theirs["cacheReadTokens"]) == figures, sid
        assert rows[sid]["cost"]["usd"] == pytest.approx(theirs["costUSD"], rel=1e-9), sid


def test_usage_only_files_count_as_ccusage_counts_them(tmp_path):
    home = usage_only_home(tmp_path)
    rows, claude, codex = ours(home), ccusage(home, "claude"), ccusage(home, "codex")
    assert mine(rows[USAGE_CLAUDE]) == usage_of(claude[USAGE_CLAUDE]) == (5000, 700, 0, 300)
    assert rows[USAGE_CLAUDE]["cost"]["usd"] == pytest.approx(claude[USAGE_CLAUDE]["totalCost"], rel=1e-9)
    assert claude[USAGE_CLAUDE]["totalCost"] == pytest.approx(0.0398, rel=1e-9)
    same_as_ccusage(rows, codex, {USAGE_CODEX: (5000, 300, 6000)})


def test_a_fork_and_its_original_count_each_request_once(tmp_path):
    # ccusage too counts each request once, but in whichever of the two files it read first (here the fork, whose
    # id sorts first); tcompact in the session it was made in: the two rows add up to the same figures
    home = small_home(tmp_path)
    fork = claude_fork(home, A, "0a0a0a0a-0000-4000-8000-00000000000f").stem
    rows, claude = ours(home), ccusage(home, "claude")
    assert mine(rows[A]) == (130, 160, 1200, 1000) and mine(rows[fork]) == (7, 30, 0, 1000)
    assert usage_of(claude[fork]) == (37, 180, 1200, 2000) and usage_of(claude[A]) == (100, 10, 0, 0)
    assert tuple(map(sum, zip(mine(rows[A]), mine(rows[fork])))) == tuple(
        map(sum, zip(usage_of(claude[A]), usage_of(claude[fork]))))
    assert rows[A]["cost"]["usd"] + rows[fork]["cost"]["usd"] == pytest.approx(
        claude[A]["totalCost"] + claude[fork]["totalCost"], rel=1e-9)
