"""Which CI system a run is on, and its commit, branch and job link, from the provider's
environment variables (the report's ``environment.ci``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict


class CIFacts(TypedDict, total=False):
    """What a CI provider says about the run: the fields of the report's ``CIInfo``."""

    provider: str
    commit: str | None
    branch: str | None
    build_url: str | None


def detect_ci(environ: Mapping[str, str]) -> CIFacts | None:
    """Recognise the CI provider from its environment variables (``None``: not on a CI)."""
    get = environ.get
    if get("GITHUB_ACTIONS") == "true":
        server, repo, run = get("GITHUB_SERVER_URL"), get("GITHUB_REPOSITORY"), get("GITHUB_RUN_ID")
        url = f"{server}/{repo}/actions/runs/{run}" if server and repo and run else None
        branch = get("GITHUB_HEAD_REF") or get("GITHUB_REF_NAME")
        return CIFacts(
            provider="github-actions",
            commit=get("GITHUB_SHA"),
            branch=branch,
            build_url=url,
        )
    if get("GITLAB_CI"):
        return CIFacts(
            provider="gitlab-ci",
            commit=get("CI_COMMIT_SHA"),
            branch=get("CI_COMMIT_REF_NAME"),
            build_url=get("CI_JOB_URL"),
        )
    if get("TF_BUILD"):
        return CIFacts(
            provider="azure-pipelines",
            commit=get("BUILD_SOURCEVERSION"),
            branch=get("BUILD_SOURCEBRANCHNAME"),
        )
    if get("CIRCLECI"):
        return CIFacts(
            provider="circleci",
            commit=get("CIRCLE_SHA1"),
            branch=get("CIRCLE_BRANCH"),
            build_url=get("CIRCLE_BUILD_URL"),
        )
    if get("BUILDKITE"):
        return CIFacts(
            provider="buildkite",
            commit=get("BUILDKITE_COMMIT"),
            branch=get("BUILDKITE_BRANCH"),
            build_url=get("BUILDKITE_BUILD_URL"),
        )
    if get("JENKINS_URL"):
        return CIFacts(
            provider="jenkins",
            commit=get("GIT_COMMIT"),
            branch=get("BRANCH_NAME") or get("GIT_BRANCH"),
            build_url=get("BUILD_URL"),
        )
    if get("CI"):
        return CIFacts(provider="unknown")
    return None


__all__ = ["CIFacts", "detect_ci"]
