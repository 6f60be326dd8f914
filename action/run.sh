#!/bin/sh
# The logic of the agent-block GitHub Action (action.yml at the repository root), in two phases so
# that action.yml can restore the tool cache between them:
#
#   run.sh resolve   the version to use ("latest" asked of the releases page) and the directory
#                    the binary is cached in: outputs `version` and `dir`
#   run.sh run       installs that version into that directory unless it is there already
#                    (through install.sh, or install.ps1 on Windows), puts it on GITHUB_PATH, runs
#                    the block, and writes the outputs and annotations
#
# Inputs come as INPUT_* variables (action.yml maps them): VERSION, BLOCK, SCRIPT, PROMPT, CONTEXT,
# PROJECT, ARGS (one argument per line, never split by a shell), SANDBOX (true/false),
# EXPORT_ARTIFACT (an artifact name: export the run's session), EXPORT_AS (events|messages),
# DOWNLOAD_URL (a mirror, as AGENT_BLOCK_DOWNLOAD_URL). `run` also reads AB_VERSION and AB_DIR,
# the outputs of `resolve` (it resolves again without them).
#
# Outputs (GITHUB_OUTPUT): exit-code; status (the outcome's: returned, deferred, raised, exited,
# cancelled, timed_out); outcome (the `--outcome` JSON); result (the returned value as text) and
# result-file; session (when the run opened one); export-file (with EXPORT_ARTIFACT).
# Every user value is passed as --flag=value (a prompt may start with "-"); workflow commands are
# stopped (::stop-commands::) while agent-block runs, so nothing it prints is taken for one; an
# export-artifact must be a plain name (no "/" or ".."), since it names a file.
# Exit 0 and 75 (job.defer: a neutral outcome, with a notice annotation) end the step successfully;
# anything else fails it with an error annotation carrying the error's message, and the step's
# exit code is agent-block's.
#
# POSIX sh plus jq (on every GitHub-hosted runner), checked with shellcheck; tests/release/action_test.ts
# runs both phases against a fake release server with a fake GITHUB_OUTPUT.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo_dir=$(cd "$here/.." && pwd)

die() {
  # An error annotation and a failed step (exit 2: the action was used wrongly or could not start).
  printf '::error title=agent-block action::%s\n' "$(escape_data "$*")"
  exit 2
}

# Workflow-command data: %, CR and LF escaped (https://docs.github.com/actions, workflow commands).
escape_data() {
  printf '%s' "$1" | awk 'BEGIN { ORS = "" } { gsub(/%/, "%25"); gsub(/\r/, "%0D"); if (NR > 1) print "%0A"; print }'
}

# One output, in the delimiter form (any text, several lines included).
put_output() { # NAME VALUE
  delim="ab_eof_$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  { printf '%s<<%s\n' "$1" "$delim" && printf '%s\n' "$2" && printf '%s\n' "$delim"; } >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
}

# The same for a file's content, exactly (no newline added when it ends in one).
put_output_file() { # NAME FILE
  delim="ab_eof_$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  {
    printf '%s<<%s\n' "$1" "$delim"
    cat "$2"
    if [ -s "$2" ] && [ "$(tail -c 1 "$2" | od -An -c | tr -d ' ')" != '\n' ]; then printf '\n'; fi
    printf '%s\n' "$delim"
  } >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
}

windows=0
case $(uname -s) in MINGW* | MSYS* | CYGWIN* | Windows_NT) windows=1 ;; esac

releases_base() {
  if [ -n "${INPUT_DOWNLOAD_URL:-}" ]; then
    printf '%s' "${INPUT_DOWNLOAD_URL%/}"
  else
    printf 'https://github.com/%s/releases' "$(action_repo)"
  fi
}

action_repo() {
  if [ -n "${AB_ACTION_REPOSITORY:-}" ]; then printf '%s' "$AB_ACTION_REPOSITORY"; else printf '%s' "${GITHUB_REPOSITORY:-agent-block/agent-block}"; fi
}

# Sets `version`: INPUT_VERSION, or for "latest" the release the releases page redirects to.
resolve_version() {
  version=${INPUT_VERSION:-latest}
  version=${version#v}
  if [ "$version" = latest ]; then
    # The releases page redirects .../latest to .../tag/v<X>.
    url=$(curl -fsSL -o /dev/null -w '%{url_effective}' "$(releases_base)/latest") ||
      die "cannot ask $(releases_base)/latest for the latest release"
    version=${url##*/tag/v}
    case $version in
    '' | *[!0-9A-Za-z.+-]* | [!0-9]*) die "cannot tell the latest release from $url" ;;
    esac
  fi
  case $version in
  '' | *[!0-9A-Za-z.+-]* | [!0-9]*) die "version must be 'latest' or a release version like 0.2.0, got '${INPUT_VERSION:-}'" ;;
  esac
}

cache_dir() { # VERSION
  root=${RUNNER_TOOL_CACHE:-${HOME:?}/.agent-block/action-cache}
  # Mixed form (C:/...) on Windows: both this shell and actions/cache read it.
  if [ "$windows" = 1 ] && command -v cygpath >/dev/null 2>&1; then root=$(cygpath -m "$root"); fi
  printf '%s/agent-block/%s/%s' "$root" "$1" "$(uname -m)"
}

phase_resolve() {
  resolve_version
  dir=$(cache_dir "$version")
  put_output version "$version"
  put_output dir "$dir"
  echo "agent-block $version, cached in $dir"
}

install_binary() { # VERSION DIR BIN
  if [ -x "$3" ] && [ "$("$3" --version 2>/dev/null | sed -n 1p)" = "agent-block $1" ]; then
    echo "agent-block $1: using the cached binary in $2"
    return
  fi
  echo "agent-block $1: installing into $2"
  if [ "$windows" = 1 ]; then
    AGENT_BLOCK_INSTALL_DIR=$(cygpath -w "$2") AGENT_BLOCK_DOWNLOAD_URL=$(releases_base) \
      pwsh -NoProfile -NonInteractive -File "$(cygpath -w "$repo_dir/install.ps1")" -Version "$1" ||
      die "the installer failed (install.ps1 -Version $1)"
  else
    AGENT_BLOCK_INSTALL_DIR=$2 AGENT_BLOCK_DOWNLOAD_URL=$(releases_base) sh "$repo_dir/install.sh" --version "$1" ||
      die "the installer failed (install.sh --version $1)"
  fi
  [ -x "$3" ] || die "the installer left no $3"
}

phase_run() {
  command -v jq >/dev/null 2>&1 || die "jq is needed (it is on every GitHub-hosted runner)"
  if [ -n "${AB_VERSION:-}" ]; then version=$AB_VERSION; else resolve_version; fi
  dir=${AB_DIR:-$(cache_dir "$version")}
  exe=
  if [ "$windows" = 1 ]; then exe=.exe; fi
  bin="$dir/agent-block$exe"
  install_binary "$version" "$dir" "$bin"
  if [ -n "${GITHUB_PATH:-}" ]; then printf '%s\n' "$dir" >>"$GITHUB_PATH"; fi

  if [ -n "${INPUT_BLOCK:-}" ] && [ -n "${INPUT_SCRIPT:-}" ]; then die "give block or script, not both"; fi
  # Every user value goes as --flag=value: a prompt starting with "-" (an issue title) is a value,
  # never taken for an option.
  if [ -n "${INPUT_BLOCK:-}" ]; then
    set -- "--block=$INPUT_BLOCK"
  elif [ -n "${INPUT_SCRIPT:-}" ]; then
    set -- "--script=$INPUT_SCRIPT"
  else
    die "give block (a registered block's name) or script (a Lua file)"
  fi
  project=${INPUT_PROJECT:-.}
  set -- "$@" "--project=$project"
  if [ -n "${INPUT_PROMPT:-}" ]; then set -- "$@" "--prompt=$INPUT_PROMPT"; fi
  if [ -n "${INPUT_CONTEXT:-}" ]; then set -- "$@" "--context=$INPUT_CONTEXT"; fi
  if [ -n "${INPUT_EXPORT_ARTIFACT:-}" ]; then
    # an artifact name, not a path: it names a file under the work directory
    case $INPUT_EXPORT_ARTIFACT in
    . | .. | *[!A-Za-z0-9._-]*)
      die "export-artifact must be a name of letters, digits, '.', '_' and '-' (no '/' or '..'), got '$INPUT_EXPORT_ARTIFACT'"
      ;;
    *..*) die "export-artifact must be a name (no '..'), got '$INPUT_EXPORT_ARTIFACT'" ;;
    esac
  fi
  case ${INPUT_SANDBOX:-false} in
  true) set -- "$@" --sandbox ;;
  false | '') ;;
  *) die "sandbox must be true or false, got '$INPUT_SANDBOX'" ;;
  esac
  tmp_root=${RUNNER_TEMP:-${TMPDIR:-/tmp}}
  if [ "$windows" = 1 ]; then tmp_root=$(cygpath -m "$tmp_root"); fi
  work=$(mktemp -d "$tmp_root/agent-block-action.XXXXXX")
  run_label="gha-${GITHUB_RUN_ID:-local}-${GITHUB_RUN_ATTEMPT:-1}-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
  set -- "$@" --label "action_run=$run_label" --result "$work/result" --outcome "$work/outcome.json"
  # One extra argument per line of INPUT_ARGS, taken as is.
  if [ -n "${INPUT_ARGS:-}" ]; then
    printf '%s\n' "$INPUT_ARGS" >"$work/args"
    while IFS= read -r arg || [ -n "$arg" ]; do
      arg=$(printf '%s' "$arg" | tr -d '\r')
      if [ -n "$arg" ]; then set -- "$@" "$arg"; fi
    done <"$work/args"
  fi

  # Workflow commands stop around the run: a message the block raises (or anything it prints)
  # holding "::error::" or "::add-mask::" is log text, not a command. The token is random, so
  # nothing the run prints can end the pause early.
  pause="ab-pause-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  printf '::stop-commands::%s\n' "$pause"
  warn_value=
  warn_later=
  echo "agent-block $*"
  code=0
  "$bin" "$@" || code=$?

  put_output exit-code "$code"
  if [ -s "$work/outcome.json" ]; then
    put_output_file outcome "$work/outcome.json"
    status=$(jq -r '.status' "$work/outcome.json")
  else
    status=none # the run never started (a bad command line, a missing script)
  fi
  put_output status "$status"
  if [ -f "$work/result" ]; then
    put_output result-file "$work/result"
    if jq -e 'has("value_base64")' "$work/outcome.json" >/dev/null 2>&1; then
      warn_value="the returned value is not UTF-8 text: read it from the result-file output"
      put_output result ""
    else
      put_output_file result "$work/result"
    fi
  fi

  if [ -n "${INPUT_EXPORT_ARTIFACT:-}" ]; then
    session=$("$bin" knl sessions "--project=$project" "--label=action_run=$run_label" --json --limit 1 2>/dev/null |
      jq -r '.id' 2>/dev/null || true)
    if [ -n "$session" ]; then
      put_output session "$session"
      export_file="$work/export/${INPUT_EXPORT_ARTIFACT}.jsonl"
      mkdir -p "$work/export"
      if "$bin" knl export "--project=$project" "--session=$session" "--as=${INPUT_EXPORT_AS:-events}" >"$export_file"; then
        put_output export-file "$export_file"
      else
        warn_later="knl export of session $session failed"
      fi
    else
      warn_later="the run recorded no session (runs that use the kernel, such as agent.run, do): nothing to export"
    fi
  fi

  printf '::%s::\n' "$pause" # workflow commands again: the annotations below are ours
  if [ -n "$warn_value" ]; then printf '::warning title=agent-block::%s\n' "$warn_value"; fi
  if [ -n "$warn_later" ]; then printf '::warning title=agent-block::%s\n' "$(escape_data "$warn_later")"; fi

  case $code in
  0) ;;
  75)
    reason=$(jq -r '.reason // "deferred"' "$work/outcome.json" 2>/dev/null || echo deferred)
    printf '::notice title=agent-block deferred::%s\n' "$(escape_data "$reason")"
    ;;
  *)
    if [ "$status" = raised ]; then
      message=$(jq -r '.message' "$work/outcome.json")
    elif [ "$status" != none ]; then
      message="the run ended $status ($(jq -c 'del(.version)' "$work/outcome.json"))"
    else
      message="agent-block exited $code before the run started (see the log)"
    fi
    printf '::error title=agent-block failed (exit %s)::%s\n' "$code" "$(escape_data "$message")"
    exit "$code"
    ;;
  esac
}

case ${1:-} in
resolve) phase_resolve ;;
run) phase_run ;;
*)
  echo "usage: run.sh resolve|run" >&2
  exit 2
  ;;
esac
