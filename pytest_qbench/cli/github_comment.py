"""``qbench pr-comment --post``: create or update one comment on a pull request through GitHub's
REST API (``/repos/{owner}/{repo}/issues/...``), found again by its hidden marker.

Everything comes from what GitHub Actions provides: ``GITHUB_TOKEN`` (passed in the step's
``env``), ``GITHUB_REPOSITORY``, ``GITHUB_API_URL`` and the event file ``GITHUB_EVENT_PATH``
(the pull request's number), unless ``--pr`` gives the number.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_qbench.core.errors import QBenchError


API_VERSION = "2022-11-28"
"""The REST API version asked for (``X-GitHub-Api-Version``)."""
TIMEOUT = 30.0
"""Seconds one request may take."""
MAX_PAGES = 50
"""Pages of 100 comments read while looking for ours."""


@dataclass(frozen=True)
class Target:
    """Where the comment goes."""

    api_url: str
    repository: str
    number: int
    token: str


def target_from_env(environ: Mapping[str, str], number: int | None = None) -> Target:
    """The pull request of this workflow run.

    Raises:
        QBenchError: a variable is missing, or the event names no pull request.
    """
    token = environ.get("GITHUB_TOKEN", "")
    if not token:
        raise QBenchError(
            "--post needs GITHUB_TOKEN in the environment; add 'env: GITHUB_TOKEN: "
            "${{ secrets.GITHUB_TOKEN }}' to the step (with 'permissions: pull-requests: write')"
        )
    repository = environ.get("GITHUB_REPOSITORY", "")
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repository):
        raise QBenchError(
            f"--post needs GITHUB_REPOSITORY as owner/name, given: {repository!r}; "
            "run it in GitHub Actions, or set it"
        )
    if number is None:
        number = _event_number(environ.get("GITHUB_EVENT_PATH", ""))
    api_url = (environ.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
    return Target(api_url, repository, number, token)


def _event_number(path: str) -> int:
    """The pull request's number in the event file (``pull_request`` events, ``issue_comment``
    on a pull request, ``workflow_run`` of a same-repository pull request)."""
    if not path:
        raise QBenchError("--post needs GITHUB_EVENT_PATH (set by GitHub Actions) or --pr NUMBER")
    try:
        event: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise QBenchError(f"cannot read the event file {path}: {exc}") from None
    found = pull_request_number(event)
    if not isinstance(found, int):
        raise QBenchError(
            f"the event in {path} names no pull request; run on 'pull_request' events, or "
            "give --pr NUMBER (a workflow_run of a fork's pull request: see the two-workflow "
            "recipe in the docs)"
        )
    return found


def pull_request_number(event: Mapping[str, Any]) -> int | None:
    """The pull request an Actions event is about, if any."""
    pull_request = event.get("pull_request") or {}
    if isinstance(pull_request.get("number"), int):
        return int(pull_request["number"])
    issue = event.get("issue") or {}
    if issue.get("pull_request") and isinstance(issue.get("number"), int):
        return int(issue["number"])
    runs: list[Any] = (event.get("workflow_run") or {}).get("pull_requests") or []
    if runs and isinstance(runs[0].get("number"), int):
        return int(runs[0]["number"])
    return None


def post_comment(target: Target, body: str, marker: str) -> tuple[str, int]:
    """Update the pull request's comment holding ``marker``, else create one; return
    (``"updated"`` or ``"created"``, the comment's id).

    Raises:
        QBenchError: GitHub refused a request or could not be reached.
    """
    repo = f"{target.api_url}/repos/{target.repository}"
    existing = _find(target, f"{repo}/issues/{target.number}/comments", marker)
    if existing is not None:
        answer = _request(target, "PATCH", f"{repo}/issues/comments/{existing}", {"body": body})
        return "updated", int(answer[0]["id"])
    answer = _request(target, "POST", f"{repo}/issues/{target.number}/comments", {"body": body})
    return "created", int(answer[0]["id"])


def _find(target: Target, url: str, marker: str) -> int | None:
    """The id of the first comment whose body holds ``marker``, through every page."""
    next_url: str | None = f"{url}?per_page=100"
    for _ in range(MAX_PAGES):
        if next_url is None:
            return None
        comments, links = _request(target, "GET", next_url)
        for comment in comments:
            if marker in str(comment.get("body") or ""):
                return int(comment["id"])
        next_url = links.get("next")
    return None


def _request(
    target: Target, method: str, url: str, payload: dict[str, Any] | None = None
) -> tuple[Any, dict[str, str]]:
    """One API request; the JSON answer and the ``Link`` header's URLs by relation."""
    data = None if payload is None else json.dumps(payload).encode("utf-8")
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Accept", "application/vnd.github+json")
    request.add_header("Authorization", f"Bearer {target.token}")
    request.add_header("X-GitHub-Api-Version", API_VERSION)
    request.add_header("User-Agent", "pytest-qbench")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            text = response.read().decode("utf-8")
            links = parse_links(response.headers.get("Link", ""))
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:300]
        raise QBenchError(
            f"GitHub answered {exc.code} to {method} {url}: {detail}; check the token's "
            "permissions (pull-requests: write)"
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        raise QBenchError(f"cannot reach GitHub at {url}: {exc}") from None
    return json.loads(text) if text else None, links


def parse_links(header: str) -> dict[str, str]:
    """``<url>; rel="next", <url>; rel="last"`` as ``{"next": url, "last": url}``."""
    found = {}
    for url, rel in re.findall(r'<([^>]+)>\s*;\s*rel="([^"]+)"', header):
        found[rel] = url
    return found
