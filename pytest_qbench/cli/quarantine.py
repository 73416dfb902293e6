"""``qbench quarantine add|remove|list``: the tests whose known failure does not fail the run.

The quarantine is kept in the history database (``--db``, ``--dir``), or in the file that
``qbench_quarantine_file`` of the pytest configuration file names.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_qbench.core.exit_codes import OK
from pytest_qbench.core.numbers import parse_name
from pytest_qbench.core.numbers import parse_path


if TYPE_CHECKING:
    from pytest_qbench.history.quarantine import QuarantineStore

    SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]

NOT_FOUND = 1
"""``qbench quarantine remove``'s exit status when the test was not quarantined."""


def add_quarantine_parser(sub: SubParsers) -> None:
    """Add ``qbench quarantine`` to ``qbench``'s parser."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--dir", type=parse_path, help="The qbench directory. Default: .qbench here or in a parent"
    )
    common.add_argument(
        "--db",
        metavar="URL",
        help="The history database: a postgresql:// URL, or 'sqlite' for DIR/index.sqlite. "
        "Default: $QBENCH_DB, else qbench_db of the pytest configuration file, else sqlite",
    )
    parser = sub.add_parser(
        "quarantine",
        help="Quarantine tests: their known failure does not fail the run (--qbench-quarantine)",
        description="A quarantined test still runs; with --qbench-quarantine on (or auto) its "
        "failure does not fail the run unless the failure (its fingerprint) is new for that "
        "test. Kept in the history database, or in the file qbench_quarantine_file names.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser("add", parents=[common], help="Quarantine a test")
    add.add_argument("nodeid", metavar="NODEID", type=parse_name)
    add.add_argument("--reason", default="", metavar="TEXT", help="Why (shown by list)")
    remove = actions.add_parser("remove", parents=[common], help="Release a test")
    remove.add_argument("nodeid", metavar="NODEID", type=parse_name)
    listing = actions.add_parser("list", parents=[common], help="List the quarantined tests")
    listing.add_argument("--json", action="store_true", help="Print JSON instead of text")
    parser.set_defaults(func=cmd_quarantine)


def cmd_quarantine(args: argparse.Namespace) -> int:
    """``qbench quarantine``."""
    with _store(args) as store:
        if args.action == "add":
            new = store.add(args.nodeid, args.reason)
            print(
                f"{'quarantined' if new else 'already quarantined (reason updated)'}: {args.nodeid}"
            )
            return OK
        if args.action == "remove":
            if store.remove(args.nodeid):
                print(f"released: {args.nodeid}")
                return OK
            print(f"not quarantined: {args.nodeid}")
            return NOT_FOUND
        entries = store.entries()
    if args.json:
        print(json.dumps({"tests": [asdict(e) for e in entries]}, indent=2, ensure_ascii=False))
    else:
        for entry in entries:
            print(f"{entry.nodeid}  # {entry.reason}" if entry.reason else entry.nodeid)
        print(f"{len(entries)} quarantined test{'' if len(entries) == 1 else 's'}")
    return OK


@contextmanager
def _store(args: argparse.Namespace) -> Iterator[QuarantineStore]:
    """The quarantine file when ``qbench_quarantine_file`` is set, else the history index
    (created by ``add`` when missing)."""
    from pytest_qbench.history.database import configured_db
    from pytest_qbench.history.database import ini_value
    from pytest_qbench.history.database import open_index
    from pytest_qbench.history.files import find_qbench_dir
    from pytest_qbench.history.quarantine import FILE_INI
    from pytest_qbench.history.quarantine import FileQuarantine
    from pytest_qbench.history.quarantine import IndexQuarantine
    from pytest_qbench.history.quarantine import file_path

    found = ini_value(Path.cwd(), FILE_INI)
    if found is not None:
        yield FileQuarantine(file_path(found[0].parent, found[1]))
        return
    db = configured_db(args.db, Path.cwd())
    qbench_dir = args.dir
    if db is None and args.action == "add":  # the first quarantined test creates the index
        qbench_dir = qbench_dir or _dir_or_new()
        qbench_dir.mkdir(parents=True, exist_ok=True)
    elif db is None:
        qbench_dir = find_qbench_dir(qbench_dir)
    index = open_index(qbench_dir, db, create=args.action == "add")
    try:
        yield IndexQuarantine(index)
    finally:
        index.close()


def _dir_or_new() -> Path:
    from pytest_qbench.core.errors import HistoryError
    from pytest_qbench.history.files import QBENCH_DIR
    from pytest_qbench.history.files import find_qbench_dir

    try:
        return find_qbench_dir(None)
    except HistoryError:
        return Path.cwd() / QBENCH_DIR
