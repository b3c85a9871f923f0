#!/usr/bin/env bash
# Run the test suite on CPython 3.13, the runtime the Lambda functions run on (infra/), on a
# machine that has only its distribution's Python: CPython's source is taken from Debian's
# package pool (the upstream tarball, as Debian repackages it: `.orig.tar.xz`), checked against
# the sha256 its `.dsc` lists, built once into .cache/python3.13 and used for .venv313.
#
#   devtools/py313.sh build      # download, verify, build and install the interpreter (once)
#   devtools/py313.sh venv       # build, then .venv313 with the project and its `dev` extra
#   devtools/py313.sh test ARGS  # venv, then pytest ARGS (default: tests/unit)
#
# Every CPU-heavy step runs under `nice -n 19`: the machine is shared. See docs/commands.md.
set -euo pipefail

PY_VERSION=3.13.5
# From python3.13_3.13.5-2.dsc (Checksums-Sha256), deb.debian.org/debian/pool/main/p/python3.13/.
PY_SHA256=93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640
PY_URL=${PY313_URL:-http://deb.debian.org/debian/pool/main/p/python3.13/python3.13_${PY_VERSION}.orig.tar.xz}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=$ROOT/.cache
PREFIX=$CACHE/python3.13
PYTHON=$PREFIX/bin/python3.13
VENV=$ROOT/.venv313
TARBALL=$CACHE/python3.13_${PY_VERSION}.orig.tar.xz
NICE="nice -n 19"
# Debian packages the build needs for ssl, ctypes, sqlite3, lzma, bz2, zlib and readline.
BUILD_DEPS=(build-essential pkg-config libssl-dev libffi-dev zlib1g-dev libbz2-dev libsqlite3-dev liblzma-dev libreadline-dev)

say() { printf 'py313: %s\n' "$*" >&2; }

ensure_build_deps() {
    local missing=()
    for pkg in "${BUILD_DEPS[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" = 0 ]; then
        say "installing ${missing[*]} (apt-get)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" ||
            { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"; }
    else
        say "missing ${missing[*]}; install them with: sudo apt-get install -y ${missing[*]}"
        exit 1
    fi
}

fetch_source() {
    mkdir -p "$CACHE"
    if [ ! -f "$TARBALL" ]; then
        say "downloading $PY_URL"
        curl -fsSL --retry 3 -o "$TARBALL.part" "$PY_URL"
        mv "$TARBALL.part" "$TARBALL"
    fi
    # Checked every time, not only after the download: a cached file is trusted no more than a new one.
    if ! echo "$PY_SHA256  $TARBALL" | sha256sum --check --status; then
        say "sha256 mismatch for $TARBALL (expected $PY_SHA256); removed, run again to download it anew"
        rm -f "$TARBALL"
        exit 1
    fi
}

build() {
    if [ -x "$PYTHON" ] && "$PYTHON" -c 'import ssl, ctypes, sqlite3, lzma, bz2, zlib, ensurepip' 2>/dev/null; then
        return 0
    fi
    ensure_build_deps
    fetch_source
    local src=$CACHE/build
    rm -rf "$src" && mkdir -p "$src"
    say "unpacking"
    tar -xJf "$TARBALL" -C "$src" --strip-components=1
    say "configuring and building CPython $PY_VERSION into $PREFIX (make -j2, nice 19)"
    local start=$SECONDS
    (cd "$src" && $NICE ./configure --prefix="$PREFIX" >"$CACHE/configure.log" 2>&1 &&
        $NICE make -j2 >"$CACHE/make.log" 2>&1 &&
        $NICE make install >"$CACHE/install.log" 2>&1) ||
        { say "build failed: see the logs in $CACHE"; exit 1; }
    # A module whose library was missing is skipped by the build without failing it: say so here.
    "$PYTHON" -c 'import ssl, ctypes, sqlite3, lzma, bz2, zlib, readline' ||
        { say "built, but a stdlib module is missing (see $CACHE/make.log)"; exit 1; }
    rm -rf "$src"
    say "built in $((SECONDS - start)) s: $("$PYTHON" -VV | head -1)"
}

venv() {
    build
    local stamp=$VENV/.installed-dev
    if [ -f "$stamp" ] && [ "$stamp" -nt "$ROOT/pyproject.toml" ]; then
        return 0
    fi
    [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
    local start=$SECONDS
    $NICE "$VENV/bin/python" -m pip install --quiet --upgrade pip
    $NICE "$VENV/bin/python" -m pip install --quiet -e "$ROOT[dev]"
    touch "$stamp"
    say "installed the project with its dev extra in $((SECONDS - start)) s"
}

case "${1:-test}" in
    build) build ;;
    venv) venv ;;
    test)
        shift || true
        venv
        cd "$ROOT"
        [ $# -gt 0 ] || set -- tests/unit
        exec $NICE "$VENV/bin/python" -m pytest "$@"
        ;;
    *) say "usage: $0 build|venv|test [pytest args]"; exit 2 ;;
esac
