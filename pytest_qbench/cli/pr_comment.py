"""``qbench pr-comment``: the Markdown of one pull-request comment, printed, written or posted."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from pytest_qbench.core.exit_codes import OK
from pytest_qbench.core.numbers import parse_output
from pytest_qbench.core.numbers import parse_path


if TYPE_CHECKING:
    from pytest_qbench.cli.github_comment import Target
    from pytest_qbench.history.pr_comment import Coverage
    from pytest_qbench.history.queries import RunInfo

    SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]


def add_pr_comment_parser(sub: SubParsers) -> None:
    """``qbench pr-comment``'s arguments."""
    from pytest_qbench.cli.history import _parser
    from pytest_qbench.cli.history import _positive
    from pytest_qbench.cli.history import add_slower_options

    parser = _parser(
        sub,
        "pr-comment",
        "Markdown for one pull-request comment: what changed against a base run",
        "Write the Markdown of a pull-request comment for RUN (default: the last run, or the "
        "merged run of its CI shards) against "
        "--base: the counts and their change, new failures first (with fingerprints; a "
        "returning failure says so), fixed tests, tests that passed only after reruns (flaky, "
        "not fixed), known flaky failures set aside, tests added and removed, the slowest "
        "changes, coverage. At most 65 536 characters (cut with a note). With --post, create "
        "or update the pull request's comment on GitHub. It renders, it is no gate: its exit "
        "status is 0 once the comment is written or posted, red or not (a new failure, a run "
        "that did not finish); 'qbench diff' with the same runs is the gate (status 1 exactly "
        "when the headline is red).",
        cmd_pr_comment,
    )
    parser.add_argument(
        "run",
        nargs="?",
        metavar="RUN",
        help="The run (id, prefix, last, last~N). Default: the last run; when it is a CI "
        "shard, the merged run of its shards (qbench merge), refused when none is indexed",
    )
    parser.add_argument(
        "--base",
        metavar="RUN|BRANCH",
        help="The run to compare with (id, prefix, last~N), or a branch: its newest run. "
        "Default: the run before RUN that is not a CI shard (unless RUN is one)",
    )
    parser.add_argument(
        "-o", "--output", type=parse_output, help="Write the Markdown here. Default: stdout"
    )
    parser.add_argument(
        "--post",
        action="store_true",
        help="Create or update the comment on the pull request through GitHub's REST API "
        "(GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_EVENT_PATH)",
    )
    parser.add_argument(
        "--pr", type=_positive, metavar="NUMBER", help="The pull request. Default: the event's"
    )
    parser.add_argument(
        "--body",
        type=parse_path,
        metavar="FILE",
        help="Post this comment, written before by 'qbench pr-comment -o FILE' (a second "
        "workflow, for pull requests from forks), instead of one from the index",
    )
    parser.add_argument(
        "--quarantine-file",
        type=parse_path,
        metavar="FILE",
        help="The quarantine kept in this file (as qbench_quarantine_file), not in the index",
    )
    add_slower_options(parser)


def cmd_pr_comment(args: argparse.Namespace) -> int:
    """``qbench pr-comment``."""
    from pytest_qbench.cli.history import _opened
    from pytest_qbench.cli.history import refuse_a_last_run_of_another_commit
    from pytest_qbench.cli.history import refuse_a_later_run_without_tests
    from pytest_qbench.history.compare import diff_runs
    from pytest_qbench.history.pr_comment import base_run
    from pytest_qbench.history.pr_comment import head_fingerprints
    from pytest_qbench.history.pr_comment import head_run
    from pytest_qbench.history.pr_comment import pr_comment
    from pytest_qbench.history.pr_comment import quarantined_known
    from pytest_qbench.history.thresholds import Thresholds

    target = None
    if args.post:  # a missing token or event is said before any work
        from pytest_qbench.cli.github_comment import target_from_env

        target = target_from_env(os.environ, args.pr)
    if args.body is not None:
        return _post_prepared(args.body, target)
    thresholds = Thresholds(slower_pct=args.slower_pct, slower_secs=args.slower_secs)
    with _opened(args) as index:
        head = head_run(index, args.run)
        if args.run is None:  # "the last run": never an older one than pytest's last
            refuse_a_later_run_without_tests(args.qbench_dir, head, "qbench pr-comment")
            refuse_a_last_run_of_another_commit(head, "qbench pr-comment")
        base = base_run(index, head, args.base)
        diff = diff_runs(index, base, head, thresholds) if base is not None else None
        fingerprints = head_fingerprints(index, head.run_id)
        quarantined = (
            set()
            if diff is None
            else quarantined_known(index, head, diff, fingerprints, args.quarantine_file)
        )
    coverage = _coverage(args.qbench_dir, head, base)
    body = pr_comment(head, diff, fingerprints, coverage, quarantined=quarantined)
    posted: dict[str, Any] | None = None
    if target is not None:
        posted = _post(target, body)
    if args.json:
        from pytest_qbench.history.json_models import PostedComment
        from pytest_qbench.history.json_models import PrCommentOutput

        data = PrCommentOutput(
            head=head.run_id,
            base=base.run_id if base else None,
            body=body,
            length=len(body),
            posted=None if posted is None else PostedComment(**posted),
        )
        print(json.dumps(data.model_dump(mode="json"), indent=2, ensure_ascii=False))
    elif args.output:
        from pytest_qbench.core.atomic import write_text_atomic

        write_text_atomic(args.output, body)
    elif not args.post:
        sys.stdout.write(body)
    return OK


def _post_prepared(path: Path, target: Target | None) -> int:
    """``--body FILE --post``: post a comment written earlier (bounded, with the marker)."""
    from pytest_qbench.core.errors import QBenchError
    from pytest_qbench.history.pr_comment import MARKER
    from pytest_qbench.history.pr_comment import trim

    if target is None:
        raise QBenchError("--body FILE is for posting a prepared comment; add --post")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise QBenchError(f"cannot read --body {path}: {exc.strerror or exc}") from None
    _post(target, trim(text if text.startswith(MARKER) else f"{MARKER}\n{text}"))
    return OK


def _post(target: Target, body: str) -> dict[str, Any]:
    """Create or update the comment; say which on stderr."""
    from pytest_qbench.cli.github_comment import post_comment
    from pytest_qbench.history.pr_comment import MARKER

    action, comment_id = post_comment(target, body, MARKER)
    print(
        f"qbench: {action} comment {comment_id} on pull request #{target.number}", file=sys.stderr
    )
    return {"action": action, "comment_id": comment_id, "pull_request": target.number}


def _coverage(qbench_dir: Path | None, head: RunInfo, base: RunInfo | None) -> Coverage:
    """Total coverage of both runs, from their ``report.json`` in the run store (when there)."""
    from pytest_qbench.history.pr_comment import Coverage
    from pytest_qbench.report.coverage.view import total_text

    measured = _coverage_of(qbench_dir, head.run_id)
    before = _coverage_of(qbench_dir, base.run_id) if base is not None else {}
    percentage = _percentage(measured)
    known = percentage is not None and "lines_total" in measured
    return Coverage(
        head=percentage,
        base=_percentage(before),
        head_text=total_text(measured) if known else None,
        same_measure=(measured.get("branches_total") is None)
        == (before.get("branches_total") is None),
    )


def _coverage_of(qbench_dir: Path | None, run_id: str) -> dict[str, Any]:
    """The ``coverage`` block of the run's ``report.json`` in the run store; empty when none."""
    from pytest_qbench.report import store

    if qbench_dir is None:
        return {}
    path = qbench_dir / store.RUNS_DIR / run_id / store.REPORT_JSON
    try:
        coverage = json.loads(path.read_text(encoding="utf-8")).get("coverage") or {}
    except (OSError, ValueError):
        return {}
    return coverage if isinstance(coverage, dict) else {}


def _percentage(coverage: dict[str, Any]) -> float | None:
    value = coverage.get("percentage")
    return float(value) if isinstance(value, (int, float)) else None
