#!/usr/bin/env bash
# Starts a fleet on loopback: one trust-control (gate trust serve) and sidecars (gate sidecar) joined to
# it with --control-url. Usage, from the repository root, with the fleet's service token exported:
#
#   GATE_CONTROL_TOKEN=... PORT=9300 bash examples/fleet/start-fleet.sh 127.0.0.1:9301 127.0.0.1:9302
#
# PORT is trust-control's port (default 9300); each argument is a sidecar's listen address (default
# 127.0.0.1:9301 and 127.0.0.1:9302). State and logs go to $FLEET_STATE (default .gate/fleet). It
# prints one line once every process listens, and stops them all when it is stopped (kill, Ctrl-C).
set -euo pipefail

: "${GATE_CONTROL_TOKEN:?export GATE_CONTROL_TOKEN, the service token of the fleet (at least 16 characters)}"
control="127.0.0.1:${PORT:-9300}"
state="${FLEET_STATE:-.gate/fleet}"
if [ "$#" -eq 0 ]; then set -- 127.0.0.1:9301 127.0.0.1:9302; fi

pids=()
stop() {
  trap - EXIT INT TERM
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap stop EXIT
trap 'exit 0' INT TERM

# waits until LOG says "listening on", or fails with the log when the process exits first
await_listening() {
  local pid=$1 log=$2
  until grep -q '"listening on ' "$log" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "start-fleet: a process exited before listening; its log ($log):" >&2
      cat "$log" >&2
      exit 1
    fi
    sleep 0.2
  done
}

mkdir -p "$state/control"
# trust-control reads its service token from a 0600 file; the sidecars present the same token
(umask 077 && printf '%s\n' "$GATE_CONTROL_TOKEN" > "$state/control/service-token")
GATE_CONTROL_TOKEN='' npx gate trust serve --listen "$control" --receipt-db "$state/control/receipts.db" \
  --service-token-file "$state/control/service-token" > "$state/control.log" 2>&1 &
pids+=("$!")
await_listening "$!" "$state/control.log"

n=0
for address in "$@"; do
  n=$((n + 1))
  mkdir -p "$state/sidecar-$n"
  npx gate sidecar --listen "$address" --receipt-store "$state/sidecar-$n/receipts.db" \
    --control-url "http://$control" > "$state/sidecar-$n.log" 2>&1 &
  pids+=("$!")
  await_listening "$!" "$state/sidecar-$n.log"
done

echo "fleet up: trust-control http://$control, sidecars $(printf 'http://%s ' "$@")(logs in $state)"
wait
