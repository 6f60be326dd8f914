#!/bin/sh
# Smoke test of one agent-block binary on the machine it is built for (the release workflow runs it
# on a runner of each target's platform; tests/compile_test.ts runs it when DENORT_BIN is set).
#
#   tools/smoke_test.sh BIN [VERSION]
#
# Checks, each in a fresh directory: `--version` (VERSION, when given, on its first line, and a
# commit line); a block using std.kv and sh.exec (sh.exec not on Windows: it runs /bin/sh); an MCP round
# trip against examples/echo_mcp_server.ts (run by $DENO, default the `deno` on PATH); `knl export` of the
# replay run of blocks/hello_agent.lua; `--sandbox` on Linux (SMOKE_NO_SANDBOX=1 skips it); a bad
# flag exits 2.
# POSIX sh, checked with shellcheck (tests/release/installer_test.ts).
set -eu

bin=${1:?usage: tools/smoke_test.sh BIN [VERSION]}
want=${2:-}
repo=$(cd "$(dirname "$0")/.." && pwd)
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
windows=0
case $(uname -s) in MINGW* | MSYS* | CYGWIN*) windows=1 ;; esac
# A path as the binary (a native program) reads it: C:/... on Windows (Git Bash), else as is.
native() { if [ "$windows" = 1 ]; then cygpath -m "$1"; else printf '%s' "$1"; fi; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
AGENT_BLOCK_HOME=$(native "$work/home")
export AGENT_BLOCK_HOME NO_COLOR=1
# The blocks are copied out of the checkout, as a user's own would be: a run reads nothing of it.
smoke="$work/scripts"
mkdir "$smoke"
cp "$repo/tools/smoke/"*.lua "$smoke/"

fail() {
  echo "smoke: FAILED: $*" >&2
  exit 1
}
step() { echo "smoke: $*" >&2; }

step "--version"
"$bin" --version >"$work/version.txt" || fail "--version exited $?"
cat "$work/version.txt"
first=$(sed -n 1p "$work/version.txt")
case "$first" in "agent-block "*) ;; *) fail "--version's first line is '$first'" ;; esac
if [ -n "$want" ] && [ "$first" != "agent-block $want" ]; then fail "--version says '$first', want $want"; fi
grep -q '^commit ' "$work/version.txt" || fail "--version names no commit"
grep -q '^Deno ' "$work/version.txt" || fail "--version names no Deno"
grep -q '^Lua 5\.4$' "$work/version.txt" || fail "--version names no Lua 5.4"

step "std.kv and sh.exec"
mkdir "$work/kv"
# sh.exec runs /bin/sh: not there for a native Windows program.
no_sh=0
if [ "$windows" = 1 ] || ! [ -x /bin/sh ]; then no_sh=1; fi
(cd "$work/kv" && SMOKE_NO_SH=$no_sh "$bin" -s "$(native "$smoke/kv_sh.lua")" --result out.json) || fail "the kv/sh block exited $?"
if [ "$no_sh" = 1 ]; then want_kv='{"kv":42}'; else want_kv='{"kv":42,"sh":"smoke"}'; fi
[ "$(cat "$work/kv/out.json")" = "$want_kv" ] || fail "the kv/sh block returned $(cat "$work/kv/out.json")"

step "MCP round trip"
mkdir "$work/mcp"
deno=${DENO:-$(command -v deno)} || fail "no deno to run the echo server with (set DENO)"
(cd "$work/mcp" && SMOKE_DENO="$(native "$deno")" SMOKE_ECHO_SERVER="$(native "$repo/examples/echo_mcp_server.ts")" \
  "$bin" -s "$(native "$smoke/mcp_echo.lua")" --result out.txt) || fail "the MCP block exited $?"
[ "$(cat "$work/mcp/out.txt")" = "round trip" ] || fail "the echo server answered $(cat "$work/mcp/out.txt")"

step "knl export of a replay run"
mkdir -p "$work/agent/blocks"
cp "$repo/blocks/hello_agent.lua" "$repo/blocks/hello_agent.replay.jsonl" "$work/agent/blocks/"
(cd "$work/agent" && "$bin" -b hello_agent --result out.json) || fail "hello_agent exited $?"
session=$(cd "$work/agent" && "$bin" knl sessions --json --limit 1 | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
[ -n "$session" ] || fail "knl sessions listed no session"
(cd "$work/agent" && "$bin" knl export --session "$session" --as messages >export.jsonl) || fail "knl export exited $?"
grep -q '"role":"assistant"' "$work/agent/export.jsonl" || fail "the export holds no assistant message"
grep -q 'word_count' "$work/agent/export.jsonl" || fail "the export holds no word_count tool call"

if [ "$(uname -s)" = Linux ] && [ "${SMOKE_NO_SANDBOX:-0}" = 1 ]; then
  step "--sandbox: skipped (SMOKE_NO_SANDBOX=1)"
elif [ "$(uname -s)" = Linux ]; then
  step "--sandbox"
  mkdir "$work/sandbox"
  (cd "$work/sandbox" && "$bin" --sandbox -s "$(native "$smoke/hello.lua")" --result out.txt) || fail "--sandbox run exited $?"
  [ "$(cat "$work/sandbox/out.txt")" = "ok" ] || fail "the sandboxed run returned $(cat "$work/sandbox/out.txt")"
fi

step "a bad flag exits 2"
code=0
"$bin" --no-such-flag 2>/dev/null || code=$?
[ "$code" -eq 2 ] || fail "a bad flag exited $code"

step "all passed"
