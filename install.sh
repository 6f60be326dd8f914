#!/bin/sh
# agent-block installer for Linux and macOS: downloads the prebuilt binary of this machine's
# platform from a GitHub release, checks its SHA-256 before unpacking it, and installs it.
#
#   curl -fsSL https://github.com/OWNER/REPO/releases/latest/download/install.sh | sh
#   curl -fsSL .../install.sh | sh -s -- --version 0.2.0
#   sh install.sh [--version X] [--help]
#
# --version X                 install release vX (default: the latest release)
# AGENT_BLOCK_INSTALL_DIR     where the binary goes (default: ~/.agent-block/bin)
# AGENT_BLOCK_DOWNLOAD_URL    a mirror of the releases page, laid out like GitHub's:
#                             <url>/latest/download/<file> and <url>/download/v<X>/<file>
#                             (default: https://github.com/$AGENT_BLOCK_REPO/releases)
# AGENT_BLOCK_REPO            the GitHub repository (default: the one this installer came from)
#
# Invariants: nothing is written outside a temporary directory until the archive's checksum
# matches its .sha256 file and the unpacked binary has run `--version`; the binary is then moved
# into place in one rename, so a re-install replaces it whole and a failed one leaves what was
# there. Downloads are HTTPS, except from this machine (the URL's host is 127.0.0.1, localhost or
# [::1], parsed: no userinfo); the archive's binary must be a regular file (no symlink). POSIX sh,
# checked with shellcheck (tests/release/installer_test.ts); Windows has install.ps1.
set -eu

# The release workflow writes its own repository here when it publishes this file.
DEFAULT_REPO="agent-block/agent-block"

say() { printf 'agent-block installer: %s\n' "$*" >&2; }
die() {
  printf 'agent-block installer: error: %s\n' "$*" >&2
  exit 1
}

usage() {
  cat <<'EOF'
usage: install.sh [--version X]
  --version X               install release vX (default: the latest release)
  AGENT_BLOCK_INSTALL_DIR   where the binary goes (default: ~/.agent-block/bin)
  AGENT_BLOCK_DOWNLOAD_URL  a mirror laid out like a GitHub releases page
  AGENT_BLOCK_REPO          the GitHub repository to download from
EOF
}

version=latest
while [ $# -gt 0 ]; do
  case $1 in
  --version)
    [ $# -ge 2 ] || die "--version needs a value, e.g. --version 0.2.0"
    version=$2
    shift 2
    ;;
  --version=*)
    version=${1#--version=}
    shift
    ;;
  -h | --help)
    usage
    exit 0
    ;;
  *) die "unknown argument '$1' (usage: install.sh [--version X])" ;;
  esac
done
version=${version#v}
case $version in
latest) ;;
'' | *[!0-9A-Za-z.+-]* | [!0-9]*) die "--version must be a release version like 0.2.0, got '$version'" ;;
esac

# --- which binary --------------------------------------------------------------------------------
os=$(uname -s)
arch=$(uname -m)
case $arch in
x86_64 | amd64) cpu=x86_64 ;;
aarch64 | arm64) cpu=aarch64 ;;
*) die "no prebuilt binary for the architecture '$arch' (there are x86_64 and aarch64 ones); run agent-block from source instead (see the README)" ;;
esac
case $os in
Linux)
  if command -v ldd >/dev/null 2>&1 && ldd --version 2>&1 | grep -qi musl; then
    die "this Linux uses musl libc; the prebuilt binaries need glibc. Run agent-block from source instead (see the README)"
  fi
  target="$cpu-unknown-linux-gnu"
  ;;
Darwin)
  # A shell under Rosetta reports x86_64 on Apple silicon: take the native binary.
  if [ "$cpu" = x86_64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
    cpu=aarch64
  fi
  target="$cpu-apple-darwin"
  ;;
MINGW* | MSYS* | CYGWIN* | Windows_NT) die "on Windows use install.ps1 from the same release" ;;
*) die "no prebuilt binary for the OS '$os' (there are Linux, macOS and Windows ones); run agent-block from source instead (see the README)" ;;
esac
archive="agent-block-$target.tar.xz"

# --- where from ----------------------------------------------------------------------------------
base=${AGENT_BLOCK_DOWNLOAD_URL:-https://github.com/${AGENT_BLOCK_REPO:-$DEFAULT_REPO}/releases}
base=${base%/}
not_https() { die "AGENT_BLOCK_DOWNLOAD_URL must be an https:// URL (plain http only from this machine), got '$base'"; }
case $base in
https://*) ;;
http://*)
  # The host is parsed, not matched as a prefix: the authority ends at the first / ? or #, holds
  # no userinfo (http://localhost:@other-host/ is other-host), and is a loopback name with at most
  # a numeric port.
  authority=${base#http://}
  authority=${authority%%[/?#]*}
  case $authority in
  *@*) not_https ;;
  127.0.0.1 | localhost | "[::1]") port= ;;
  127.0.0.1:* | localhost:* | "[::1]:"*) port=${authority##*:} ;;
  *) not_https ;;
  esac
  case $port in
  *[!0-9]*) not_https ;;
  esac
  ;;
*) not_https ;;
esac
if [ "$version" = latest ]; then from="$base/latest/download"; else from="$base/download/v$version"; fi

dir=${AGENT_BLOCK_INSTALL_DIR:-${HOME:?HOME is not set; set AGENT_BLOCK_INSTALL_DIR}/.agent-block/bin}

download() { # URL FILE
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 2 -o "$2" "$1" || die "cannot download $1 (curl exit $?)"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1" || die "cannot download $1 (wget exit $?)"
  else
    die "neither curl nor wget is installed"
  fi
}

sha256_of() { # FILE
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 -r "$1" | cut -d ' ' -f 1
  else
    die "no SHA-256 tool (sha256sum, shasum or openssl) to check the download with"
  fi
}

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t agent-block)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# --- download and check --------------------------------------------------------------------------
say "downloading $from/$archive"
download "$from/$archive" "$tmp/$archive"
download "$from/$archive.sha256" "$tmp/$archive.sha256"
expected=$(sed -n '1s/^\([0-9a-fA-F]\{64\}\)\([[:space:]].*\)\{0,1\}$/\1/p' "$tmp/$archive.sha256" | tr 'A-F' 'a-f')
[ -n "$expected" ] || die "$archive.sha256 does not start with a SHA-256; nothing was installed"
actual=$(sha256_of "$tmp/$archive" | tr 'A-F' 'a-f')
if [ "$actual" != "$expected" ]; then
  die "checksum mismatch for $archive: the release says $expected, the download is $actual; nothing was installed"
fi

mkdir "$tmp/unpacked"
tar -xJf "$tmp/$archive" -C "$tmp/unpacked" || die "cannot unpack $archive (tar with xz support is needed)"
new="$tmp/unpacked/agent-block-$target/agent-block"
# Only a regular file in a real directory: a symlink (to a file outside the temporary directory)
# would have the chmod and the install below act on whatever it names.
if [ -L "$tmp/unpacked/agent-block-$target" ] || [ ! -d "$tmp/unpacked/agent-block-$target" ] ||
  [ -L "$new" ] || [ ! -f "$new" ]; then
  die "$archive holds no regular file agent-block-$target/agent-block; nothing was installed"
fi
chmod 755 "$new"
out=$("$new" --version 2>&1) || die "the downloaded binary does not run on this machine ($out); nothing was installed"
got=$(printf '%s\n' "$out" | sed -n 1p)

# --- install -------------------------------------------------------------------------------------
mkdir -p "$dir" || die "cannot create $dir"
cp "$new" "$dir/.agent-block.new.$$" || die "cannot write to $dir"
mv -f "$dir/.agent-block.new.$$" "$dir/agent-block" || {
  rm -f "$dir/.agent-block.new.$$"
  die "cannot replace $dir/agent-block"
}
say "installed $got to $dir/agent-block"
case ":${PATH:-}:" in
*":$dir:"*) ;;
*) say "$dir is not on PATH; add it, e.g. in ~/.profile: export PATH=\"$dir:\$PATH\"" ;;
esac
