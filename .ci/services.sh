# shellcheck shell=bash
# Sourced by .ci/run (under `set -euo pipefail`) before `npm ci`: installs and starts the services the tests
# need, exports where they are, and stops them when the CI shell exits. Idempotent: sourcing it again, or with
# CTXKIT_TEST_PG_URL already set, starts nothing new.
#
# Chromium and tmux: installed from Debian packages when missing.
# PostgreSQL: installed from Debian packages when missing (as root), then a throwaway cluster is initialised in
# a temporary folder (as the `postgres` user: initdb refuses root), listening on 127.0.0.1 only on a free
# port, with a `ctxkit_test` database. Exports CTXKIT_TEST_PG_URL=postgres://postgres@127.0.0.1:<port>/ctxkit_test.

ctxkit_postgres_bin() {
  find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1
}

ctxkit_stop_services() {
  if [ -n "${CTXKIT_CI_PG_DIR:-}" ] && [ -d "$CTXKIT_CI_PG_DIR/data" ]; then
    if [ "$(id -u)" -eq 0 ]; then
      runuser -u postgres -- "$CTXKIT_CI_PG_BIN/pg_ctl" -D "$CTXKIT_CI_PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    else
      "$CTXKIT_CI_PG_BIN/pg_ctl" -D "$CTXKIT_CI_PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$CTXKIT_CI_PG_DIR"
  fi
}

ctxkit_start_postgres() {
  if [ -n "${CTXKIT_TEST_PG_URL:-}" ]; then
    echo "services: PostgreSQL at CTXKIT_TEST_PG_URL (already set)"
    return 0
  fi
  local bin
  bin="$(ctxkit_postgres_bin)"
  if [ -z "$bin" ]; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "services: PostgreSQL is not installed; install the postgresql package or set CTXKIT_TEST_PG_URL" >&2
      return 1
    fi
    echo "services: installing PostgreSQL from Debian packages"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
    bin="$(ctxkit_postgres_bin)"
  fi
  local folder
  folder="$(mktemp -d /tmp/ctxkit-ci-postgres.XXXXXX)"
  local run_as=()
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres:postgres "$folder"
    run_as=(runuser -u postgres --)
  fi
  if ! "${run_as[@]}" "$bin/initdb" -D "$folder/data" -U postgres --auth=trust --encoding=UTF8 --no-locale \
    >"$folder/initdb.log" 2>&1; then
    cat "$folder/initdb.log" >&2
    return 1
  fi
  local port=$((40000 + RANDOM % 20000))
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
  CTXKIT_CI_PG_DIR="$folder"
  CTXKIT_CI_PG_BIN="$bin"
  trap ctxkit_stop_services EXIT
  if ! "${run_as[@]}" "$bin/pg_ctl" -D "$folder/data" -l "$folder/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $folder -c max_connections=200" start >/dev/null; then
    cat "$folder/server.log" >&2
    return 1
  fi
  "${run_as[@]}" "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "CREATE DATABASE ctxkit_test"
  export CTXKIT_TEST_PG_URL="postgres://postgres@127.0.0.1:$port/ctxkit_test"
  echo "services: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
}

# Chromium (browser tests drive Debian's /usr/bin/chromium through playwright-core; no browser is downloaded) and
# tmux (the `ctxkit chat` end-to-end test runs the CLI in a real terminal) come from Debian packages.
ctxkit_install_packages() {
  local missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  command -v tmux >/dev/null 2>&1 || missing+=(tmux)
  if [ "${#missing[@]}" -eq 0 ]; then return 0; fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "services: missing Debian packages: ${missing[*]}; install them or run as root" >&2
    return 1
  fi
  echo "services: installing ${missing[*]} from Debian packages"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

ctxkit_install_packages
ctxkit_start_postgres
