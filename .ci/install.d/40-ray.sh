# Ray for `tcompact batch --engine ray` (tests/test_batch_ray.py): the `ray` extra of pyproject.toml, read
# from there so the pin lives in one place. The wheels are kept under $TCOMPACT_TOOLS_DIR/wheels/ray-<pin>
# and installed from there, so a later run downloads nothing. On a user's machine without Ray those
# tests skip and say why; here TCOMPACT_REQUIRE_RAY makes them fail when the install did not work.
ray_reqs="$(python3 -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["ray"]))')"
ray_wheels="$TCOMPACT_TOOLS_DIR/wheels/$(echo "$ray_reqs" | tr -c 'A-Za-z0-9.=-' '_')"
ray_start=$SECONDS
if [ ! -f "$ray_wheels/.complete" ]; then
  rm -rf "$ray_wheels"
  # shellcheck disable=SC2086
  pip download --quiet --dest "$ray_wheels" $ray_reqs && touch "$ray_wheels/.complete"
fi
# shellcheck disable=SC2086
{ [ -f "$ray_wheels/.complete" ] && pip install --quiet --no-index --find-links "$ray_wheels" $ray_reqs; } \
  || pip install --quiet $ray_reqs \
  || echo "warning: could not install $ray_reqs; the Ray tests will fail" >&2
echo "ci: installing $ray_reqs took $((SECONDS - ray_start)) s" >&2
export TCOMPACT_REQUIRE_RAY=1
