#!/usr/bin/env bash
# `make service-demo`: starts strata-service on the loopback address (a free port) for each backend
# in BACKENDS (default "strata grdb"), drives it with curl (create, read, update, list with a
# predicate, a bad predicate, the change feed of a named consumer, /metrics), then stops it with
# SIGTERM and waits for its graceful shutdown.
set -euo pipefail

SERVICE=${SERVICE:-.build/debug/strata-service}
BACKENDS=${BACKENDS:-strata grdb}
WORK=$(mktemp -d)
SERVER=
cleanup() {
    [ -n "$SERVER" ] && kill -TERM "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

# Prints the command, then runs it.
show() {
    echo "\$ $*" | sed "s|$URL|\$URL|g"
    "$@"
    echo
}

for BACKEND in $BACKENDS; do
    echo "== strata-service --backend $BACKEND"
    "$SERVICE" --backend "$BACKEND" --port 0 --directory "$WORK/$BACKEND" 2>"$WORK/$BACKEND.log" &
    SERVER=$!
    URL=
    for _ in $(seq 300); do
        URL=$(sed -n 's/.*address=\(http:[^ ]*\).*/\1/p' "$WORK/$BACKEND.log" | head -1)
        [ -n "$URL" ] && break
        kill -0 "$SERVER" 2>/dev/null || { cat "$WORK/$BACKEND.log"; exit 1; }
        sleep 0.1
    done
    [ -n "$URL" ] || { echo "strata-service did not start"; cat "$WORK/$BACKEND.log"; exit 1; }
    echo "listening on $URL"

    # A consumer of the change feed: four transactions from its kept cursor, then the response ends.
    curl -sN "$URL/feed?consumer=demo&limit=4" >"$WORK/feed.txt" &
    FEED=$!

    show curl -s -X POST "$URL/departments" -H 'Content-Type: application/json' \
        -d '{"name": "Research", "budget": 250000}'
    show curl -s -X POST "$URL/employees" -H 'Content-Type: application/json' \
        -d '{"name": "Ada", "salary": 185000, "hired": "2019-04-01T09:00:00Z", "active": true, "notes": "compilers", "department": 1}'
    show curl -s -X POST "$URL/employees" -H 'Content-Type: application/json' \
        -d '{"name": "Grace", "salary": 120000, "hired": "2021-09-15T09:00:00Z", "active": true, "notes": "databases", "department": 1}'
    show curl -s -X PATCH "$URL/employees/2" -H 'Content-Type: application/json' -d '{"salary": 160000}'
    show curl -s -G "$URL/employees" --data-urlencode 'where=salary > 150000 AND active == YES' \
        --data-urlencode 'sort=-salary'
    show curl -s -G -w ' (HTTP %{http_code})' "$URL/employees" --data-urlencode 'where=salary > AND'

    wait "$FEED"
    echo "\$ curl -sN \$URL/feed?consumer=demo&limit=4"
    cat "$WORK/feed.txt"
    echo "\$ curl -s \$URL/metrics | grep -E '^(hb_requests|strata_commits)'"
    curl -s "$URL/metrics" | grep -E '^(hb_requests|strata_commits)' || true

    echo "\$ kill -TERM $SERVER"
    kill -TERM "$SERVER"
    wait "$SERVER"
    SERVER=
    grep -E "store closed|stopped" "$WORK/$BACKEND.log"
    echo
done
