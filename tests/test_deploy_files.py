"""Deployment files: docker-compose.yml validates, .env.example configures it, the image is built as designed.

No Docker engine is needed: `docker-compose config` only parses, interpolates and validates.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / ".env.example"
DOCKERFILE = ROOT / "Dockerfile"
ENTRYPOINT = ROOT / "docker" / "entrypoint.sh"
SERVICES = {"db", "redis", "web", "worker"}
# Settings variables that compose sets itself, or that only matter outside containers / in tests.
NOT_IN_ENV_EXAMPLE = {"DATABASE_URL", "REDIS_URL", "DJANGO_DEBUG", "DELLM_DATA_DIR", "DELLM_TEST_DB_NAME"}


def compose_command() -> list[str]:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True)
        if probe.returncode == 0:
            return ["docker", "compose"]
    pytest.fail(
        "docker-compose is not installed, so docker-compose.yml cannot be validated. "
        "Install Debian's package: apt-get install -y docker-compose (the Makefile's test target does)."
    )


def read_env_file(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


@pytest.fixture
def project(tmp_path) -> Path:
    """A copy of the deployment files with .env.example as .env, as a user would set it up."""
    for name in ("docker-compose.yml", "Dockerfile", ".dockerignore"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "docker", tmp_path / "docker")
    shutil.copy(ENV_EXAMPLE, tmp_path / ".env")
    return tmp_path


def compose(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in read_env_file(ENV_EXAMPLE)}  # .env alone decides
    return subprocess.run(
        [*compose_command(), "-f", "docker-compose.yml", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_compose_config_is_valid_with_env_example(project):
    result = compose(project, "config", "-q")
    assert result.returncode == 0, f"docker-compose config -q failed:\n{result.stdout}\n{result.stderr}"


def test_compose_config_interpolates_env_example(project):
    result = compose(project, "config")
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    password = read_env_file(ENV_EXAMPLE)["POSTGRES_PASSWORD"]
    assert password
    assert services["db"]["environment"]["POSTGRES_PASSWORD"] == password
    for name in ("web", "worker"):
        environment = services[name]["environment"]
        assert environment["DATABASE_URL"] == f"postgres://dellm:{password}@db:5432/dellm"
        assert environment["REDIS_URL"] == "redis://redis:6379/0"
        assert environment["DJANGO_DEBUG"] == "0"
        assert environment["SECRET_KEY"]
        assert "localhost" in environment["ALLOWED_HOSTS"].split(",")  # the healthcheck's host
    # Exactly one service runs the migrations.
    assert [name for name, svc in services.items() if svc.get("environment", {}).get("DELLM_MIGRATE") == "1"] == [
        "web"
    ]


def test_compose_refuses_a_missing_postgres_password(project):
    env_file = project / ".env"
    env_file.write_text(
        "\n".join(line for line in env_file.read_text().splitlines() if not line.startswith("POSTGRES_PASSWORD="))
    )
    result = compose(project, "config", "-q")
    assert result.returncode != 0
    assert "POSTGRES_PASSWORD" in result.stdout + result.stderr


def test_compose_services_and_healthchecks():
    config = yaml.safe_load(COMPOSE.read_text())
    services = config["services"]
    assert set(services) == SERVICES
    for name in SERVICES:
        healthcheck = services[name].get("healthcheck")
        assert healthcheck and healthcheck.get("test"), f"service {name} has no healthcheck"
    assert services["db"]["image"] == "pgvector/pgvector:pg17"
    assert services["redis"]["image"] == "redis:7-alpine"
    assert "pg_isready" in " ".join(services["db"]["healthcheck"]["test"])
    assert "ping" in services["redis"]["healthcheck"]["test"]
    assert "http://localhost:8000/healthz" in " ".join(services["web"]["healthcheck"]["test"])
    assert "inspect ping" in " ".join(services["worker"]["healthcheck"]["test"])
    assert "8000:8000" in services["web"]["ports"]
    assert "--concurrency" in services["worker"]["command"]
    for name in ("web", "worker"):
        assert services[name]["build"] == "."
        assert services[name]["env_file"] == ".env"
        assert services[name]["depends_on"] == {
            "db": {"condition": "service_healthy"},
            "redis": {"condition": "service_healthy"},
        }
    assert any(volume.endswith(":/var/lib/postgresql/data") for volume in services["db"]["volumes"])


def test_env_example_documents_every_setting():
    settings_source = (ROOT / "dellm_site" / "settings.py").read_text()
    read_by_settings = set(re.findall(r"\benv(?:\.\w+)?\(\s*\"([A-Z][A-Z0-9_]*)\"", settings_source))
    assert {"SECRET_KEY", "DELLM_CONTEXT_TOP_K"} <= read_by_settings  # the pattern still matches settings.py
    documented = set(re.findall(r"^#?([A-Z][A-Z0-9_]*)=", ENV_EXAMPLE.read_text(), flags=re.MULTILINE))
    expected = (read_by_settings - NOT_IN_ENV_EXAMPLE) | {"POSTGRES_PASSWORD", "WEB_CONCURRENCY"}
    assert not expected - documented, f".env.example does not document: {sorted(expected - documented)}"


def test_env_example_starts_the_app_in_production_mode():
    """Settings accept .env.example's values exactly as compose passes them to web and worker."""
    env = {k: v for k, v in os.environ.items() if k not in read_env_file(ENV_EXAMPLE) and k != "DELLM_LLM"}
    env.update(read_env_file(ENV_EXAMPLE))
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "dellm_site.settings",
            "DJANGO_DEBUG": "0",
            "DATABASE_URL": "postgres://dellm:unused@127.0.0.1:9/dellm",  # never connected to
            "REDIS_URL": "redis://127.0.0.1:9/0",
        }
    )
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.DEBUG, s.DELLM_LLM['BACKEND'], s.DELLM_EMBEDDER['BACKEND'], s.CELERY_BROKER_URL)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, f"settings refuse .env.example:\n{result.stderr}"
    assert result.stdout.split() == [
        "False",
        "chat.llm.local.LocalLLM",
        "memory.embeddings.LocalEmbedder",
        "redis://127.0.0.1:9/0",
    ]


def test_dockerfile_builds_the_designed_image():
    dockerfile = DOCKERFILE.read_text()
    assert re.search(r"^FROM python:3\.11-slim\b", dockerfile, flags=re.MULTILINE)
    assert "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in dockerfile
    assert "pip install -r requirements.txt -c constraints.txt" in dockerfile
    assert "manage.py collectstatic --noinput" in dockerfile
    users = re.findall(r"^USER\s+(\S+)", dockerfile, flags=re.MULTILINE)
    assert users and users[-1] not in {"root", "0"}, "the image must run as a non-root user"
    assert "docker/entrypoint.sh" in dockerfile


def test_entrypoint_migrates_only_when_asked():
    assert os.access(ENTRYPOINT, os.X_OK), "docker/entrypoint.sh must be executable"
    result = subprocess.run(["sh", "-n", str(ENTRYPOINT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    script = ENTRYPOINT.read_text()
    assert "DELLM_MIGRATE" in script and "manage.py migrate --noinput" in script
    assert '--workers "${WEB_CONCURRENCY:-4}"' in script and "--proxy-headers" in script


def test_dockerignore_keeps_local_state_and_secrets_out():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert {".venv", ".data", "test-artifacts", "reports", ".git", ".env"} <= ignored
    assert "**/__pycache__" in ignored or "__pycache__" in ignored
