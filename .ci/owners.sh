#!/usr/bin/env bash
# The owners as judges (tests/owners/): install the pinned Claude Code, Codex and Gemini CLI
# releases from npm, each version into its own prefix under one folder, and export the paths
# the owner tests read:
#   CHATNORM_OWNER_CLAUDE=/prefix/a/.../claude:/prefix/b/.../claude   (today's first)
#   CHATNORM_OWNER_CODEX=/prefix/c/.../codex:/prefix/d/.../codex
#   CHATNORM_OWNER_GEMINI=/prefix/e/.../gemini
#   CHATNORM_OWNER_OPENCODE=/prefix/f/.../opencode
# Source it and call install_owners DIR (CI passes a temporary folder it removes at exit),
# or run it as a script with DIR to install and print the export lines.
# The pins move by hand: `npm view @anthropic-ai/claude-code version` gives today's.
# Gemini CLI 0.61.0 wrote the samples its tests resume (../shared/samples/wild/gemini_cli/).

OWNER_CLAUDE_VERSIONS=(2.1.332 2.0.76)
OWNER_CODEX_VERSIONS=(0.171.0 0.57.0)
OWNER_OPENCODE_VERSIONS=(1.18.33)  # CHATNORM_OWNER_OPENCODE (tests/formats/test_opencode_owner.py)
OWNER_GEMINI_VERSIONS=(0.61.0)

install_owners() {
  local root="$1" v prefix claude="" codex="" opencode="" gemini="" start pids=() names=() i
  command -v npm >/dev/null || { echo "owners: npm not found" >&2; return 1; }
  start=$(date +%s)
  for v in "${OWNER_CLAUDE_VERSIONS[@]}"; do
    prefix="$root/claude-$v"
    mkdir -p "$prefix"
    npm install --silent --no-audit --no-fund --prefix "$prefix" "@anthropic-ai/claude-code@$v" &
    pids+=($!); names+=("@anthropic-ai/claude-code@$v")
    claude="${claude:+$claude:}$prefix/node_modules/.bin/claude"
  done
  for v in "${OWNER_CODEX_VERSIONS[@]}"; do
    prefix="$root/codex-$v"
    mkdir -p "$prefix"
    npm install --silent --no-audit --no-fund --prefix "$prefix" "@openai/codex@$v" &
    pids+=($!); names+=("@openai/codex@$v")
    codex="${codex:+$codex:}$prefix/node_modules/.bin/codex"
  done
  for v in "${OWNER_OPENCODE_VERSIONS[@]}"; do
    prefix="$root/opencode-$v"
    mkdir -p "$prefix"
    npm install --silent --no-audit --no-fund --prefix "$prefix" "opencode-ai@$v" &
    pids+=($!); names+=("opencode-ai@$v")
    opencode="${opencode:+$opencode:}$prefix/node_modules/.bin/opencode"
  done
  for v in "${OWNER_GEMINI_VERSIONS[@]}"; do
    prefix="$root/gemini-$v"
    mkdir -p "$prefix"
    npm install --silent --no-audit --no-fund --prefix "$prefix" "@google/gemini-cli@$v" &
    pids+=($!); names+=("@google/gemini-cli@$v")
    gemini="${gemini:+$gemini:}$prefix/node_modules/.bin/gemini"
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { echo "owners: npm install ${names[$i]} failed" >&2; return 1; }
  done
  export CHATNORM_OWNER_CLAUDE="$claude" CHATNORM_OWNER_CODEX="$codex" CHATNORM_OWNER_GEMINI="$gemini"
  export CHATNORM_OWNER_OPENCODE="$opencode"
  echo "== owners: ${names[*]} installed in $(( $(date +%s) - start )) s"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  [ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
  install_owners "$1" >&2
  echo "export CHATNORM_OWNER_CLAUDE='$CHATNORM_OWNER_CLAUDE'"
  echo "export CHATNORM_OWNER_CODEX='$CHATNORM_OWNER_CODEX'"
  echo "export CHATNORM_OWNER_OPENCODE='$CHATNORM_OWNER_OPENCODE'"
  echo "export CHATNORM_OWNER_GEMINI='$CHATNORM_OWNER_GEMINI'"
fi
