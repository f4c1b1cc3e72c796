#!/usr/bin/env bash
# A throwaway PostgreSQL server for the store's tests (docs/cluster.md, "Tests"):
#   .ci/pg.sh start DIR   initdb in DIR/db, start on a free loopback port with its socket in DIR,
#                         and print the server's URL (the only line on stdout), for AIRLOCK_TEST_PG;
#                         PG_SERVER_OPTS, when set, is added to the server's options after the
#                         defaults, so it can override them (e.g. "-c ssl=on -c ssl_cert_file=F")
#   .ci/pg.sh restart DIR restart that server (fast shutdown: sessions are cut, as in a
#                         failover), on the same port, and return once it accepts connections
#   .ci/pg.sh stop DIR    stop that server and remove DIR
# Debian's postgresql is installed when missing. As root, the server runs as the postgres user
# (PostgreSQL refuses to run as root), so DIR must be somewhere that user can reach: not under
# a /tmp of mode 0700; /var/tmp is fine. As anyone else, it runs as the current user.
set -euo pipefail

die() {
  echo "pg.sh: $*" >&2
  exit 1
}

is_root() { [ "$(id -u)" = 0 ]; }

# Runs a PostgreSQL program as the user the server belongs to.
as_pg() {
  if is_root; then runuser -u postgres -- "$@"; else "$@"; fi
}

# The newest installed server's bin directory (Debian keeps one per major version), else the
# directory of an initdb on PATH; empty when there is none.
pg_bin() {
  local newest
  newest=$(printf '%s\n' /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)
  if [ -x "$newest" ]; then
    dirname "$newest"
  elif command -v initdb >/dev/null; then
    dirname "$(command -v initdb)"
  fi
}

install_pg() {
  is_root || die "PostgreSQL is not installed; install it (Debian: apt-get install postgresql) and run again"
  command -v apt-get >/dev/null || die "PostgreSQL is not installed and there is no apt-get to install it with"
  echo "pg.sh: installing Debian's postgresql" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; } >&2 ||
    die "apt-get could not install postgresql"
}

# A TCP port on 127.0.0.1 that nothing answers on (a connect to it fails).
free_port() {
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 40000))
    if ! (: <"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  die "no free port found"
}

start() {
  local dir=$1 bin port
  bin=$(pg_bin)
  if [ -z "$bin" ]; then
    install_pg
    bin=$(pg_bin)
    [ -n "$bin" ] || die "postgresql is installed but initdb is not where it should be"
  fi
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if is_root; then
    chown postgres: "$dir"
    runuser -u postgres -- test -w "$dir" || die "the postgres user cannot write $dir (a parent is closed to it); use a directory under /var/tmp"
  fi
  as_pg "$bin/initdb" -D "$dir/db" -A trust -U postgres >"$dir/initdb.log" 2>&1 ||
    die "initdb failed: $(tail -n 5 "$dir/initdb.log")"
  # Another process may take the port between the check and the start: try a few.
  local seen unbound=""
  for _ in 1 2 3 4 5; do
    port=$(free_port)
    seen=0
    [ ! -f "$dir/log" ] || seen=$(wc -l <"$dir/log")
    if as_pg "$bin/pg_ctl" -D "$dir/db" -l "$dir/log" -w \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=on ${PG_SERVER_OPTS:-}" start >/dev/null; then
      # Asked (through PG_SERVER_OPTS) to listen on several addresses, the server starts when it
      # binds any one of them; an address another process held at that instant (a test's brief
      # listener on an ephemeral port) would refuse every connection later. Another port, then.
      if tail -n +"$((seen + 1))" "$dir/log" | grep -q "could not bind .*Address already in use"; then
        as_pg "$bin/pg_ctl" -D "$dir/db" -m fast -w stop >/dev/null || die "the server in $dir/db did not stop"
        unbound=$(grep "could not bind .*Address already in use" "$dir/log" | tail -n 1)
        continue
      fi
      echo "postgres://postgres@127.0.0.1:$port/postgres"
      return 0
    fi
  done
  [ -z "$unbound" ] || die "the server could not listen on every address it was given: $unbound"
  die "the server did not start: $(tail -n 5 "$dir/log" 2>/dev/null)"
}

restart() {
  local dir=$1 bin
  [ -f "$dir/db/postmaster.pid" ] || die "no server is running in $dir/db"
  bin=$(pg_bin)
  [ -n "$bin" ] || die "no pg_ctl to restart the server in $dir/db with"
  # The port and socket options come back from postmaster.opts; -l keeps the server's output
  # in its log, off the caller's stdout (which the caller may be reading to its end).
  as_pg "$bin/pg_ctl" -D "$dir/db" -l "$dir/log" -m fast -w restart >/dev/null ||
    die "the server in $dir/db did not restart: $(tail -n 5 "$dir/log" 2>/dev/null)"
}

stop() {
  local dir=$1 bin
  if [ -f "$dir/db/postmaster.pid" ]; then
    bin=$(pg_bin)
    [ -n "$bin" ] || die "no pg_ctl to stop the server in $dir/db with"
    as_pg "$bin/pg_ctl" -D "$dir/db" -m fast -w stop >/dev/null || die "the server in $dir/db did not stop"
  fi
  rm -rf "$dir"
}

[ $# -eq 2 ] || die "usage: .ci/pg.sh start|restart|stop DIR"
case $1 in
  start) start "$2" ;;
  restart) restart "$2" ;;
  stop) stop "$2" ;;
  *) die "usage: .ci/pg.sh start|restart|stop DIR" ;;
esac
