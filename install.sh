#!/bin/sh
# Airlock installer: downloads the binary for this OS and CPU from a GitHub release (or a mirror,
# or a local folder), verifies its SHA-256 against the release's SHA256SUMS, installs it into
# ~/.local/bin without sudo, and sets up the user service.
#
#   curl -fsSL https://github.com/airlock-dev/airlock/releases/latest/download/install.sh | sh
#   curl -fsSL .../install.sh | sh -s -- --dir ~/bin --no-service
#
# Environment: AIRLOCK_RELEASE_URL (base folder holding airlock-<os>-<arch>.tar.gz and
# SHA256SUMS: https://, http:// or file://), AIRLOCK_INSTALL_DIR, AIRLOCK_NO_SERVICE=1.
#
# Everything happens inside main(), called on the last line, so a download cut short runs
# nothing. Checksums fail closed: a mismatch, a missing SHA256SUMS line or no hashing tool
# installs nothing.

set -u

DEFAULT_RELEASE_URL="https://github.com/airlock-dev/airlock/releases/latest/download"
TAGGED_RELEASE_URL="https://github.com/airlock-dev/airlock/releases/download"

# Set by main(); global so the EXIT trap can clean up whatever was left behind.
_tmp_dir=""
_partial=""

usage() {
    cat <<'EOF'
Install Airlock, the local coordination daemon for AI coding agents.

Usage: install.sh [--dir DIR] [--version VERSION] [--no-service]
  (piped: curl -fsSL .../install.sh | sh -s -- [options])

Options:
  --dir DIR           install into DIR (default: $AIRLOCK_INSTALL_DIR or ~/.local/bin)
  --version VERSION   install release vVERSION instead of the latest
  --no-service        do not run `airlock install-service` (also AIRLOCK_NO_SERVICE=1)
  --help              show this help

Environment:
  AIRLOCK_RELEASE_URL  download from this folder instead of GitHub (https://, http:// or file://)
EOF
}

say() {
    printf '%s\n' "$*"
}

warn() {
    printf 'airlock-install: warning: %s\n' "$*" >&2
}

err() {
    printf 'airlock-install: %s\n' "$*" >&2
    exit 1
}

has() {
    command -v "$1" >/dev/null 2>&1
}

cleanup() {
    if [ -n "$_partial" ]; then rm -f "$_partial"; fi
    if [ -n "$_tmp_dir" ]; then rm -rf "$_tmp_dir"; fi
}

detect_os() {
    _os=$(uname -s 2>/dev/null) || err "cannot run uname to detect the operating system"
    case "$_os" in
        Linux) echo linux ;;
        Darwin) echo darwin ;;
        *) err "unsupported operating system: $_os (Airlock ships binaries for Linux and macOS)" ;;
    esac
}

# $1: os as returned by detect_os.
detect_arch() {
    _arch=$(uname -m 2>/dev/null) || err "cannot run uname to detect the CPU architecture"
    case "$_arch" in
        x86_64 | amd64) _arch=x64 ;;
        aarch64 | arm64) _arch=arm64 ;;
        *) err "unsupported CPU architecture: $_arch (Airlock ships binaries for x86_64 and arm64)" ;;
    esac
    # A shell running under Rosetta 2 reports x86_64 on an Apple silicon Mac; the native binary
    # is the right one there.
    if [ "$1" = darwin ] && [ "$_arch" = x64 ]; then
        if [ "$(sysctl -n sysctl.proc_translated 2>/dev/null)" = 1 ]; then _arch=arm64; fi
    fi
    echo "$_arch"
}

# download URL FILE. curl handles file:// itself; with only wget, a file:// URL is copied.
download() {
    if has curl; then
        curl --fail --silent --show-error --location --output "$2" "$1"
    elif has wget; then
        case "$1" in
            file://*) cp "${1#file://}" "$2" ;;
            *) wget --quiet --output-document="$2" "$1" ;;
        esac
    else
        err "neither curl nor wget was found; install one of them and run this again"
    fi
}

# Prints the SHA-256 of FILE in lowercase hex, or nothing when no tool is available.
sha256_of() {
    if has sha256sum; then
        sha256sum "$1" | awk '{ print $1 }'
    elif has shasum; then
        shasum -a 256 "$1" | awk '{ print $1 }'
    elif has openssl; then
        openssl dgst -sha256 "$1" | awk '{ print $NF }'
    fi
}

# verify FILE NAME SUMS: FILE's hash must equal the one line for NAME in SUMS.
verify() {
    _expected=$(tr -d '\r' <"$3" | awk -v f="$2" '$2 == f || $2 == "*" f { print $1 }' | tr 'A-F' 'a-f')
    case "$_expected" in
        "") err "SHA256SUMS has no checksum for $2; refusing to install an unverified binary" ;;
        *[!0-9a-f]*) err "SHA256SUMS has a malformed or duplicate checksum line for $2; refusing to install" ;;
    esac
    [ "${#_expected}" -eq 64 ] || err "SHA256SUMS has a malformed checksum for $2; refusing to install"
    _actual=$(sha256_of "$1" | tr 'A-F' 'a-f')
    [ -n "$_actual" ] || err "no SHA-256 tool found (sha256sum, shasum or openssl); cannot verify the checksum, refusing to install"
    if [ "$_actual" != "$_expected" ]; then
        err "checksum mismatch for $2: expected $_expected, got $_actual; nothing was installed"
    fi
}

# print_path_hint DIR: how to put DIR on PATH, for POSIX shells and fish.
print_path_hint() {
    say ""
    say "$1 is not on your PATH. To add it:"
    say "  sh, bash, zsh:  add this line to ~/.profile (or ~/.bashrc, ~/.zshrc) and open a new shell:"
    say "                    export PATH=\"$1:\$PATH\""
    say "  fish:           fish_add_path $1"
}

main() {
    _dir="${AIRLOCK_INSTALL_DIR:-}"
    _version=""
    _no_service=""
    case "${AIRLOCK_NO_SERVICE:-}" in
        "" | 0 | false | no) ;;
        *) _no_service=1 ;;
    esac

    while [ "$#" -gt 0 ]; do
        case "$1" in
            --dir)
                [ "$#" -ge 2 ] || err "--dir needs a folder (--dir DIR)"
                _dir="$2"
                shift
                ;;
            --dir=*) _dir="${1#--dir=}" ;;
            --version)
                [ "$#" -ge 2 ] || err "--version needs a version (--version 0.1.0)"
                _version="$2"
                shift
                ;;
            --version=*) _version="${1#--version=}" ;;
            --no-service) _no_service=1 ;;
            -h | --help)
                usage
                return 0
                ;;
            *) err "unknown option: $1 (see --help)" ;;
        esac
        shift
    done
    _version="${_version#v}"
    [ -n "$_dir" ] || [ -n "${HOME:-}" ] || err "HOME is not set; choose a folder with --dir DIR"
    _dir="${_dir:-$HOME/.local/bin}"

    # Homebrew owns its own copy; a second one in ~/.local/bin would shadow or be shadowed by it.
    if has brew && brew list --formula airlock </dev/null >/dev/null 2>&1; then
        say "airlock is installed with Homebrew; upgrade with: brew upgrade airlock"
        return 0
    fi

    _os=$(detect_os) || exit 1
    _arch=$(detect_arch "$_os") || exit 1
    _target="$_os-$_arch"
    _asset="airlock-$_target.tar.gz"

    if [ -n "${AIRLOCK_RELEASE_URL:-}" ]; then
        _base="$AIRLOCK_RELEASE_URL"
    elif [ -n "$_version" ]; then
        _base="$TAGGED_RELEASE_URL/v$_version"
    else
        _base="$DEFAULT_RELEASE_URL"
    fi
    case "$_base" in
        /*) _base="file://$_base" ;;
    esac
    while :; do
        case "$_base" in
            */) _base="${_base%/}" ;;
            *) break ;;
        esac
    done
    case "$_base" in
        http://127.0.0.1[:/]* | http://localhost[:/]* | http://127.0.0.1 | http://localhost) ;;
        http://*) warn "downloading over plain HTTP from $_base; use https:// unless you trust this network" ;;
    esac

    trap cleanup EXIT
    trap 'exit 1' HUP INT TERM
    _tmp_dir=$(mktemp -d 2>/dev/null || mktemp -d -t airlock-install) || err "cannot create a temporary folder"

    say "Installing airlock ($_target) into $_dir"
    download "$_base/SHA256SUMS" "$_tmp_dir/SHA256SUMS" || err "could not download $_base/SHA256SUMS"
    download "$_base/$_asset" "$_tmp_dir/$_asset" || err "could not download $_base/$_asset"
    verify "$_tmp_dir/$_asset" "$_asset" "$_tmp_dir/SHA256SUMS"
    say "Checksum verified (SHA-256, $_asset)"

    mkdir -p "$_dir" 2>/dev/null || err "cannot create $_dir; choose another folder with --dir DIR"
    _dir=$(cd "$_dir" && pwd) || err "cannot enter $_dir"
    [ -w "$_dir" ] || err "$_dir is not writable; choose another folder with --dir DIR (no sudo needed)"
    [ ! -d "$_dir/airlock" ] || err "$_dir/airlock is a folder; move it away or choose another --dir"

    # Extract next to the destination so the final mv is an atomic rename on one filesystem.
    _partial="$_dir/.airlock.partial.$$"
    tar -xzOf "$_tmp_dir/$_asset" airlock >"$_partial" 2>/dev/null || err "$_asset does not contain an airlock binary"
    [ -s "$_partial" ] || err "$_asset holds an empty airlock binary"
    chmod 755 "$_partial" || err "cannot make $_partial executable"
    _new=$("$_partial" version </dev/null 2>/dev/null) ||
        err "the downloaded binary does not run on this system ($_target); nothing was installed"
    case "$_new" in
        "airlock "*) ;;
        *) err "the downloaded binary printed an unexpected version ($_new); nothing was installed" ;;
    esac
    if [ -n "$_version" ] && [ "$_new" != "airlock $_version" ]; then
        err "asked for airlock $_version but the download is $_new; nothing was installed"
    fi

    _old=""
    if [ -x "$_dir/airlock" ]; then _old=$("$_dir/airlock" version </dev/null 2>/dev/null) || _old=""; fi
    mv -f "$_partial" "$_dir/airlock" || err "cannot move the binary into $_dir/airlock"
    _partial=""
    if [ "$_old" = "$_new" ]; then
        say "$_new is already up to date in $_dir"
    elif [ -n "$_old" ]; then
        say "Upgraded $_old -> $_new in $_dir/airlock"
    else
        say "Installed $_new in $_dir/airlock"
    fi

    _cmd="$_dir/airlock"
    case ":${PATH:-}:" in
        *":$_dir:"* | *":$_dir/:"*)
            _cmd=airlock
            _first=$(command -v airlock 2>/dev/null) || _first=""
            if [ -n "$_first" ] && [ "$_first" != "$_dir/airlock" ]; then
                warn "another airlock at $_first comes first on your PATH"
            fi
            ;;
        *) print_path_hint "$_dir" ;;
    esac

    if [ -n "$_no_service" ]; then
        say "Skipped the service; set it up later with: $_cmd install-service"
    else
        say "Running airlock install-service"
        if ! "$_dir/airlock" install-service </dev/null; then
            warn "airlock install-service failed; the binary is installed. Set up the service yourself with: $_dir/airlock install-service"
        fi
    fi
    say "Next: \`$_cmd setup claude-code\` (or codex, cursor, ...; bare \`$_cmd setup\` lists them) connects an agent;"
    say "      the config it writes reads the token for you (\`$_cmd token\` shows where it is)"
}

main "$@"
