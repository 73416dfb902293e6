"""Which CI system a run is on, and its commit, branch and job link, from the provider's
environment variables (the report's ``environment.ci``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING


if TYPE_CHECKING:
    from typing import TypedDict

    class CIFacts(TypedDict, total=False):
        """What a CI provider says about the run: the fields of the report's ``CIInfo``."""

        provider: str
        commit: str | None
        branch: str | None
        build_url: str | None

else:  # a TypedDict is a dict at run time; its class costs 0.4 M instructions to make (issue 28)
    CIFacts = dict


PROVIDERS: tuple[tuple[str, str, str, tuple[str, ...], str | None], ...] = (
    ("GITLAB_CI", "gitlab-ci", "CI_COMMIT_SHA", ("CI_COMMIT_REF_NAME",), "CI_JOB_URL"),
    ("TF_BUILD", "azure-pipelines", "BUILD_SOURCEVERSION", ("BUILD_SOURCEBRANCHNAME",), None),
    ("CIRCLECI", "circleci", "CIRCLE_SHA1", ("CIRCLE_BRANCH",), "CIRCLE_BUILD_URL"),
    ("BUILDKITE", "buildkite", "BUILDKITE_COMMIT", ("BUILDKITE_BRANCH",), "BUILDKITE_BUILD_URL"),
    ("JENKINS_URL", "jenkins", "GIT_COMMIT", ("BRANCH_NAME", "GIT_BRANCH"), "BUILD_URL"),
)
"""(variable that marks the provider, provider, commit variable, branch variables (first set
wins), job link variable) of the providers other than GitHub Actions, which builds its link."""


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
    for marker, provider, commit, branches, url in PROVIDERS:
        if get(marker):
            branch = next((b for name in branches if (b := get(name))), None)
            return CIFacts(
                provider=provider,
                commit=get(commit),
                branch=branch,
                build_url=get(url) if url else None,
            )
    if get("CI"):
        return CIFacts(provider="unknown")
    return None


__all__ = ["CIFacts", "detect_ci"]
