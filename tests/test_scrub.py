"""The secret scrubber on fixture files full of fake secrets, and on ordinary code."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codecite.config import Config
from codecite.scrub import KINDS, scrub, scrub_text, shannon_entropy

FIXTURES = Path(__file__).parent / "fixtures" / "secrets"
CONFIG = Config()

EXPECTED: dict[str, dict[str, int]] = {
    "app_settings.py": {
        "private-key": 1, "aws-access-key": 2, "aws-secret-key": 1, "github-token": 3,
        "openai-key": 1, "anthropic-key": 1, "connection-string": 1, "secret": 2,
        "password": 1, "high-entropy": 1,
    },
    ".env": {
        "password": 1, "stripe-key": 2, "slack-token": 1, "gitlab-token": 1, "npm-token": 1,
        "connection-string": 1, "google-api-key": 1, "aws-access-key": 1, "aws-secret-key": 1,
    },
    "config.yaml": {
        "password": 1, "connection-string": 1, "slack-webhook": 1, "secret": 1,
        "bearer-token": 1, "basic-auth": 1,
    },
    "settings.json": {
        "private-key": 1, "secret": 2, "password": 1, "jwt": 1, "connection-string": 1,
    },
    "server.pem": {"private-key": 2},
    # an AWS credentials file under another name: recognised by its content (issue 21)
    "aws_credentials": {"aws-access-key": 1, "aws-secret-key": 1, "secret": 1},
    "client.js": {
        "github-token": 1, "stripe-key": 1, "google-api-key": 1, "openai-key": 1,
        "npm-token": 1, "password": 1, "connection-string": 1, "jwt": 1,
    },
}  # fmt: skip

#: Text around the secrets that must survive: key names, URL parts, non-secrets.
KEPT: dict[str, list[str]] = {
    "app_settings.py": [
        'AWS_ACCESS_KEY_ID = "',
        "postgres://app_user:",
        "@db.internal.example.com:5432/orders",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        'os.environ["DB_PASSWORD"]',
        'os.getenv("REDIS_PASSWORD", "")',
        '"password": ""',
        '"<your-key>"',
        '"${API_TOKEN}"',
        "123e4567-e89b-12d3-a456-426614174000",
        "3f786850e387550fdab836ed7e6dc881de23001b",
        "https://docs.example.com/settings",
        "password=password",
        "password: str) -> bool",
    ],
    ".env": [
        "DB_PASSWORD=«redacted:password»",
        "DB_PASSWORD_FILE=/run/secrets/db_password",
        "redis://:«redacted:connection-string»@cache.internal:6379/0",
        "https://public@sentry.example.com/1",
        "ADMIN_PASSWORD=${VAULT_ADMIN_PASSWORD}",
    ],
    "config.yaml": [
        "password: «redacted:password»",
        "password_policy: strict",
        "# rotated monthly",
        "https://hooks.slack.com/services/«redacted:slack-webhook»",
        "${ADMIN_PASSWORD}",
    ],
    "settings.json": [
        '"private_key": "-----BEGIN PRIVATE KEY-----\\n«redacted:private-key»\\n-----END',
        '"private_key_id": "«redacted:secret»"',
        '"password": "Password"',
        '"Enter your password"',
        "User Id=orders;Password=«",
    ],
    "server.pem": ["-----BEGIN CERTIFICATE-----", "yRTkH9echV5Wim+7Mn5WoJBz5qWh5ZeP3u0eAOVO"],
    "aws_credentials": ["[profile deploy]", "region = eu-west-1", "aws_secret_access_key = «"],
    "client.js": ["Bearer ${token}", 'document.querySelector("#password")', "mongodb+srv://svc:"],
}

SECRETS: dict[str, list[str]] = {
    "app_settings.py": [
        "AKIAON1QQYM4N5AVD1QV",
        "xn9KK/ChvuRJBZ2XN9NO9wwqHcyIs3FNHTmdxGWA",
        "ASIASDY26A2CJBQXJ6Y7",
        "ghp_yGeFyjkzSzmyGTujufPCLaW9J8pKudWjvw8T",
        "gho_1eqTUnRsnrkqWwKWuwxxDaax4FhL9xWm3GRR",
        "github_pat_huti6OccIWRTjj8Bq2PPPU_9aH3nx6BJcRUXJ5QiMP8iwt8rjtEzpEeqxeKC6xkd3xwPP"
        "sN4jgC48d00r3",
        "django-insecure-0jQ!jI4WbQ22--nGEx82gyJCsDiu9O#CAHAT9GVC",
        "07d6d647cc983f11a8e3347105a8bb2b",
        "jU0i0KuWZMLaA1BHYr",
        "C16+BjoN+jnLKLJp+Ugrg8p1EU4xc4HgknC8bWMGzjA0",
        "sk-proj-MB8xRE8tB3njtyV79cImQ2THWZTP7XUhy0l9K4t081egSITS",
        "sk-ant-api03-ByaW52n0AmKFLqsWqI2TtHiXPcGRUl3PGxRU7_17qeeb2xm6Ew2fjckaphtZ9PtgX0t"
        "2cnbByYyxZGeQ",
        "hunter2-PSnGd1Ck",
        "Sun64Fh91nJESSWon3bwF2KafgxHBmGr4UF9HyugNMqDCIJeFu3VBjIxjded8Fn+",
        "JLTTWI763cooRRp1BWDAn+LGVk69B1aoPgyKf9X4YTNZe6SmcMbLsdsid9/vQPsv",
        "7YjyID0f3qwqn7vHI75l7d9zXca5mVuxWti7kukA76Hwvt+S2ALztl6sXiAM8dQR",
        "jkba8cA2GPOwBYW6R9zcZMglsnW9v+cS00+xH0OmUoblqEoFnu+lOKw9XZIraeiy",
        "W4h7tHxTfzJz+aiAcm4vdYEWORVgBeblOZmSnLflSW4igjfisTU/f4OQbLu5/PoN",
        "M4VaK/oQVH+9Cwtn5ObZesAOIFeHjXBM75LdDHzMEgjBJqh+n8cbtz0pLIqAiJUd",
        "dt+ifOoWIBtRHjrvxMoNMLA4=",
    ],
    ".env": [
        "vEYb9N6Iaa6sTpks#!",
        "sk_live_rZhE7fbxSvXPok0tCmHoaV7j",
        "rk_live_6GsFOTIU7f9lB3o8yonrfBJb",
        "xoxb-485628263975-9008424720780-e4h11x4daWNxGHr4xuuE8fV6",
        "glpat-hUifoqIfKy5eFc7b3xor",
        "npm_gmeYP4xQRqlYmhzGYgWQEKVRV2gaWIkp9xCq",
        "fQrclqyVT42EuuzKi65D2Z",
        "AIzafMcJZwL1u6yaZsX3DZCMOInqCqfg9mJHh_5",
        "AKIAWHWQEXZCEV8V5N0V",
        "oOUj+0zD8PAcDHr+kXzP6NX4K56Ts5M1NhNRHT+3",
    ],
    "config.yaml": [
        "correct-horse-G5n8oWFmzt",
        "Tr0ub4dor9Yy613",
        "TPD023PZQ/BFFXMNRQU/hQjzKa8db4jAOwbKt2xVMq4P",
        "b8pkm0zXfhOOCmUJ5UcTq11h2sEYgzaPDtPJsldK",
        "CwjS0rFhinqrmnMl8_YEcrvrL3MNWm-a",
        "ZGVwbG95OkN1NXZKUDVncTNxSUNp",
    ],
    "settings.json": [
        "e858a24758eb4b462f4df69842042c9ff3e155ab",
        "J5GesrayHiKcO4LhtHB1xxq+pIBNu+knxojKQBOMRl4OI8n1g+3ikm9cMWv/RCV+",
        "uCrCbyoEGV+CjUzHTprkHYIWWw5feORYlhEcF8qVqB8WX7Mv5lFKaQQ360+cs5+j",
        "FaWDQLtmqebDmC5CgxYwQGHxdRTkp+19ERR51+EomTfsKmZG+gcSeTT8Zva+Y3ox",
        "MUp49QoHSTIgAqwYc59FNwG/p/HrF9WtQsjsbX4NWDLcAW/4Pmnx/iNvM7r+CW/O",
        "pw_WHraKpmvUqUfC8mMk5B2k31uKYkM0IAA",
        "fyduSXDhfzmYONb5bxJ7",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmU"
        "gRG9lIiwiaWF0IjoxNzE2MjM5MDIyfQ.5MesI-gPW0oicz36ZfCIHM7abcAdeaOJAE99pIv5cTS",
        "ItZWJrr91Pdy!",
    ],
    "server.pem": [
        "ezArFQAMIa4DgfwkiDElFVbahN948OcND5qGDnp8X7pGR6f+JpkcPBe25q8xkNIm",
        "IBZ1bm0JTXe4mzRKhBCWUQoQ7QXo8uARfVNa7NnUlMOGWBjJfQHZqAmMzrc9VYYM",
        "/MAfJyyvCUdw2weBC8HzBiXoQDt1gslszwDWekkFuQj2jfm9iQzpzTbOXc7YzCwh",
        "JD8Mirhmtt+Oe0WwTaKkYQG/QLp7XLkFMrFAAlJxTOokd9jwsqyWN5Ll3ZmXki/r",
        "I3Ft598f5lqC094OHZmG0LIHOhjqDOsidD4+lXv0gLGBL1O/fvw1B4+RSfJUYZYu",
        "yqSa1ilt48afzP43X1oxlrD3sWzcw1xbLKyo+Lb/r3UrTNdhSKp3cORyj3fbgOtY",
        "1zKnqvQRTIjw14biBT0qqqgTUs1+MothGwyaHtx1WSeUAyb5rGPjshv/eDIKyd4/",
        "NH7MQI57tkg2U9PzvU/Nf7OwlsrTIaii1KoJtJWj/VZVA0qWilLET52kLMHbK/Cu",
        "wvgmrgVJBIXQ3kdLzPgE5yjT3Ct0DVV16xjXQKZTK9JAfE8g/T9o+v5sxxgFgoF4",
        "CPG7NnrAwVgfPWmkKrDKKhRqQOCfNTdfHpRTVzqA8klyag0ljgNDHhDRC0BXp3Qm",
        "ivC/r2dnPeF6IVklheqWoh2S9zXi5mb9H/19WBBtW/zXJlpTRWpw5wcPUkM6H4IW",
        "5XZs6OaogHSVB9WdcrFGZ2W2VR3VriqDODRph851Ln94Me3v+RYOcQQ0pxRwIJfE",
        "a0RXG3uaRlOZTsKuDosa8mJTYqgFqn6T9xPSbljO==",
        "Gs0jsnfDEQRJttVr+cFwyP+0N71uEnWRy3Yrz4mmTZP59PbRmKrfkdK/SPeS9JEaQzRD2F",
        "vPx1UVcN21qqF2F1EWtFoYfyNhXva9okQfHBIUi7GAZbN8t73XtZBdy+9XIr9+fnMtZMoV",
        "veMl2DAfW06B/EdOkaGn2eZUKDgO87/ZOXDSv0yF4/+/AFvfma6TyvLNSW+BwAhJH6xJAZ",
        "OTfkIMdo3Z5ny+G78ssGBGT+VlsW4mTB5l2HulIOpSeWyH04cwSNegF8kgZUqOHUtjLpIa",
        "Q7L6j63k9pK2b/nSkdjRBG/6UEFUXNohCWBTcP6YI0aVAYCqGr0GJbEBpPyj82M/h+T8/R",
    ],
    "aws_credentials": [
        "AKIA5BQXR7MZNP2KD3VL",
        "9hVq2+LxZ0rTnWb4/KcYe7uPdMs1GfJaNo",
        "FwoGZXIvYXdzEBYaDH7qk2Lm9xTr4Wb1/cRq8ZsYp",
    ],
    "client.js": [
        "ghs_aJB7qzPdCQY00ALDOHU9QT6abxKSKLUT0iCo",
        "sk_live_SlcKMs108ZacF6SekxWQSQci",
        "AIzaNZ_TQjMTrzzrq8kJrzNlY9t5i1_ie0SoLBf",
        "sk-4isHisfOYBauthCaypeY5zv31yGZJ6nXDQFtVDhCY98orKQx",
        "npm_RLDVLZvUlym1hXejEMggzbvffrSdcWwInrDM",
        "GP6faFpR0wzc!",
        "8Eupweuy9amgkBZC",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzdmMtb3JkZXJzIiwicm9sZSI6ImFkbWl"
        "uIiwiZXhwIjoxOTE2MjM5MDIyfQ.RspsDs6lK8cVrq64vWQPMBznWMeWhi5HJ7OnFhZUMoy",
    ],
}


def scrub_fixture(name: str, config: Config = CONFIG) -> tuple[str, str, dict[str, int]]:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    result = scrub(text, config, name)
    return text, result.text, result.counts


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_secrets_are_redacted(name: str) -> None:
    text, scrubbed, counts = scrub_fixture(name)
    for secret in SECRETS[name]:
        assert secret in text, f"fixture {name} lacks {secret}"
        assert secret not in scrubbed, f"{secret} survived in {name}"
    assert scrubbed.count("\n") == text.count("\n")
    assert counts == EXPECTED[name]
    assert set(counts) <= set(KINDS)
    for kept in KEPT[name]:
        assert kept in scrubbed, f"{kept!r} was lost from {name}"


def test_ordinary_code_is_left_alone() -> None:
    text, scrubbed, counts = scrub_fixture("not_secrets.py")
    assert counts == {}
    assert scrubbed == text


def test_pathspec_source_has_no_redactions() -> None:
    files = sorted(Path(pathspec.__file__).parent.rglob("*.py"))
    assert files
    total = sum(scrub(p.read_text("utf-8"), CONFIG, p.name).total for p in files)
    assert total == 0


def test_disabled_returns_text_unchanged() -> None:
    text = (FIXTURES / "app_settings.py").read_text()
    result = scrub(text, Config(scrub_secrets=False))
    assert result.text == text and result.counts == {} and result.total == 0


def test_entropy_settings_apply() -> None:
    literal = 'SIGNING_SALT = "C16+BjoN+jnLKLJp+Ugrg8p1EU4xc4HgknC8bWMGzjA0"\n'
    assert scrub(literal, CONFIG).counts == {"high-entropy": 1}
    assert scrub(literal, Config(entropy_min_length=50)).counts == {}
    assert scrub(literal, Config(entropy_threshold=5.5)).counts == {}
    assert shannon_entropy("aaaa") == 0.0 and shannon_entropy("ab") == 1.0


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ('password = "hunter2"', "password"),
        ("password: str = 'tiger-lily-9'", "password"),
        ('db.connect(host="db", passwd="Xy7#pq")', "password"),
        ("$db_pass = 'Sup3rS3cret';", "password"),
        ('"client_secret" => "8d7f6e5a4b3c2d1e0f9a8b7c",', "secret"),
        ('token := "a1b2c3d4e5f6a7b8"', "secret"),
        ('dbPassword: "Winter2024!"', "password"),
        ('conn = "Server=x;Uid=sa;Pwd=Pa55w0rd!;"', "connection-string"),
        ('url = "amqp://guest:Gu3stPa55@rabbit:5672/"', "connection-string"),
        ('auth = "Basic ZGVwbG95OlI3dFg5cVoybUs0dw=="', "basic-auth"),
        ("curl -H 'Authorization: Bearer abcDEF123ghiJKL456mnoPQR'", "bearer-token"),
        ("AKIAQ3EGUQ7TR2NVPX5M", "aws-access-key"),
        ("PASSWORD=swordfish", "password"),
    ],
)
def test_detects(line: str, kind: str) -> None:
    result = scrub(line + "\n", CONFIG)
    assert result.counts == {kind: 1}, result.text
    assert f"«redacted:{kind}»" in result.text


@pytest.mark.parametrize(
    "line",
    [
        'password = ""',
        "password = password",
        "def f(password: str) -> None: ...",
        'password = os.environ["DB_PASSWORD"]',
        'api_key = os.getenv("API_KEY")',
        'token = getenv("TOKEN", "")',
        'password = "${DB_PASSWORD}"',
        'api_key = "<your-key>"',
        'password = f"{prefix}-{suffix}"',
        'if password == "admin": pass',
        'bypass = "fast-track-123456"',
        'token = "IDENTIFIER"',
        'label = "password"',
        'uuid = "123e4567-e89b-12d3-a456-426614174000"',
        'sha = "3f786850e387550fdab836ed7e6dc881de23001b"',
        'url = "https://example.com/a/b?token=abc"',
        'url = "postgres://user:pass@localhost/db"',
        "from pkg.auth.tokens import TokenStore",
        'msg = "Please enter your password to continue."',
        'password: "********"',
        'key = "abcdefghijklmnopqrstuvwxyz0123456789"',
        "db_password: str | None = None",
        'publicKeyToken = "b77a5c561934e089"',
        "- run: echo ${{ secrets.TOKEN }}",
        'name = "runwayml/stable-diffusion-v1-5"',
        'auth = "Basic dXNlcjpwYXNzd29yZA=="',
        "AKIAIOSFODNN7EXAMPLE",
    ],
)
def test_keeps(line: str) -> None:
    result = scrub(line + "\n", CONFIG)
    assert result.counts == {}, result.text
    assert result.text == line + "\n"


def test_config_files_redact_unquoted_values_code_does_not() -> None:
    yaml = "db:\n  password: s3cr3t-Pa55\n  token: 0a1b2c3d4e5f6a7b8c9d\n"
    assert scrub(yaml, CONFIG, "deploy/values.yaml").counts == {"password": 1, "secret": 1}
    assert scrub(yaml, CONFIG, "notes.py").counts == {}
    ini = "[db]\npassword = s3cr3t-Pa55\n"
    assert scrub(ini, CONFIG, "setup.cfg").counts == {"password": 1}


# --- Secrets that used to get through (QA report) ------------------------------------

AWS_CREDENTIALS = """\
[default]
aws_access_key_id = AKIAQ3EGUQ7TR2NVPX5M
aws_secret_access_key = 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
region = eu-west-1

[deploy]
aws_access_key_id=AKIA5W2RZ7XKQ4MTB9NE
aws_secret_access_key=k3Jd8+Fq0ZpLw7Xv2Rn5Tb9Ym4Hc6Ge1Sa/UoPiQ
"""


@pytest.mark.parametrize("path", [".aws/credentials", "deploy/credentials", "docs/aws.md"])
def test_aws_credentials_file_is_redacted(path: str) -> None:
    result = scrub(AWS_CREDENTIALS, CONFIG, path)
    assert result.counts == {"aws-access-key": 2, "aws-secret-key": 2}, result.text
    assert "Hq7vR2mK9xTz4LpW8nB3cY6dF1sJ0gA5eU+iO/Nl" not in result.text
    assert "k3Jd8+Fq0ZpLw7Xv2Rn5Tb9Ym4Hc6Ge1Sa/UoPiQ" not in result.text
    assert "aws_secret_access_key = «redacted:aws-secret-key»\n" in result.text
    assert "[default]\n" in result.text and "region = eu-west-1\n" in result.text


SENDGRID_KEY = "SG.aBcDeFgHiJkLmNoPqRsTuV.wXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01"
SENDGRID_KEY_43 = "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"


@pytest.mark.parametrize(
    ("text", "path"),
    [
        (f'sgMail.setApiKey("{SENDGRID_KEY}");\n', "mailer.js"),
        (f"client = SendGridAPIClient('{SENDGRID_KEY_43}')\n", "mail.py"),
        (f"SENDGRID_API_KEY={SENDGRID_KEY_43}\n", ".env"),
        (f"curl -H 'Authorization: Bearer {SENDGRID_KEY}' https://api.sendgrid.com\n", "a.sh"),
    ],
)
def test_sendgrid_key_is_redacted(text: str, path: str) -> None:
    result = scrub(text, CONFIG, path)
    assert result.counts == {"sendgrid-key": 1}, result.text
    assert "SG." not in result.text and "«redacted:sendgrid-key»" in result.text


def test_sendgrid_like_names_are_kept() -> None:
    line = "SG.InternalRoutingTable.resolveDefaultGatewayForTenantNetworkSegment(x)\n"
    assert scrub(line, CONFIG, "net.py").counts == {}


DOCKERFILE = """\
FROM python:3.12-slim
ARG TOKEN=ghx7Kq2LmX9vT4nB7kW1
ARG PIP_INDEX_URL
env API_SECRET=q8Zr2LmX9vT4nB7kW1pY
ENV API_SECRET Lm4Wq9Xz2Rt7Yb3Nc8Vd
ENV LOG_LEVEL=info DB_PASSWORD=Pr0d-Pa55-w0rd APP_HOME=/app
ENV APP_USER=svc \\
    SERVICE_TOKEN=Zk3nP8qR2sT6vW9xY1aB \\
    PORT=8080
ENV PASSWORD_FILE=/run/secrets/db API_KEY=${API_KEY}
RUN pip install --no-cache-dir -r requirements.txt
"""
DOCKER_SECRETS = (
    "ghx7Kq2LmX9vT4nB7kW1",
    "q8Zr2LmX9vT4nB7kW1pY",
    "Lm4Wq9Xz2Rt7Yb3Nc8Vd",
    "Pr0d-Pa55-w0rd",
    "Zk3nP8qR2sT6vW9xY1aB",
)


@pytest.mark.parametrize("path", ["Dockerfile", "docker/Dockerfile.prod", "build/api.dockerfile"])
def test_dockerfile_env_and_arg_values_are_redacted(path: str) -> None:
    result = scrub(DOCKERFILE, CONFIG, path)
    for secret in DOCKER_SECRETS:
        assert secret not in result.text, f"{secret} survived"
    assert result.counts == {"secret": 4, "password": 1}, result.text
    for kept in (
        "ARG TOKEN=«redacted:secret»\n",
        "ENV API_SECRET «redacted:secret»\n",
        "ENV LOG_LEVEL=info DB_PASSWORD=«redacted:password» APP_HOME=/app\n",
        "    SERVICE_TOKEN=«redacted:secret» \\\n",
        "ARG PIP_INDEX_URL\n",
        "ENV PASSWORD_FILE=/run/secrets/db API_KEY=${API_KEY}\n",
    ):
        assert kept in result.text, kept
    assert result.text.count("\n") == DOCKERFILE.count("\n")


def test_gcp_service_account_key_id_and_key_are_redacted() -> None:
    key_id = "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"
    text = (
        '{\n  "type": "service_account",\n  "project_id": "billing-prod",\n'
        f'  "private_key_id": "{key_id}",\n'
        '  "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC'
        'BKcwggSjAgEAAoIBAQC7\\n-----END PRIVATE KEY-----\\n",\n'
        '  "client_email": "billing@billing-prod.iam.gserviceaccount.com"\n}\n'
    )
    result = scrub(text, CONFIG, "deploy/service-account.json")
    assert result.counts == {"secret": 1, "private-key": 1}, result.text
    assert key_id not in result.text and "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" not in result.text
    assert '"private_key_id": "«redacted:secret»"' in result.text


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        (
            'TWILIO_ACCOUNT_SID = "AC0123456789abcdef0123456789abcdef"',
            "AC0123456789abcdef0123456789abcdef",
        ),
        (
            'client = Client("AC9f8e7d6c5b4a39281706f5e4d3c2b1a0", auth_token)',
            "AC9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        ),
        ("api_key_sid: SK5d4c3b2a19f8e7d6c5b4a3928170a6f5", "SK5d4c3b2a19f8e7d6c5b4a3928170a6f5"),
    ],
)
def test_twilio_sids_are_redacted(line: str, secret: str) -> None:
    result = scrub(line + "\n", CONFIG, "notify.py")
    assert result.counts == {"twilio-sid": 1}, result.text
    assert secret not in result.text


@pytest.mark.parametrize(
    ("question", "secret", "kind"),
    [
        (
            "why does ghp_yGeFyjkzSzmyGTujufPCLaW9J8pKudWjvw8T get a 401 from the API?",
            "ghp_yGeFyjkzSzmyGTujufPCLaW9J8pKudWjvw8T",
            "github-token",
        ),
        ("where is AKIAQ3EGUQ7TR2NVPX5M used", "AKIAQ3EGUQ7TR2NVPX5M", "aws-access-key"),
        ("login fails with password=S3cr3t-Pr0d-Pa55 on staging", "S3cr3t-Pr0d-Pa55", "password"),
        ("what reads token: 0a1b2c3d4e5f6a7b8c9d in the worker?", "0a1b2c3d4e5f6a7b8c9d", "secret"),
    ],
)
def test_scrub_text_redacts_secrets_in_a_question(question: str, secret: str, kind: str) -> None:
    scrubbed = scrub_text(question)
    assert secret not in scrubbed and f"«redacted:{kind}»" in scrubbed
    assert scrub_text(question, Config(scrub_secrets=False)) == question


@pytest.mark.parametrize(
    "question",
    [
        "how is the password hashed before it is stored?",
        "where is password: str validated",
        "what does token=None mean in refresh()",
        "who calls AuthService.check_token",
    ],
)
def test_scrub_text_keeps_ordinary_questions(question: str) -> None:
    assert scrub_text(question) == question


# --- Harmless test and documentation values (QA report) ------------------------------


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("tests/test_http.py", 'headers = {"Authorization": "Basic dXNlcjpwYXNz"}'),
        ("tests/test_http.py", "Authorization: Basic dXNlcjpwYXNzd29yZA=="),
        ("docs/auth.md", "Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="),
        ("tests/test_http.py", 'auth = "Basic dGVzdDp0ZXN0"'),
        ("tests/test_urls.py", 'assert parse("hTTp://u:p@Some.Host").host == "some.host"'),
        ("tests/test_urls.py", 'url = "http://user:pass@example.com"'),
        ("tests/test_urls.py", 'url = "https://foo:bar@example.org/path"'),
        ("tests/test_urls.py", 'url = "http://username:password@localhost:8080/"'),
        ("tests/test_urls.py", 'url = "https://alice:wonderland@api.example.com/v1"'),
        ("tests/test_urls.py", 'url = "amqp://guest:guest@rabbit:5672/"'),
        ("docs/aws.md", "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE"),
        ("docs/aws.md", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        ("aws_docs.py", 'AWS_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"'),
        ("aws_docs.py", 'secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"'),
        ("aws_docs.py", 'key = "AKIAIOSFODNN7EXAMPLE"'),
        (
            "tests/test_digest.py",
            'hdr = \'Digest realm="testrealm@host.com", qop="auth,auth-int", '
            'nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", '
            'opaque="5ccc069c403ebaf9f0171e9517f40e41"\'',
        ),
        ("tests/test_digest.py", 'nonce = "MTU4NjIyMzQ0NS4xMjM0NTY6YWJjZGVmZ2hpams="'),
        ("tests/test_digest.py", 'params = {"cnonce": "Vk2xQ9pLm4Rt7Yb3Nc8Wd6Fh"}'),
        ("tests/test_csrf.py", 'csrf_token = "Kq8Zr2LmX9vT4nB7kW1pYx3"'),
        ("tests/test_csrf.py", 'client.cookies["csrftoken"] = "x8GqPe2BXn4aHfKJ9wTzPLcQ3sRmUv7d"'),
        ("tests/test_csrf.py", 'headers = {"X-CSRFToken": "x8GqPe2BXn4aHfKJ9wTzPLcQ3sRmUv7d"}'),
        ("tests/test_csrf.py", 'data = {"csrfmiddlewaretoken": "x8GqPe2BXn4aHfKJ9wTzPLcQ3sRmUv"}'),
        (
            "templates/base.html",
            '<script src="/static/app.js" integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/'
            'uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC" crossorigin="anonymous"></script>',
        ),
        (
            "package-lock.json",
            '"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXGOBO'
            'bhQ9xC9nqtvxQrGd83tpYw=="',
        ),
        (
            "static/app.js",
            'const DOT = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA'
            '60e6kgAAAABJRU5ErkJggg==";',
        ),
        (
            "static/app.js",
            'img.src = "data:image/png;base64," + '
            '"iVBORw0KGgoAAAANSUhEUgAAAAUAAAAFCAYAAACNbyblAAAAH'
            'ElEQVQI12P4//8/w38GIAXDIBKE0DHxgljNBAAO9TXL0Y4OHwAAAABJRU5ErkJggg==";',
        ),
        (
            "tests/test_img.py",
            'JPEG = "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkI"',
        ),
        ("tests/test_img.py", 'GIF = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"'),
        (
            "web/index.html",
            '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAUAAAAFCAYAAACNbyblAAAAH'
            'ElEQVQI12P4//8/w38GIAXDIBKE0DHxgljNBAAO9TXL0Y4OHwAAAABJRU5ErkJggg==">',
        ),
    ],
)
def test_keeps_test_vectors_and_public_values(path: str, line: str) -> None:
    result = scrub(line + "\n", CONFIG, path)
    assert result.counts == {}, result.text
    assert result.text == line + "\n"


@pytest.mark.parametrize(
    ("path", "line", "kind"),
    [
        (
            "tests/test_db.py",
            'url = "postgres://app:S3cr3t-Pr0d-Pa55@db.internal:5432/app"',
            "connection-string",
        ),
        (
            "tests/test_db.py",
            'url = "https://deploy:Kx9mP2qLw7@api.example.com/"',
            "connection-string",
        ),
        ("tests/test_http.py", "Authorization: Basic ZGVwbG95OkN1NXZKUDVncTNxSUNp", "basic-auth"),
        ("app.py", 'AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLQ"', "aws-access-key"),
        ("settings.py", 'CSRF_SECRET_KEY = "x8GqPe2BXn4aHfKJ9wTzPLcQ3sRmUv7d"', "secret"),
        ("settings.py", 'WTF_CSRF_SECRET_KEY = "Kq8Zr2LmX9vT4nB7kW1pYx3"', "secret"),
        ("tests/test_csrf.py", 'signing = "x8GqPe2BXn4aHfKJ9wTzPLcQ3sRmUv7dhJf"', "high-entropy"),
        (
            "static/app.js",
            'const KEY = "iVBORxQ9pLm4Rt7Yb3Nc8Wd6FhKq8Zr2LmX9vT4nB7kW1";',
            "high-entropy",
        ),
    ],
)
def test_real_values_beside_the_exemptions_are_redacted(path: str, line: str, kind: str) -> None:
    result = scrub(line + "\n", CONFIG, path)
    assert result.counts == {kind: 1}, result.text


def test_keys_with_crlf_and_unicode_keep_lines() -> None:
    text = (
        "# café ☕ config\r\n"
        'password = "Ünïcode-Pa55"\r\n'
        "-----BEGIN EC PRIVATE KEY-----\r\n"
        "MHcCAQEEIBn3c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0oAoGCCqGSM49\r\n"
        "-----END EC PRIVATE KEY-----\r\n"
        "DB_PASSWORD=plainPa55\r\n"
    )
    result = scrub(text, CONFIG, ".env")
    assert result.counts == {"password": 2, "private-key": 1}
    assert result.text.count("\r\n") == text.count("\r\n") == 6
    assert result.text.splitlines() == [
        "# café ☕ config",
        'password = "«redacted:password»"',
        "-----BEGIN EC PRIVATE KEY-----",
        "«redacted:private-key»",
        "-----END EC PRIVATE KEY-----",
        "DB_PASSWORD=«redacted:password»",
    ]


FRAGMENTS = [
    "\n",
    "\r\n",
    " ",
    'password = "',
    '"',
    "'",
    "=",
    ":",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MZ",
    "ghp_yGeFyjkzSzmyGTujufPCLaW9J8pKudWjvw8T",
    "postgres://u:p4ss@h/db",
    "token: ",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlc2lnbmF0",
    "é",
    "\\n",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=40))
def test_line_count_never_changes(parts: list[str]) -> None:
    text = "".join(parts)
    result = scrub(text, CONFIG, ".env")
    assert result.text.count("\n") == text.count("\n")
    assert result.text.count("\r") == text.count("\r")
    assert result.total == sum(result.counts.values())


DOCKER_FRAGMENTS = [*FRAGMENTS, "ENV ", "ARG ", "env ", "API_TOKEN", "=", " \\", "\\\n", '"', "SG."]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(DOCKER_FRAGMENTS), st.text(max_size=8)), max_size=40))
def test_line_count_never_changes_in_dockerfiles_and_free_text(parts: list[str]) -> None:
    text = "".join(parts)
    result = scrub(text, CONFIG, "Dockerfile")
    assert result.text.count("\n") == text.count("\n")
    assert result.text.count("\r") == text.count("\r")
    free = scrub_text(text)
    assert free.count("\n") == text.count("\n") and free.count("\r") == text.count("\r")


def test_throughput_on_ordinary_source() -> None:
    files = sorted(Path(pathspec.__file__).parent.parent.glob("[a-h]*/**/*.py"))[:400]
    texts = [p.read_text("utf-8", "replace") for p in files]
    size = sum(len(t.encode()) for t in texts)
    start = time.process_time()  # CPU time: other processes on the machine do not count
    for text in texts:
        scrub(text, CONFIG)
    rate = size / 1e6 / max(time.process_time() - start, 1e-9)
    assert rate > 5, f"scrub ran at {rate:.1f} MB/s"  # ~30 MB/s measured; catches regressions


# --- free text: values pasted without their key names (issue 21) ---------------------------
ALL_SECRET_VALUES = sorted({v for values in SECRETS.values() for v in values})
#: Hex of at most 40 characters pasted without its key name reads as a git commit id (or
#: an abbreviation of one) and is kept (issue 39); with its key name it is redacted
#: (the fixture files above, tests/fixtures/pasted.json).
HEX_ID = re.compile(r"[0-9a-f]{7,40}|[0-9A-F]{7,40}")
BARE_SECRET_VALUES = [v for v in ALL_SECRET_VALUES if not HEX_ID.fullmatch(v)]


def test_only_hex_ids_are_kept_bare() -> None:
    kept = sorted(set(ALL_SECRET_VALUES) - set(BARE_SECRET_VALUES))
    assert kept == ["07d6d647cc983f11a8e3347105a8bb2b", "e858a24758eb4b462f4df69842042c9ff3e155ab"]
    for value in kept:
        assert scrub_text(f"why does this fail: {value}") == f"why does this fail: {value}"
        assert value not in scrub_text(f"SECRET_KEY={value} fails")


@pytest.mark.parametrize("value", BARE_SECRET_VALUES)
def test_a_bare_value_in_a_question_is_redacted(value: str) -> None:
    for question in (f"why does this fail: {value}", f'{{"query": "login with {value}"}}'):
        scrubbed = scrub_text(question)
        assert value not in scrubbed, scrubbed
        assert scrubbed.startswith(question[:10])


def test_a_pasted_private_key_without_its_end_line_is_redacted() -> None:
    key = (FIXTURES / "server.pem").read_text().split("-----END")[0]  # cut off mid-paste
    scrubbed = scrub_text(f"deploy fails with this key:\n{key}")
    assert "BEGIN" in scrubbed
    for line in SECRETS["server.pem"][:12]:
        assert line not in scrubbed


@pytest.mark.parametrize(
    "question",
    [
        "why does get_user_by_id return None for 123e4567-e89b-12d3-a456-426614174000?",
        "TypeError in shop/pricing.py:25-34 apply_loyalty_discount(amount, tier)",
        "Int32Array vs Float64Array in utf8 decoding, HTTP2Server and OAuth2Client",
        "segfault at 0x7f3a2b1c4d5e in libssl.so.3 (python 3.11.4, node v20.11.1)",
        "TestBodyBindingUseNumber2 and testRouteNotOK2 fail since release 2.4.0",
        "the SHA256 of the file is listed in CHECKSUMS; see RFC7519 section 4.1",
        "where is the VIP discount computed? customers with tier GOLD get 10%",
    ],
)
def test_ordinary_questions_keep_their_words(question: str) -> None:
    assert scrub_text(question) == question
