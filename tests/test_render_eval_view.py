"""render/eval_view.py: the eval report — chains side by side per canary kind, and one row per session — drawn at
80 columns from a fixed report."""

from __future__ import annotations

from tcompact.render.eval_view import eval_report

KINDS = ["error_line", "file_written", "user_constraint", "new_kind"]  # a kind without a label shows its name


def counts(kept, planted):
    return {"kept": kept, "planted": planted}


def summary(chain, kept, failed=0, ratio=0.31, worst=0.52, pairing=0, last=(2, 2)):
    return {"chain": chain, "failed": failed,
            "survival": {k: counts(v, 4 if k != "new_kind" else 0) for k, v in zip(KINDS, kept)},
            "overall": counts(sum(kept), 12), "ratio": ratio, "worst_ratio": worst, "pairing_violations": pairing,
            "last_request_kept": {"kept": last[0], "of": last[1]}}


def result(chain, status="ok", ratio=0.25, kept=2):
    return {"chain": chain, "status": status, "ratio": ratio,
            "survival": {"error_line": counts(kept, 2), "file_written": counts(1, 2)}}


REPORT = {"seed": 7, "per_kind": 2, "default_chain": "full", "kinds": KINDS, "chains": ["full", "truncate,dialogue"],
          "summary": [summary("full", [4, 3, 2, 0]),
                      summary("truncate,dialogue", [1, 4, 4, 0], failed=1, ratio=None, worst=None, pairing=3,
                              last=(1, 2))],
          "files": [{"path": "/d/a.jsonl", "canaries": [{}] * 6,
                     "results": [result("full"), result("truncate,dialogue", "failed")]},
                    {"path": "/d/b.jsonl", "canaries": [{}] * 6,
                     "results": [result("full", ratio=1.0, kept=0), result("truncate,dialogue", ratio=0.05)]}]}
CHAINS = """\
Kept verbatim, per chain

                full (default)   truncate,dialogue (1 failed)
 ────────────────────────────────────────────────────────────
 error line               100%                            25%
 file written              75%                           100%
 constraint                50%                           100%
 new_kind                    —                              —
 all kinds                 75%                            75%

 tokens                   0.31                              —
 worst                    0.52                              —
 pairing                     0                              3
 last request              2/2                            1/2

tokens: after / before, all sessions together; worst: the highest of one session; pairing: tool calls or results left without their partner; last request: sessions whose last real request is kept verbatim
"""


def test_several_sessions_get_a_row_each(screen):
    eval_report(REPORT)
    assert screen() == (
        "Canaries: 12 planted in 2 session(s), 2 of each kind per session, seed 7; every chain compacted with "
        "--now\n" + CHAINS + """\
Per session: share kept and tokens after / before (sessions listed below)

 #       full   truncate,dialogue
 ────────────────────────────────
 1    75% .25              failed
 2   25% 1.00             75% .05

1: /d/a.jsonl
2: /d/b.jsonl
""")


def test_one_session_has_no_table_of_sessions(screen):
    eval_report({**REPORT, "files": REPORT["files"][:1]})
    assert screen() == ("Canaries: 6 planted in 1 session(s), 2 of each kind per session, seed 7; every chain "
                        "compacted with --now\n" + CHAINS)


SEVEN = ["truncate", "offload", "micro", "current-round", "dialogue", "round-level", "full"]
WIDE = {**REPORT, "kinds": ["error_line"], "chains": SEVEN,
        "summary": [summary(c, [4 - i % 3], ratio=0.1 * (i + 1), worst=1.0) for i, c in enumerate(SEVEN)],
        "files": [{"path": f"/d/{n}.jsonl", "canaries": [{}] * 2,
                   "results": [result(c, ratio=1.0 if (n + i) % 2 else 0.5, kept=2) for i, c in enumerate(SEVEN)]}
                  for n in (1, 2)]}


def test_every_chain_fits_80_columns_with_names_broken_between_words(screen):
    eval_report(WIDE)
    assert screen() == """\
Canaries: 4 planted in 2 session(s), 2 of each kind per session, seed 7; every chain compacted with --now
Kept verbatim, per chain
                                        current-            round-       full
              truncate  offload  micro     round  dialogue   level  (default)
─────────────────────────────────────────────────────────────────────────────
error line        100%      75%    50%      100%       75%     50%       100%
all kinds          33%      25%    17%       33%       25%     17%        33%

tokens            0.10     0.20   0.30      0.40      0.50    0.60       0.70
worst             1.00     1.00   1.00      1.00      1.00    1.00       1.00
pairing              0        0      0         0         0       0          0
last request       2/2      2/2    2/2       2/2       2/2     2/2        2/2
tokens: after / before, all sessions together; worst: the highest of one session; pairing: tool calls or results left without their partner; last request: sessions whose last real request is kept verbatim
Per session: share kept and tokens after / before (sessions listed below)
                                 current-              round-
#  truncate   offload     micro     round  dialogue     level      full
───────────────────────────────────────────────────────────────────────
1  75% 1.00   75% .50  75% 1.00   75% .50  75% 1.00   75% .50  75% 1.00
2   75% .50  75% 1.00   75% .50  75% 1.00   75% .50  75% 1.00   75% .50
1: /d/1.jsonl
2: /d/2.jsonl
"""


def test_a_wide_terminal_keeps_every_name_on_one_line(screen, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    eval_report(WIDE)
    shown = screen().splitlines()
    assert shown[3] == ("                truncate   offload   micro   current-round   dialogue   round-level   "
                        "full (default)")
    assert shown[-7] == " #   truncate    offload      micro   current-round   dialogue   round-level       full"
    assert shown[-4] == " 2    75% .50   75% 1.00    75% .50        75% 1.00    75% .50      75% 1.00    75% .50"
