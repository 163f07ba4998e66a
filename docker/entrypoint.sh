#!/bin/sh
# Container entry point.
#   web            migrate (only when DELLM_MIGRATE=1), then serve the ASGI app with uvicorn on :8000
#   anything else  run as given (celery worker, manage.py commands, a shell)
# Only one service should set DELLM_MIGRATE=1 (docker-compose.yml: web), so migrations never race.
set -eu

if [ "${1:-web}" = "web" ]; then
    if [ "${DELLM_MIGRATE:-0}" = "1" ]; then
        echo "entrypoint: applying database migrations"
        python manage.py migrate --noinput
        # Finish any deletion a crash interrupted before serving again.
        python manage.py forget_resume
    fi
    # --proxy-headers: trust X-Forwarded-Proto/For from the addresses in FORWARDED_ALLOW_IPS
    # (uvicorn's default: 127.0.0.1); set it to the reverse proxy's address when there is one.
    exec python -m uvicorn dellm_site.asgi:application \
        --host 0.0.0.0 --port 8000 \
        --workers "${WEB_CONCURRENCY:-4}" \
        --proxy-headers \
        --lifespan off
fi

exec "$@"
