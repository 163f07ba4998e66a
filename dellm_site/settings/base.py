"""DeLLM settings, driven by environment variables (see README "Configuration").

``dellm_site.settings`` re-exports this module; ``dellm_site.settings.test`` adapts it for the test suite.
"""

from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

# The project root (dellm_site/settings/base.py is three levels down).
BASE_DIR = Path(__file__).resolve().parent.parent.parent
env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

# --- Core -------------------------------------------------------------------------------
# Debug pages (tracebacks, URL lists) only when asked for with DJANGO_DEBUG=1; `make run` serves without them.
DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env("SECRET_KEY", default="")
if not SECRET_KEY and env("DELLM_SECRET_KEY_FILE", default=""):
    # A key kept in a file: `make run` makes .data/secret_key; container secrets are files too.
    try:
        SECRET_KEY = Path(env("DELLM_SECRET_KEY_FILE")).read_text().strip()
    except OSError as exc:
        raise ImproperlyConfigured(f"DELLM_SECRET_KEY_FILE cannot be read: {exc}") from exc
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Without DJANGO_DEBUG=1 (development only) DeLLM needs a long random "
            "SECRET_KEY environment variable, e.g. SECRET_KEY=$(python -c 'import secrets; "
            "print(secrets.token_urlsafe(50))'). `make run` makes one and keeps it in .data/secret_key."
        )
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
DATA_DIR = Path(env("DELLM_DATA_DIR", default=str(BASE_DIR / ".data")))

# --- Applications, middleware and URLs --------------------------------------------------
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "channels",
    "axes",
    "memory",
    "provenance",
    "accounts",
    "chat",
    "evaluation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before anything that reads a request's body.
    "dellm_site.middleware.RequestSizeLimit",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "dellm_site.middleware.NoStoreForSignedInPages",
    # Last, as django-axes asks: turns a sign-in refused for too many failures into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "dellm_site.urls"
WSGI_APPLICATION = None
ASGI_APPLICATION = "dellm_site.asgi.application"

# --- Templates --------------------------------------------------------------------------
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database: PostgreSQL + pgvector always; embedded server when DATABASE_URL is unset --
if env("DATABASE_URL", default=""):
    DATABASES = {"default": env.db("DATABASE_URL")}
    EMBEDDED_DATABASE = False
else:
    # The embedded server starts on the first connection, not here (see dellm_site/db/embedded).
    DATABASES = {
        "default": {
            "ENGINE": "dellm_site.db.embedded",
            "NAME": env("DELLM_DB_NAME", default="dellm"),
            "OPTIONS": {"data_dir": DATA_DIR / "pg"},
        }
    }
    EMBEDDED_DATABASE = True
# Connections come from a pool (psycopg_pool, Django's "pool" option): a chat turn, a request or a task takes an
# open connection and gives it back when it closes it, instead of starting a database backend (and filling its
# catalog caches) for each one: a turn's first query took 20-30 ms on a fresh backend. DELLM_DB_POOL=0 turns it off
# (for a server-side pooler such as PgBouncer in transaction mode, keep it on or set CONN_MAX_AGE there instead).
if env.bool("DELLM_DB_POOL", default=True):
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": env.int("DELLM_DB_POOL_MAX", default=16),
        "timeout": env.float("DELLM_DB_POOL_TIMEOUT", default=30.0),
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth -------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 8}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "chat:home"
LOGOUT_REDIRECT_URL = "login"
# Failed sign-ins (login page, admin, POST /api/auth/token/) are counted per username and client address by
# django-axes; after the limit, that pair is refused with 429 until it has been quiet for the lockout time.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env.int("DELLM_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("DELLM_LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "accounts.lockout.lockout_response"
# No trail of successful sign-ins: failures are kept only until they expire or the account is deleted.
AXES_DISABLE_ACCESS_LOG = True
# Server logs name the address and path of a failure, never the username tried.
AXES_VERBOSE = False
AXES_CLIENT_STR_CALLABLE = "accounts.lockout.client_str"
# Usernames longer than any account's are counted under their first 255 characters (what axes can store).
AXES_USERNAME_CALLABLE = "accounts.lockout.client_username"

# --- Internationalisation ---------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static files (served by the app through WhiteNoise) --------------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

# --- Redis: channel layer and Celery broker; in-memory / in-process without REDIS_URL ---
REDIS_URL = env("REDIS_URL", default="")
if REDIS_URL:
    # No read timeout: a socket's channel waits on Redis in blocking reads, which redis-py 8 would end after 5 s.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": None}]},
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = False
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CELERY_BROKER_URL = "memory://"
    CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# An unacknowledged job (its worker died) goes back to the queue after this many seconds.
# Workers sweep for such jobs every interval x throttle seconds.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("DELLM_TASK_VISIBILITY_TIMEOUT", default=300),
    "unacked_restore_interval": env.int("DELLM_TASK_RESTORE_INTERVAL", default=10),
    "unacked_restore_throttle": env.int("DELLM_TASK_RESTORE_THROTTLE", default=10),
}
# Periodic jobs (a worker started with --beat runs them): expired forget previews lose their words
# within a minute. Without REDIS_URL there is no beat; previews are swept on every forget action instead.
CELERY_BEAT_SCHEDULE = {
    "forget-previews-expire": {"task": "provenance.tasks.previews_expire_task", "schedule": 60.0},
    "temporary-chats-expire": {"task": "chat.tasks.temporary_conversations_expire_task", "schedule": 600.0},
    # The VACUUM and CHECKPOINT after erasures, once for all of them (a no-op when none is due).
    "disk-reclaim": {
        "task": "provenance.tasks.vacuum_after_forget",
        "schedule": float(env.int("DELLM_DISK_RECLAIM_DELAY_S", default=60)),
    },
}

# --- REST API ---------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # First, so a missing or revoked key gets 401 with a WWW-Authenticate header.
        "accounts.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "dellm_site.errors.api_exception_handler",
    "DEFAULT_THROTTLE_RATES": {"anon": env("DELLM_SIGNUP_RATE", default="30/hour")},
}
SPECTACULAR_SETTINGS = {
    "TITLE": "DeLLM API",
    "DESCRIPTION": "Chat with a long-term memory that can be faithfully deleted.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
}

# --- DeLLM: LLM and embedding backends ({"BACKEND", "OPTIONS"}) -------------------------
OPENAI_API_KEY = env("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env("OPENAI_BASE_URL", default="") or None
_llm = env("DELLM_LLM", default="") or ("openai" if OPENAI_API_KEY else "local")
DELLM_LLM = {
    "local": {
        "BACKEND": "dellm_site.ai.local.LocalLLM",
        "OPTIONS": {"token_delay": env.float("DELLM_TOKEN_DELAY", default=0.0)},
    },
    "openai": {
        "BACKEND": "dellm_site.ai.openai.OpenAILLM",
        "OPTIONS": {
            "model": env("DELLM_LLM_MODEL", default="gpt-4o-mini"),
            "api_key": OPENAI_API_KEY,
            "base_url": OPENAI_BASE_URL,
            "timeout": env.float("DELLM_LLM_TIMEOUT", default=60.0),
        },
    },
}.get(_llm)
if DELLM_LLM is None:
    raise ImproperlyConfigured(f"DELLM_LLM={_llm!r} is not a backend; use 'local' or 'openai'.")
_embedder = env("DELLM_EMBEDDER", default="") or "local"
DELLM_EMBEDDER = {
    "local": {
        "BACKEND": "dellm_site.ai.embedding.LocalEmbedder",
        # engine: numpy (default; no torch) or sentence-transformers (the library, with torch): the same vectors.
        "OPTIONS": {
            "dimensions": 384,
            "threads": env.int("DELLM_EMBEDDER_THREADS", default=1),
            "engine": env("DELLM_EMBEDDER_ENGINE", default="numpy"),
        },
    },
    "openai": {
        "BACKEND": "dellm_site.ai.embedding.OpenAIEmbedder",
        "OPTIONS": {
            "model": env("DELLM_EMBEDDING_MODEL", default="text-embedding-3-small"),
            "dimensions": 1536,
            "api_key": OPENAI_API_KEY,
            "base_url": OPENAI_BASE_URL,
            "timeout": env.float("DELLM_LLM_TIMEOUT", default=60.0),
        },
    },
}.get(_embedder)
if DELLM_EMBEDDER is None:
    raise ImproperlyConfigured(f"DELLM_EMBEDDER={_embedder!r} is not a backend; use 'local' or 'openai'.")
# The vector column's width is fixed when the tables are created; it follows the embedder.
DELLM_EMBEDDING_DIMENSIONS = DELLM_EMBEDDER["OPTIONS"]["dimensions"]
# The forget resolver's second reading of meaning (dellm_site/ai/mpnet.py): all-mpnet-base-v2, 768-d, kept beside
# the first vector of every statement and fact (memory.Embedding.wide) and averaged with it when a request is matched
# to what it names; its files are unpacked once into DELLM_MODEL_DIR and run by ONNX Runtime. On by default: fewer
# wrong matches (other item 2.1% to 1.5% on the sets never tuned on) for about 40 ms of one core a preview, which
# stays within its 150 ms p95 on 10,000 messages (README, "The deletion-request detector"); "off" leaves it out.
_wide = env("DELLM_WIDE_EMBEDDER", default="local")
if _wide not in ("local", "off"):
    raise ImproperlyConfigured(f"DELLM_WIDE_EMBEDDER={_wide!r}; use 'local' or 'off'.")
DELLM_WIDE_EMBEDDER = {
    "BACKEND": "dellm_site.ai.embedding.WideEmbedder",
    "OPTIONS": {
        "directory": env("DELLM_MODEL_DIR", default=str(BASE_DIR / ".data" / "models")),
        "threads": env.int("DELLM_EMBEDDER_THREADS", default=1),
    },
} if _wide == "local" else None
DELLM_WIDE_DIMENSIONS = 768

# A web server or worker process loads the embedding model (and what else a first turn needs) in a background
# thread as it starts, so the first message does not wait for it; the process answers meanwhile.
DELLM_WARM_AT_START = env.bool("DELLM_WARM_AT_START", default=True)

# --- DeLLM: context construction (the paper's defaults) ---------------------------------
DELLM_CONTEXT_TOP_K = env.int("DELLM_CONTEXT_TOP_K", default=5)
DELLM_CONTEXT_MIN_SIMILARITY = env.float("DELLM_CONTEXT_MIN_SIMILARITY", default=0.25)
# A message that only states something (no question, no request) needs little context: only the few
# items about the same thing (to notice a change or a repeat), not the best of everything else.
DELLM_CONTEXT_STATEMENT_TOP_K = env.int("DELLM_CONTEXT_STATEMENT_TOP_K", default=2)
DELLM_CONTEXT_STATEMENT_MIN_SIMILARITY = env.float("DELLM_CONTEXT_STATEMENT_MIN_SIMILARITY", default=0.6)
# The vector ranking's plan per user (memory.retrieval.vector_plan): a history of at most this many vectors is
# scanned exactly (an index-only scan of the owner index, which includes the vectors), a larger one walks the shared
# HNSW index of retrievable vectors (iterative scan, this ef_search). Measured with the scale benchmark (exact
# 8 ms against HNSW 11 ms p50 at 10,000 items, 15 against 5 at 30,000); README, "Retrieval at scale".
DELLM_RETRIEVAL_EXACT_MAX_ITEMS = env.int("DELLM_RETRIEVAL_EXACT_MAX_ITEMS", default=15000)
DELLM_RETRIEVAL_EF_SEARCH = env.int("DELLM_RETRIEVAL_EF_SEARCH", default=200)
# The most index tuples a context query's HNSW walk reads (pgvector's hnsw.max_scan_tuples; its default is 20,000):
# bounds a heavy user's retrieval for a message far from anything they said (memory.retrieval.query_settings).
DELLM_RETRIEVAL_MAX_SCAN_TUPLES = env.int("DELLM_RETRIEVAL_MAX_SCAN_TUPLES", default=2000)
# Longest accepted chat message, in characters; longer ones are refused with a 400 / error frame.
DELLM_MAX_MESSAGE_CHARS = env.int("DELLM_MAX_MESSAGE_CHARS", default=8000)
# Largest request body, in bytes; API and /v1 requests over it get a JSON 413 (Django's default: 2.5 MiB).
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DELLM_MAX_BODY_BYTES", default=2_621_440)

# --- DeLLM: derived memory (facts, summaries) -------------------------------------------
DELLM_DERIVED_MEMORY = env.bool("DELLM_DERIVED_MEMORY", default=True)
# A conversation's summary is refreshed every N user messages, from at most M of its latest.
DELLM_SUMMARY_EVERY = env.int("DELLM_SUMMARY_EVERY", default=3)
DELLM_SUMMARY_MAX_SOURCES = env.int("DELLM_SUMMARY_MAX_SOURCES", default=50)
# A temporary chat (never remembered, never used elsewhere) is forgotten, through the Forget flow, once it has
# been idle this many hours (checked every 10 minutes by the beat, or when its owner opens the chat without workers).
DELLM_TEMPORARY_CHAT_HOURS = env.int("DELLM_TEMPORARY_CHAT_HOURS", default=24)
# Kinds of stored items that may enter a reply's context.
DELLM_CONTEXT_KINDS = env.list("DELLM_CONTEXT_KINDS", default=["message", "fact", "summary"])


# --- DeLLM: forgetting -----------------------------------------------------------------
# Probabilities at or above which a chat message is taken for a request to forget (a preview) or asked
# about; empty: the thresholds the recogniser was trained with.
def _optional_float(name: str) -> float | None:
    value = env(name, default="")
    return float(value) if value else None


DELLM_INTENT_SURE = _optional_float("DELLM_INTENT_SURE")
DELLM_INTENT_ASK = _optional_float("DELLM_INTENT_ASK")
# Similarity at or above which a surviving item counts as a residual hit in the verification scan.
DELLM_FORGET_VERIFY_SIMILARITY = env.float("DELLM_FORGET_VERIFY_SIMILARITY", default=0.8)
# Similarity at or above which a surviving item is reported as possible residue (a partial or rephrased mention).
DELLM_FORGET_RESIDUE_SIMILARITY = env.float("DELLM_FORGET_RESIDUE_SIMILARITY", default=0.65)
# Verification scans every surviving item for every deletion (not only those the indexes name as able to hold
# the deleted content); a confirmation can also ask for it ({"full_scan": true}).
DELLM_FORGET_VERIFY_FULL_SCAN = env.bool("DELLM_FORGET_VERIFY_FULL_SCAN", default=False)
# The maintenance after erasures (VACUUM, CHECKPOINT) runs this many seconds after the first of them, once for
# all those made meanwhile, off the confirmation's path; without workers in a thread of the process
# (DELLM_DISK_RECLAIM_IN_PROCESS; off: only at start-up and by `manage.py forget_resume`).
DELLM_DISK_RECLAIM_DELAY_S = env.int("DELLM_DISK_RECLAIM_DELAY_S", default=60)
DELLM_DISK_RECLAIM_IN_PROCESS = env.bool("DELLM_DISK_RECLAIM_IN_PROCESS", default=True)
# A confirmed deletion of at least this many items runs as a background job whose progress the Forget panel
# shows (the confirmation answers 202 at once); a preview lists at most DELLM_FORGET_PREVIEW_PAGE items of each
# kind, with counts by kind and conversation, and pages the rest (/api/forget/{id}/items/).
DELLM_FORGET_JOB_MIN_ITEMS = env.int("DELLM_FORGET_JOB_MIN_ITEMS", default=2000)
DELLM_FORGET_PREVIEW_PAGE = env.int("DELLM_FORGET_PREVIEW_PAGE", default=200)
# Minutes a preview stays confirmable.
DELLM_FORGET_PREVIEW_MINUTES = env.int("DELLM_FORGET_PREVIEW_MINUTES", default=15)
# Every forget action (preview, confirmation, cancellation) also expires everyone's stale previews, not only its
# user's. On by default without workers (no beat schedule runs the sweep); with workers the beat does it every
# minute, and a forget action reads and writes only its user's rows.
DELLM_FORGET_SWEEP_ON_REQUEST = env.bool("DELLM_FORGET_SWEEP_ON_REQUEST", default=CELERY_TASK_ALWAYS_EAGER)
# The web server finishes interrupted deletions in a background thread at start-up (`make run` turns it on).
DELLM_FORGET_RESUME_AT_START = env.bool("DELLM_FORGET_RESUME_AT_START", default=False)
# Key of the pseudonymous references in the audit log (defaults to a key derived from SECRET_KEY).
DELLM_AUDIT_KEY = env("DELLM_AUDIT_KEY", default="")
# The review desk: a deletion still executing, or a rebuild still pending, this many minutes on needs attention.
DELLM_REVIEW_STUCK_MINUTES = env.int("DELLM_REVIEW_STUCK_MINUTES", default=30)
# The review desk: days within which an erasure must be complete (GDPR art. 12(3): one month).
DELLM_ERASURE_DEADLINE_DAYS = env.int("DELLM_ERASURE_DEADLINE_DAYS", default=30)

# --- Logging ----------------------------------------------------------------------------
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {"pgserver": {"level": "WARNING"}, "httpx": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}

# --- Production hardening (DJANGO_DEBUG=0) ----------------------------------------------
if not DEBUG:
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
    STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
