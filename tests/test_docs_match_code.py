"""The reference docs against the code they describe: every option, ini value, command and
default in docs/ is read next to the declaration it documents, so the two cannot drift apart."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any
from typing import get_args

import pytest

from pytest_qbench.cli import build_parser
from pytest_qbench.plugin.options.declare import add_options


DOCS = Path(__file__).parents[1] / "docs"
README = Path(__file__).parents[1] / "README.md"
BENCHMARKS = Path(__file__).parents[1] / "benchmarks"
HTML_SOURCES = Path(__file__).parents[1] / "pytest_qbench" / "report" / "html"


class RecordingParser:
    """Stands in for pytest's parser and option group: records what qbench declares."""

    def __init__(self) -> None:
        self.options: dict[str, dict[str, Any]] = {}
        self.inis: dict[str, dict[str, Any]] = {}

    def getgroup(self, name: str, description: str = "") -> RecordingParser:
        return self

    def addoption(self, *names: str, **kwargs: Any) -> None:
        for name in names:
            self.options[name] = kwargs

    def addini(self, name: str, help: str, type: Any = None, default: Any = None) -> None:
        self.inis[name] = {"help": help, "type": type, "default": default}


@pytest.fixture(scope="module")
def declared() -> RecordingParser:
    recorder = RecordingParser()
    add_options(recorder)  # type: ignore[arg-type]
    return recorder


def table_rows(text: str) -> list[list[str]]:
    """The cells of every Markdown table row in ``text`` (header and rule rows included)."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and line.rstrip().endswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def code_spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def options_table() -> dict[str, list[str]]:
    """docs/reference/options.md's option tables ("All options", "Agent evaluation"): first code
    span of the first cell (the option, or the ini name when the option is `—`) -> the cells."""
    text = (DOCS / "reference" / "options.md").read_text(encoding="utf-8")
    table: dict[str, list[str]] = {}
    for title in ("All options", "Agent evaluation"):
        section = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
        table.update(_option_rows(section))
    return table


def _option_rows(section: str) -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for row in table_rows(section):
        if row[0] in ("Command line", "ini") or set(row[0]) <= {"-"}:
            continue  # a header or its rule
        if code_spans(row[0]) and code_spans(row[0])[0].startswith("qbench_"):
            row = ["—", *row]  # a table of ini values only
        spans = code_spans(row[0]) or code_spans(row[1])
        table[spans[0].split("=")[0].split("[")[0].split(" ")[0]] = row
    return table


def test_every_declared_option_is_documented_and_nothing_else(declared):
    """Each ``--qbench-*`` option declared has a row in the options table, and each row names a
    declared option (issue 19.14)."""
    documented = {name for name in options_table() if name.startswith("--")}
    in_code = {name for name in declared.options if name.startswith("--qbench-")}
    assert in_code - documented == set(), "declared but not in docs/reference/options.md"
    assert documented - in_code == set(), "documented but not declared"


def test_each_documented_ini_name_is_the_options_twin(declared):
    """The ini column names the ini value the option really has."""
    for name, row in options_table().items():
        inis = [span for span in code_spans(row[1]) if span.startswith("qbench_")]
        if not inis:
            continue
        ini = inis[0].split(" ")[0]
        assert ini in declared.inis, f"{name}: ini {ini} is not declared"
        if name.startswith("--"):
            dest = declared.options[name].get("dest", "")
            assert ini in (dest, dest.rstrip("s"), f"{dest}s"), (name, ini, dest)


def test_documented_defaults_match_the_help_and_the_declared_default(declared):
    """Where the code states a default (``Default: X`` in the help, or a literal default the
    parser falls back to), the table's default column says the same."""
    checked = 0
    for name, row in options_table().items():
        if not name.startswith("--"):
            continue
        option = declared.options[name]
        default_cell = row[2]
        stated = re.search(r"Default: (.+)$", option.get("help", ""))
        if stated:
            words = stated.group(1).replace("$", "").replace(", else", " ").split()
            for word in words:
                if re.fullmatch(r"[\w.]+", word) and word not in ("in", "the"):
                    assert word.rstrip(".") in default_cell, (name, word, default_cell)
                    checked += 1
        value = option.get("default")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            assert f"`{value:g}`" in default_cell, (name, value, default_cell)
            checked += 1
    assert checked >= 3


def test_documented_defaults_are_the_constants_the_settings_use():
    """The default column of the options whose default is a constant in the code."""
    from pytest_qbench.core.limits import DEFAULT_ATTACH_MAX_SIZE
    from pytest_qbench.core.limits import DEFAULT_ATTACH_MAX_TOTAL
    from pytest_qbench.core.limits import MIB
    from pytest_qbench.core.text import DEFAULT_MAX_OUTPUT
    from pytest_qbench.core.text import DEFAULT_MAX_TRACE
    from pytest_qbench.plugin.options.agent import DEFAULT_MAX_REGRESSION
    from pytest_qbench.plugin.options.checks import DEFAULT_CHECK_TIMEOUT
    from pytest_qbench.plugin.options.values import CAPTURE_DEFAULT
    from pytest_qbench.plugin.options.values import DEFAULT_KEEP_RUNS
    from pytest_qbench.plugin.options.values import DEFAULT_MD_MAX_ITEMS

    expected = {
        "--qbench-max-output": f"`{DEFAULT_MAX_OUTPUT}`",
        "--qbench-max-trace": f"`{DEFAULT_MAX_TRACE}`",
        "--qbench-md-max-items": f"`{DEFAULT_MD_MAX_ITEMS}`",
        "--qbench-keep-runs": f"`{DEFAULT_KEEP_RUNS}`",
        "--qbench-capture": f"`{CAPTURE_DEFAULT}`",
        "--qbench-check-timeout": f"`{DEFAULT_CHECK_TIMEOUT:g}`",
        "--qbench-max-regression": f"`{DEFAULT_MAX_REGRESSION:g}`",
        "--qbench-attach-max-size": f"`{DEFAULT_ATTACH_MAX_SIZE // MIB}MiB`",
        "--qbench-attach-max-total": f"`{DEFAULT_ATTACH_MAX_TOTAL // MIB}MiB`",
    }
    table = options_table()
    for option, default in expected.items():
        assert default in table[option][2], (option, default, table[option][2])


def test_check_timeout_environment_variable_comes_between_command_line_and_ini(
    pytester, monkeypatch
):
    """``QBENCH_CHECK_TIMEOUT`` has ``QBENCH_DB``'s precedence, as the docs say: the command
    line wins over it, and it wins over the ini value (issue 19.14)."""
    pytester.makeini("[pytest]\nqbench_check_timeout = 7\n")
    pytester.makepyfile(
        conftest="""
        import pytest
        from pytest_qbench.plugin.options.settings import read_settings

        def pytest_configure(config):
            print("TIMEOUT", read_settings(config).checks.timeout)
        """
    )
    pytester.makepyfile("def test_one(): pass")
    monkeypatch.setenv("QBENCH_CHECK_TIMEOUT", "11")
    with_env = pytester.runpytest("-p", "qbench", "--qbench-check=ruff", "-s")
    with_env.stdout.fnmatch_lines(["TIMEOUT 11.0"])
    on_line = pytester.runpytest(
        "-p", "qbench", "--qbench-check=ruff", "--qbench-check-timeout=13", "-s"
    )
    on_line.stdout.fnmatch_lines(["TIMEOUT 13.0"])
    monkeypatch.delenv("QBENCH_CHECK_TIMEOUT")
    ini_only = pytester.runpytest("-p", "qbench", "--qbench-check=ruff", "-s")
    ini_only.stdout.fnmatch_lines(["TIMEOUT 7.0"])


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def all_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The actions of ``parser`` and of its own subcommands (``qbench quarantine add``...)."""
    found = list(parser._actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.extend(all_actions(sub))
    return found


def cli_sections() -> dict[str, str]:
    """docs/reference/cli.md cut at its headings: command name -> its section's text."""
    text = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    parts = re.split(r"^#{2,3} ", text, flags=re.MULTILINE)
    sections: dict[str, str] = {}
    for part in parts[1:]:
        heading, _, body = part.partition("\n")
        match = re.fullmatch(r"qbench ([\w-]+)", heading.strip())
        key = match.group(1) if match else heading.strip()
        sections[key] = body
    return sections


HISTORY_COMMANDS = {"index", "runs", "mcp-log", "show", "diff", "flaky", "history", "gc", "shards"}


def test_every_command_has_a_section_naming_each_of_its_options():
    """Each ``qbench`` command has its section in docs/reference/cli.md, which names every
    option of the command; the history commands' shared options are in their common table."""
    sections = cli_sections()
    shared = sections["The history commands"]
    for name, parser in subcommands().items():
        assert name in sections, f"qbench {name} has no section in docs/reference/cli.md"
        text = sections[name] + (shared if name in HISTORY_COMMANDS else "")
        for action in all_actions(parser):
            if not action.option_strings or "-h" in action.option_strings:
                continue
            if action.help == argparse.SUPPRESS:  # internal (the MCP server's), not for users
                continue
            assert any(
                re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text)
                for flag in action.option_strings
            ), (
                f"qbench {name} {action.option_strings} is not in its section of docs/reference/cli.md"
            )


def test_every_option_in_a_usage_line_exists():
    """The usage block of each command section names only options the command has."""
    sections = cli_sections()
    for name, parser in subcommands().items():
        if name == "mcp":
            continue  # its options are the server's, checked below against docs/mcp.md
        usage = re.search(r"```text\n(qbench .*?)```", sections[name], flags=re.DOTALL)
        if usage is None:
            continue
        known = {s for a in all_actions(parser) for s in a.option_strings}
        for flag in re.findall(r"\[(--?[\w-]+)", usage.group(1)):
            assert flag in known, f"qbench {name}: {flag} in the usage line is not an option"


def test_documented_cli_defaults_match_the_parser():
    """A default in a command's options table is the parser's default."""
    sections = cli_sections()
    checked = 0
    for name, parser in subcommands().items():
        rows = table_rows(sections[name] + sections["The history commands"])
        by_flag: dict[str, list[str]] = {}
        for row in rows:
            for span in code_spans(row[0]):
                for flag in re.findall(r"--?[\w-]+", span):
                    by_flag.setdefault(flag, row)
        for action in parser._actions:
            flag = max(action.option_strings or [""], key=len)
            if flag not in by_flag or len(by_flag[flag]) < 3:
                continue
            default = action.default
            cell = by_flag[flag][1]
            if isinstance(default, bool):
                assert ("off" in cell) == (default is False), (name, flag, cell)
            elif isinstance(default, (int, float)):
                assert f"`{default:g}`" in cell, (name, flag, default, cell)
            elif isinstance(default, (str, Path)) and str(default):
                assert f"`{default}`" in cell or str(default) in cell, (name, flag, cell)
            else:
                continue
            checked += 1
    assert checked >= 20


def test_mcp_server_options_are_the_documented_ones():
    """docs/mcp.md's option table lists exactly the server's options, with their defaults."""
    from pytest_qbench.mcp.config import add_server_options

    parser = argparse.ArgumentParser()
    add_server_options(parser)
    rows = {code_spans(r[0])[0].split()[0]: r for r in table_rows(_mcp_doc()) if code_spans(r[0])}
    options = {
        max(a.option_strings, key=len): a
        for a in parser._actions
        if a.option_strings and not {"-h", "--version"} & set(a.option_strings)
    }
    assert set(options) == {flag for flag in rows if flag.startswith("--")}
    for flag, action in options.items():
        if isinstance(action.default, (int, float)) and not isinstance(action.default, bool):
            assert f"{action.default:g}" in rows[flag][1], (flag, action.default, rows[flag])


def _mcp_doc() -> str:
    return (DOCS / "mcp.md").read_text(encoding="utf-8")


def test_readme_lists_every_gate(declared):
    """The README's list of gates names every option whose help says it fails the run."""
    gates = [
        name
        for name, option in declared.options.items()
        if name.startswith("--") and "fail the run" in option.get("help", "").lower()
    ]
    assert len(gates) >= 4, gates
    paragraph = README.read_text(encoding="utf-8").split("except through a gate", 1)[1]
    for gate in gates:
        assert gate in paragraph.split("\n\n", 1)[0], f"README.md's gate list misses {gate}"


USER_DOCS = [
    README,
    *sorted(p for p in DOCS.rglob("*.md") if p.name not in ("changelog.md", "architecture.md")),
]


@pytest.mark.parametrize("path", USER_DOCS, ids=lambda p: p.name)
def test_user_docs_cite_no_internal_issue_numbers(path):
    """User docs explain behaviour in their own words: no "issue 13.7", no "the seed's"."""
    text = path.read_text(encoding="utf-8")
    assert not re.findall(r"\bissues? \d+(?:\.\d+)?\b", text, flags=re.IGNORECASE)
    assert "seed's" not in text


def test_benchmarks_readme_gives_the_page_search_pause_of_the_code():
    """benchmarks/README.md and docs quote the HTML page's typing pause the page really has."""
    sources = "".join(p.read_text(encoding="utf-8") for p in HTML_SOURCES.rglob("*.js"))
    sources += "".join(p.read_text(encoding="utf-8") for p in HTML_SOURCES.rglob("*.py"))
    templates = Path(__file__).parents[1] / "templates"
    sources += "".join(p.read_text(encoding="utf-8") for p in templates.rglob("*.js"))
    pause = re.findall(r"searchEl\.addEventListener\(\"input\".*?\}, (\d+)\);", sources, re.S)
    assert pause, "the page's search pause was not found"
    readme = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    quoted = re.findall(r"waits (\d+) ms after the last keystroke", readme)
    assert quoted, "benchmarks/README.md no longer quotes the pause"
    assert set(quoted) <= set(pause), (quoted, pause)


def test_index_names_every_command():
    """docs/index.md's line on the ``qbench`` command names each of its commands."""
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    line = text.split("[The `qbench` command](reference/cli.md):", 1)[1].split("\n- ", 1)[0]
    missing = [name for name in subcommands() if f"`{name}`" not in line]
    assert missing == [], f"docs/index.md's command list misses {missing}"


def test_digest_failure_fields_are_the_documented_ones():
    """The digest's failure entry, in the report format page and in getting started's example,
    has the fields a digest failure has (``history`` and ``runner`` were missing from both)."""
    from pytest_qbench.report.models import DigestFailure

    fields = list(DigestFailure.model_fields)
    schema = (DOCS / "reference" / "report-schema.md").read_text(encoding="utf-8")
    section = schema.split("## digest.json: FailureDigest", 1)[1].split("\n## ", 1)[0]
    failures = section.split("\nfailures ", 1)[1].split("\ncollection_errors ", 1)[0]
    assert [name for name in fields if not re.search(rf"\b{name}\b", failures)] == []
    start = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    entry = re.search(r"```json\n(\{\n  \"test_name\".*?\n\})\n```", start, flags=re.DOTALL)
    assert entry, "getting-started.md no longer shows a digest failure"
    assert list(json.loads(entry.group(1))) == fields


def test_dashboard_example_has_every_summary_field():
    """templates.md's dashboard.json output shows ``summary | tojson`` as it is written: every
    field of the summary, in order."""
    from pytest_qbench.report.models import ReportSummary

    text = (DOCS / "how-to" / "templates.md").read_text(encoding="utf-8")
    counts = re.search(r"^  \"counts\": (\{\"total\".*\}),$", text, flags=re.MULTILINE)
    assert counts, "templates.md no longer shows the dashboard's counts"
    schema = ReportSummary.model_json_schema(mode="serialization")
    assert list(json.loads(counts.group(1))) == list(schema["properties"])


def test_static_checks_table_lists_every_builtin_checker():
    """static-checks.md's table of checkers has a row for each built-in checker, by its name
    (or an alias) and the ``tool`` of its diagnostics, and cli.md's ``--checker`` names it
    (``js.build`` was missing from both)."""
    from pytest_qbench.tools.registry import load_registry

    text = (DOCS / "how-to" / "static-checks.md").read_text(encoding="utf-8")
    section = text.split("## The checkers", 1)[1].split("\n## ", 1)[0]
    rows = [row for row in table_rows(section) if len(row) > 1]
    names = {span for row in rows for span in code_spans(row[0])}
    tools = {span for row in rows for span in code_spans(row[1])}
    checker_row = next(row for row in table_rows(cli_sections()["check"]) if "--checker" in row[0])
    listed = set(code_spans(checker_row[2]))
    for name, registered in load_registry(entry_points=False).checkers.items():
        checker = registered.tool
        assert {checker.name, *checker.aliases} & names, f"no row for the checker {name}"
        assert checker.tool in tools, f"{name}: its tool {checker.tool} is not in the table"
        assert {checker.name, *checker.aliases} & listed, f"cli.md's --checker misses {name}"


def test_every_error_slug_has_its_message_section():
    """Each ``slug="..."`` an error of the package carries is a heading of docs/messages.md,
    the anchor the slug names (``test-options``, ``qbench test --runner``'s, had none)."""
    package = Path(__file__).parents[1] / "pytest_qbench"
    code = "".join(p.read_text(encoding="utf-8") for p in package.rglob("*.py"))
    slugs = set(re.findall(r"\bslug=\(?\s*\"([\w-]+)\"", code))
    assert len(slugs) >= 50, sorted(slugs)
    messages = (DOCS / "messages.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^#{2,4} ([\w-]+)\s*$", messages, flags=re.MULTILINE))
    assert sorted(slugs - headings) == []


def _schema_sections() -> dict[str, str]:
    """docs/reference/report-schema.md cut at its headings: the model a heading names (its last
    word, ``report.json: TestReport`` -> ``TestReport``) -> the section's text."""
    text = (DOCS / "reference" / "report-schema.md").read_text(encoding="utf-8")
    parts = re.split(r"^#{2,3} (.*)$", text, flags=re.MULTILINE)
    return {parts[i].split(": ")[-1].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def test_report_format_page_names_every_field_of_its_models():
    """Each section of the report format page about a model names every field the model
    writes, and the ``run`` lines of TestReport every field of RunMeta (``new_test_tries``,
    ``runner``, ``projects_build_failed`` and ``shard`` were missing)."""
    from pydantic import BaseModel

    import pytest_qbench.report.models as models

    checked = 0
    for name, body in _schema_sections().items():
        model = getattr(models, name, None)
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            continue
        fields = model.model_json_schema(mode="serialization")["properties"]
        missing = [f for f in fields if not re.search(rf"(?<![\w.]){f}(?!\w)", body)]
        assert missing == [], f"report-schema.md's {name} section misses {missing}"
        checked += 1
    assert checked >= 10
    report = _schema_sections()["TestReport"]
    run = report.split("\nrun ", 1)[1].split("\nenvironment ", 1)[0]
    missing = [f for f in models.RunMeta.model_fields if not re.search(rf"\b{f}\b", run)]
    assert missing == [], f"report-schema.md's run lines miss {missing}"


def test_runs_json_example_has_every_field():
    """cli.md's example of a run in ``qbench runs --json`` has the fields the command writes,
    in order (``recording_errors`` was missing)."""
    from pytest_qbench.history.json_models import RunJson

    example = re.search(r"```json\n(\{\n  \"run_id\".*?\n\})\n```", cli_sections()["runs"], re.S)
    assert example, "cli.md no longer shows a run of qbench runs --json"
    assert list(json.loads(example.group(1))) == list(RunJson.model_fields)


def test_stream_table_names_every_record_and_field():
    """report-schema.md's table of results.jsonl records has a row for each kind of record,
    naming each of its fields (the end record's ``coverage`` and ``gates`` were missing)."""
    from pytest_qbench.report.models import StreamRecord

    section = _schema_sections()["results.jsonl"]
    rows = {code_spans(row[0])[0]: row[1] for row in table_rows(section) if code_spans(row[0])}
    for model in get_args(get_args(StreamRecord)[0]):
        kind = model.model_fields["kind"]
        kinds = get_args(kind.annotation) or (kind.default,)
        for name in kinds:
            assert name in rows, f"no row for the {name} record"
            fields = [f for f in model.model_fields if f != "kind"]
            missing = [f for f in fields if f"`{f}`" not in rows[name]]
            assert missing == [], f"the {name} record's row misses {missing}"


def test_static_checks_plugin_example_runs(tmp_path: Path) -> None:
    """static-checks.md's whole checker plugin works as written: its hook gives a `Checker`,
    whose plan runs and whose parser reads the output into the diagnostic the page shows."""
    import shutil
    import subprocess
    import types

    if shutil.which("grep") is None:
        pytest.skip("the example runs grep")
    text = (DOCS / "how-to" / "static-checks.md").read_text(encoding="utf-8")
    source = re.search(r"```python\n(\"\"\"A checker that reports.*?)```", text, re.S)
    assert source, "static-checks.md no longer shows the qbench_todo plugin"
    module = types.ModuleType("qbench_todo")
    exec(compile(source.group(1), "qbench_todo.py", "exec"), module.__dict__)
    (checker,) = module.qbench_checkers()
    (tmp_path / "mod.py").write_text("x = 1  # TODO: remove\n", encoding="utf-8")
    assert checker.applies(tmp_path)
    plan = checker.plan(tmp_path, [], tmp_path)
    done = subprocess.run(plan.command, cwd=tmp_path, capture_output=True, check=False)
    assert done.returncode in plan.ok_codes
    (diagnostic,) = plan.parse(done.stdout, tmp_path)
    shown = f"{diagnostic.file}:{diagnostic.line}: {diagnostic.severity} {diagnostic.tool} "
    shown += f"{diagnostic.code}: {diagnostic.message}"
    assert " ".join(shown.split()) in text, shown  # the terminal line's spacing
