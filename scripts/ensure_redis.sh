#!/usr/bin/env bash
# Make sure a Redis server answers on 127.0.0.1:6379 for the tests of the Redis path.
set -u
ping() { (exec 3<>/dev/tcp/127.0.0.1/6379 && printf 'PING\r\n' >&3 && timeout 2 head -c 5 <&3 | grep -q PONG) 2>/dev/null; }
ping && exit 0
if command -v redis-server >/dev/null; then
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
  for _ in $(seq 20); do ping && exit 0; sleep 0.25; done
fi
echo "warning: no Redis on 127.0.0.1:6379; the Redis-path tests will fail" >&2
