# The npm packages the real-client and third-party-reader tests drive: each version in its own
# prefix under $TCOMPACT_TOOLS_DIR/npm/<name>@<version> ('/' of a scoped name written '+'), kept
# between runs. tests/tools.py finds them there; TCOMPACT_REQUIRE_NPM makes their tests fail
# instead of skipping when one is missing.
npm_packages=(
  "@anthropic-ai/claude-code@2.0.76"   # the last JavaScript release
  "@anthropic-ai/claude-code@2.1.332"  # a native 2.1.x
  "@openai/codex@0.128.0"
  "@openai/codex@0.171.0"              # hooks (PreCompact, SessionStart compact): tests/test_real_clients_hooks.py
  "ccusage@20.0.24"
  "ccusage@18.0.11"
)
if command -v npm >/dev/null 2>&1; then
  for spec in "${npm_packages[@]}"; do
    prefix="$TCOMPACT_TOOLS_DIR/npm/${spec//\//+}"
    if [ ! -f "$prefix/.installed" ]; then
      rm -rf "$prefix"
      if npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$spec" >/dev/null; then
        touch "$prefix/.installed"
      else
        echo "warning: could not install $spec; its tests will fail" >&2
      fi
    fi
  done
else
  echo "warning: npm not found; the real-client tests will fail" >&2
fi
export TCOMPACT_REQUIRE_NPM=1
