#!/usr/bin/env bash
# The work of the composite action in action.yml, kept here so it runs (and is tested)
# without GitHub. Inputs come as environment variables:
#
#   INPUT_POLICY     policy file for `omniladder check` (required)
#   INPUT_CONFIG     settings file: --config for check (overrides the policy's own config)
#                    and for the compare plan; empty: the policy's config / ./omniladder.toml
#   INPUT_COMPARE    a saved plan to compare a fresh plan with (`plan --compare`); empty: none
#   INPUT_AUTO_ID    the auto id of the compare plan (default auto/thrifty)
#   INPUT_JUNIT      where the JUnit report goes (default omniladder-junit.xml)
#   OMNILADDER       the omniladder executable (default: omniladder on PATH)
#   GITHUB_STEP_SUMMARY, GITHUB_OUTPUT   set by GitHub; unset: no summary, no outputs
#
# Exit status: 2 if any command could not answer, else 1 if any answered "no", else 0
# (omniladder's own codes). Both commands always run, and the summary gets both.
set -uo pipefail

omniladder=${OMNILADDER:-omniladder}
policy=${INPUT_POLICY:-}
config=${INPUT_CONFIG:-}
compare=${INPUT_COMPARE:-}
auto_id=${INPUT_AUTO_ID:-auto/thrifty}
junit=${INPUT_JUNIT:-omniladder-junit.xml}
summary=${GITHUB_STEP_SUMMARY:-/dev/null}
outputs=${GITHUB_OUTPUT:-/dev/null}

# The view written to the job summary (and the log): markdown tables. Make this line
#   view=()
# to write the plain text view inside a fenced block instead (see summarize below).
view=(--format markdown)

if [ -z "$policy" ]; then
  echo "omniladder action: the policy input is required" >&2
  exit 2
fi
config_args=()
if [ -n "$config" ]; then config_args=(--config "$config"); fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# summarize TITLE STATUS FILE [ERRFILE]: one section of the job summary; the one-line
# reasons omniladder gave on stderr (why it answered "no", or could not answer) come first.
summarize() {
  {
    printf '## %s: %s\n\n' "$1" "$2"
    if [ -n "${4:-}" ] && grep -Eq '^omniladder: (exit 1|error):' "$4"; then
      grep -E '^omniladder: (exit 1|error):' "$4" | sed 's/^/> /; s/$/  /'
      printf '\n'
    fi
    if [ ${#view[@]} -eq 0 ]; then
      printf '```text\n'
      cat "$3"
      printf '```\n\n'
    else
      cat "$3"
      printf '\n'
    fi
  } >>"$summary"
}

# status CODE: the word for an omniladder exit code.
status() {
  case "$1" in
    0) echo "pass" ;;
    1) echo "fail" ;;
    *) echo "error (exit $1)" ;;
  esac
}

# The policy check, with its JUnit report (its folder made if need be); the view also goes
# to the log.
mkdir -p -- "$(dirname -- "$junit")"
"$omniladder" check "$policy" "${config_args[@]}" --junit "$junit" "${view[@]}" \
  2>"$scratch/check.err" | tee "$scratch/check.txt"
check_code=${PIPESTATUS[0]}
cat "$scratch/check.err" >&2
summarize "omniladder check $policy" "$(status "$check_code")" "$scratch/check.txt" \
  "$scratch/check.err"
echo "check-exit-code=$check_code" >>"$outputs"
echo "junit=$junit" >>"$outputs"

compare_code=0
if [ -n "$compare" ]; then
  "$omniladder" plan "$auto_id" "${config_args[@]}" --compare "$compare" "${view[@]}" \
    2>"$scratch/compare.err" | tee "$scratch/compare.txt"
  compare_code=${PIPESTATUS[0]}
  cat "$scratch/compare.err" >&2
  summarize "omniladder plan $auto_id --compare $compare" \
    "$(status "$compare_code" | sed 's/^pass$/no change/; s/^fail$/changed/')" \
    "$scratch/compare.txt" "$scratch/compare.err"
  echo "compare-exit-code=$compare_code" >>"$outputs"
fi

if [ "$check_code" -ge 2 ] || [ "$compare_code" -ge 2 ]; then
  exit 2
elif [ "$check_code" -ne 0 ] || [ "$compare_code" -ne 0 ]; then
  exit 1
fi
exit 0
