"""Attachments (issue 15, item 5): ``qbench.attach`` and the ``pytest_qbench_attachments`` hook
store files in the run directory, within caps, listed in report.json and report.md, kept under
xdist and by ``qbench merge``; names and paths from tests are untrusted."""

from __future__ import annotations

import re
import struct
import zlib
from pathlib import Path

import pytest
from pydantic import ValidationError

from pytest_qbench.cli import main
from pytest_qbench.report.attachments import MAX_NAME
from pytest_qbench.report.attachments import clean_name
from pytest_qbench.report.attachments import dir_for_test
from pytest_qbench.report.attachments import file_name
from pytest_qbench.report.attachments import unique_file_name
from pytest_qbench.report.models import Attachment
from pytest_qbench.report.models import TestReport

from conftest import QBenchRun
from conftest import RunQBench


def tiny_png() -> bytes:
    """A valid 1x1 red PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


ATTACHING = """
    import pathlib

    PNG = {png!r}

    def test_kinds(qbench, tmp_path):
        qbench.attach(b"\\x00\\x01raw", name="blob")
        qbench.attach("some text\\n")
        log = tmp_path / "server.log"
        log.write_text("line 1\\nline 2\\n")
        qbench.attach(log)
        qbench.attach(PNG, name="screen.png")
        qbench.attach('{{"a": 1}}', name="data", mime="application/json")
        assert 0, "failed with attachments"

    def test_plain():
        pass
"""


def write_attaching(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_attach=ATTACHING.format(png=tiny_png()))


def stored(run: QBenchRun, attachment: Attachment) -> bytes:
    """The bytes of a stored attachment (its path relative to the run directory)."""
    assert attachment.path is not None, attachment
    assert not Path(attachment.path).is_absolute() and ".." not in attachment.path.split("/")
    return (run.run_dir / attachment.path).read_bytes()


def assert_kinds(run: QBenchRun) -> None:
    """The five attachments of ``test_kinds``, each with its file."""
    attached = run.by_name("test_kinds").attachments
    by_name = {a.name: a for a in attached}
    assert [a.name for a in attached] == [
        "blob",
        "attachment-2",
        "server.log",
        "screen.png",
        "data",
    ]
    assert stored(run, by_name["blob"]) == b"\x00\x01raw"
    assert by_name["blob"].mime == "application/octet-stream"
    assert stored(run, by_name["attachment-2"]) == b"some text\n"
    assert by_name["attachment-2"].mime == "text/plain"
    assert stored(run, by_name["server.log"]) == b"line 1\nline 2\n"
    assert stored(run, by_name["screen.png"]) == tiny_png()
    assert by_name["screen.png"].mime == "image/png"
    assert by_name["screen.png"].size == len(tiny_png())
    assert stored(run, by_name["data"]) == b'{"a": 1}'
    assert by_name["data"].mime == "application/json"
    assert all(a.note is None for a in attached)
    assert run.by_name("test_plain").attachments == []
    assert run.report.summary.attachments == 5


def test_attach_bytes_text_file_and_image(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """qbench.attach stores bytes, text, a file and a PNG in the run directory, lists them in
    report.json and report.md, and changes nothing in pytest's outcome (issue 15)."""
    write_attaching(pytester)
    run = run_qbench()
    run.result.assert_outcomes(passed=1, failed=1)
    assert_kinds(run)
    md = run.markdown
    assert "## Attachments (5)" in md
    png = run.by_name("test_kinds").attachments[3]
    assert f"[screen.png](<{png.path}>) · `image/png` · {png.size} bytes" in md
    assert (run.run_dir / png.path).is_file() if png.path else False  # the link resolves


def test_attach_under_xdist(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Workers write into the controller's run directory; the records reach report.json."""
    pytest.importorskip("xdist")
    write_attaching(pytester)
    run = run_qbench("-p", "xdist", "-n", "2", subprocess=True)
    run.result.assert_outcomes(passed=1, failed=1)
    assert run.by_name("test_kinds").worker in ("gw0", "gw1")
    assert_kinds(run)


def test_attach_without_reports_does_nothing(pytester: pytest.Pytester) -> None:
    """Without qbench reports, attach stores nothing and returns None; the test still runs."""
    pytester.makepyfile(
        """
        def test_it(qbench):
            assert qbench.attach(b"x", name="a.bin") is None
        """
    )
    result = pytester.runpytest("-p", "qbench", "--no-qbench")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / ".qbench").exists()


HOOK_PLUGIN = """
    import pytest

    class Screenshots:
        @pytest.hookimpl
        def pytest_qbench_attachments(self, item):
            return [
                {"data": f"seen {item.name}", "name": "trace.txt"},
                b"\\x89raw",
            ]

    class Nothing:
        @pytest.hookimpl
        def pytest_qbench_attachments(self, item):
            return None

    class Broken:
        @pytest.hookimpl
        def pytest_qbench_attachments(self, item):
            return [{"data": 42}]

    def pytest_configure(config):
        config.pluginmanager.register(Screenshots(), "screenshots")
        config.pluginmanager.register(Nothing(), "nothing")
        if config.getoption("-k") == "broken":
            config.pluginmanager.register(Broken(), "broken")
"""


def test_hook_lets_other_plugins_attach(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """A plugin implementing pytest_qbench_attachments attaches files to every test."""
    pytester.makeconftest(HOOK_PLUGIN)
    pytester.makepyfile("def test_one(): pass\ndef test_two(): assert 0\n")
    run = run_qbench()
    run.result.assert_outcomes(passed=1, failed=1)
    for name in ("test_one", "test_two"):
        attached = run.by_name(name).attachments
        assert [(a.name, a.mime) for a in attached] == [
            ("trace.txt", "text/plain"),
            ("attachment-2", "application/octet-stream"),
        ]
        assert stored(run, attached[0]) == f"seen {name}".encode()
        assert stored(run, attached[1]) == b"\x89raw"


def test_hook_with_bad_data_warns(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """What a hook returns that cannot be stored is a QBenchWarning, not a failed test."""
    pytester.makeconftest(HOOK_PLUGIN)
    pytester.makepyfile("def test_broken(): pass\n")
    run = run_qbench("-k", "broken", subprocess=True)
    run.result.assert_outcomes(passed=1, warnings=1)
    run.result.stdout.fnmatch_lines(["*QBenchWarning: pytest_qbench_attachments: qbench.attach *"])
    assert [a.name for a in run.by_name("test_broken").attachments] == ["trace.txt", "attachment-2"]


CAPS = """
    def test_big(qbench):
        assert qbench.attach(b"x" * 3000, name="big.bin") is None
        assert qbench.attach(b"y" * 10, name="small.bin") is not None

    def test_more(qbench):
        qbench.attach(b"z" * 900, name="a.bin")
        qbench.attach(b"z" * 900, name="b.bin")
"""


def test_caps_keep_a_note_and_warn_once(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """An attachment over qbench_attach_max_size, or beyond qbench_attach_max_total, is listed
    with a note, not stored, and warned about once; pytest's exit status is unchanged."""
    pytester.makeini("[pytest]\nqbench_attach_max_size = 2KiB\nqbench_attach_max_total = 1000\n")
    pytester.makepyfile(CAPS)
    run = run_qbench(subprocess=True)
    assert run.result.ret == 0
    run.result.assert_outcomes(passed=2, warnings=1)
    run.result.stdout.fnmatch_lines(
        [
            "*QBenchWarning: test_caps_*::test_big: attachment 'big.bin' not stored: 2.9 KiB over "
            "qbench_attach_max_size (2.0 KiB)*"
        ]
    )
    big, small = run.by_name("test_big").attachments
    assert (big.path, big.size) == (None, 3000)
    assert big.note == "2.9 KiB over qbench_attach_max_size (2.0 KiB)"
    assert stored(run, small) == b"y" * 10
    first, second = run.by_name("test_more").attachments
    assert stored(run, first) == b"z" * 900
    assert second.path is None
    assert second.note == "the run's attachments reached qbench_attach_max_total (1000 B)"
    files = list((run.run_dir / "attachments").rglob("*.bin"))
    assert sorted(f.name for f in files) == ["a.bin", "small.bin"]
    assert "big.bin · `application/octet-stream` · not stored: 2.9 KiB over" in run.markdown


def test_total_cap_under_xdist(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Under xdist each worker knows only its files: the controller holds the run to the total
    cap, removes the files beyond it, and says so once (a qbench warning in the report)."""
    pytest.importorskip("xdist")
    pytester.makeini("[pytest]\nqbench_attach_max_total = 1500\n")
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("i", range(4))
        def test_shot(qbench, i):
            qbench.attach(b"s" * 600, name="shot.png")
        """
    )
    run = run_qbench("-p", "xdist", "-n", "2", subprocess=True)
    assert run.result.ret == 0
    records = [a for r in run.report.results for a in r.attachments]
    kept = [a for a in records if a.path is not None]
    assert len(records) == 4 and len(kept) == 2
    assert sum(a.size for a in kept) <= 1500
    files = sorted((run.run_dir / "attachments").rglob("shot.png"))
    assert sorted(run.run_dir / a.path for a in kept if a.path) == files
    notes = [w for w in run.report.warnings if w.code == "attachments"]
    assert len(notes) == 1 and "qbench_attach_max_total" in notes[0].message
    run.result.stdout.fnmatch_lines(["qbench: *attachments not stored*qbench_attach_max_total*"])


@pytest.mark.parametrize(
    ("ini", "shown"),
    [
        ("qbench_attach_max_size = lots", "ini qbench_attach_max_size must be a size in bytes"),
        ("qbench_attach_max_total = -1", "ini qbench_attach_max_total must be a size in bytes"),
    ],
)
def test_bad_cap_is_a_usage_error(pytester: pytest.Pytester, ini: str, shown: str) -> None:
    """A malformed cap stops pytest before any test runs, naming the setting and an example."""
    pytester.makeini(f"[pytest]\nqbench = true\n{ini}\n")
    pytester.makepyfile("def test_x(): pass\n")
    result = pytester.runpytest("-p", "qbench")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{shown}*e.g. 10MiB*"])


def test_cap_option_with_units(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """--qbench-attach-max-size takes KiB/MiB units."""
    pytester.makepyfile(
        "def test_x(qbench):\n    qbench.attach(b'x' * 1500)\n    qbench.attach(b'x' * 500)\n"
    )
    run = run_qbench("--qbench-attach-max-size=1KiB", subprocess=True)
    first, second = run.by_name("test_x").attachments
    assert first.path is None and second.path is not None


BAD_ARGUMENTS = """
    import pytest
    from pytest_qbench.core.errors import AttachmentError

    @pytest.mark.parametrize("call", [
        lambda q: q.attach(42),
        lambda q: q.attach(b"x", name=7),
        lambda q: q.attach(b"x", mime="not a type"),
        lambda q: q.attach(__import__("pathlib").Path("/no/such/file.txt")),
    ])
    def test_bad(qbench, call):
        with pytest.raises(AttachmentError) as info:
            call(qbench)
        print("MESSAGE", info.value)
"""


def test_bad_arguments_raise_clear_errors(pytester: pytest.Pytester) -> None:
    """Data that is not bytes, str or a file, a bad name or media type: AttachmentError saying
    what to pass instead."""
    pytester.makepyfile(BAD_ARGUMENTS)
    result = pytester.runpytest_subprocess("-p", "qbench", "--qbench-json=r.json", "-s")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        [
            "*MESSAGE qbench.attach takes bytes, str (text) or a pathlib.Path, given: int; *",
            "*MESSAGE qbench.attach: name must be a str, given: int; e.g. name='screenshot.png'",
            "*MESSAGE qbench.attach: mime must be a media type such as 'image/png', given: "
            "'not a type'*",
            "*MESSAGE qbench.attach: no file at /no/such/file.txt; give an existing file's path*",
        ]
    )


UNTRUSTED = """
    NAMES = [
        "../../etc/passwd",
        "/etc/passwd",
        "..\\\\..\\\\windows\\\\win.ini",
        "nul\\x00byte.txt",
        "ctrl\\x1b[31m\\x07.txt",
        "javascript:alert(1)",
        "<img src=x onerror=alert(1)>.html",
        "x" * 5000 + ".png",
        "..",
        ".hidden",
        "",
        "same.txt",
        "same.txt",
        "SAME.txt",
    ]

    def test_names(qbench):
        for name in NAMES:
            qbench.attach(b"payload", name=name)
"""


def test_untrusted_names_stay_inside_the_run_directory(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Path traversal, absolute paths, NUL and control characters, very long names,
    ``javascript:`` and HTML names: every file lands inside the test's directory, with a
    distinct plain name; the names shown keep no separator or control character."""
    pytester.makepyfile(UNTRUSTED)
    run = run_qbench()
    attached = run.by_name("test_names").attachments
    assert len(attached) == 14
    test_dir = (run.run_dir / "attachments").resolve()
    paths = []
    for attachment in attached:
        assert attachment.path is not None
        target = (run.run_dir / attachment.path).resolve()
        assert target.is_relative_to(test_dir) and target.read_bytes() == b"payload"
        assert len(target.name) <= 100
        paths.append(attachment.path.lower())
        name = attachment.name
        assert "/" not in name and "\\" not in name and "\x00" not in name and "\x1b" not in name
        assert len(name) <= MAX_NAME and not name.startswith(".")
    assert len(set(paths)) == 14  # the same name twice (in any case) is de-duplicated
    names = [a.name for a in attached]
    assert names[5] == "javascript:alert(1)"  # shown as text; its file name is plain
    assert attached[5].path and attached[5].path.endswith("/javascript_alert_1_")
    assert not (pytester.path / "etc").exists()
    assert "javascript:alert" not in run.markdown.split("](<")[1].split(">)")[0]
    assert "\\<img src=x onerror=alert(1)\\>" in run.markdown  # HTML in a name is escaped
    assert not re.search(r"(?<!\\)<img", run.markdown)


def test_name_helpers() -> None:
    """The sanitising helpers, one case each."""
    assert clean_name("../a/b\\c", "x") == "_a_b_c"
    assert clean_name("\x00\x01", "attachment-3") == "attachment-3"
    assert clean_name(". .secret", "x") == "secret"
    assert file_name("../../etc/passwd") == "etc_passwd"
    assert file_name("screen shot.PNG") == "screen_shot.PNG"
    assert file_name("...") == "attachment"
    assert len(file_name("y" * 500 + ".json")) == 100
    taken: set[str] = set()
    assert [unique_file_name("a.txt", taken) for _ in range(3)] == ["a.txt", "a-2.txt", "a-3.txt"]
    one, other = dir_for_test("t.py::test[a/b]"), dir_for_test("t.py::test[a_b]")
    assert one != other and one.startswith("t.py__test_a_b-")
    assert dir_for_test("../..").startswith("test-")


@pytest.mark.parametrize(
    "path",
    ["../etc/passwd", "/etc/passwd", "attachments/../../x", "javascript:alert(1)", "attachments/x"],
)
def test_model_refuses_paths_outside_attachments(path: str) -> None:
    """A report whose attachment path could leave its directory is refused when read."""
    with pytest.raises(ValidationError):
        Attachment(name="a", path=path, mime="text/plain", size=1)


def shard(pytester: pytest.Pytester, name: str, test: str) -> Path:
    """One shard run in its own run directory; return that directory."""
    pytester.makepyfile(
        **{
            f"test_{name}": f"""
                def {test}(qbench):
                    qbench.attach("{name} log", name="log.txt")
                """
        }
    )
    result = pytester.runpytest("-p", "qbench", f"--qbench-run-id={name}", f"test_{name}.py")
    result.assert_outcomes(passed=1)
    return pytester.path / ".qbench" / "runs" / name


def test_merge_copies_attachments(pytester: pytest.Pytester) -> None:
    """qbench merge copies each shard's files next to the merged report.json, under the shard's
    run id, so the merged paths resolve from the merged report's directory."""
    one = shard(pytester, "one", "test_a")
    two = shard(pytester, "two", "test_b")
    out = pytester.path / "merged" / "report.json"
    code = main(
        [
            "merge",
            str(one),
            str(two / "report.json"),
            "-o",
            str(out),
            "--md",
            str(out.with_suffix(".md")),
        ]
    )
    assert code == 0
    merged = TestReport.model_validate_json(out.read_text(encoding="utf-8"))
    assert merged.summary.attachments == 2
    contents = {}
    for result in merged.results:
        (attachment,) = result.attachments
        assert attachment.path is not None
        contents[attachment.path.split("/")[1]] = (out.parent / attachment.path).read_text()
    assert contents == {"one": "one log", "two": "two log"}
    md = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "Paths are relative to the directory of the merged report.json." in md
    assert "(<attachments/one/" in md


def test_merge_notes_a_missing_file(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """A shard whose attachment file is gone merges; the record says it was not found."""
    one = shard(pytester, "one", "test_a")
    for path in (one / "attachments").rglob("log.txt"):
        path.unlink()
    out = pytester.path / "merged.json"
    assert main(["merge", str(one), "-o", str(out)]) == 0
    merged = TestReport.model_validate_json(out.read_text(encoding="utf-8"))
    (attachment,) = merged.results[0].attachments
    assert (attachment.path, attachment.note) == (None, "missing when merged")
    assert "qbench: warning: attachment" in capsys.readouterr().err


def test_attach_in_teardown_and_across_reruns(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A fixture's teardown may attach; every attempt of a rerun test keeps its attachments."""
    pytest.importorskip("pytest_rerunfailures")
    pytester.makepyfile(
        """
        import pytest

        ATTEMPTS = []

        @pytest.fixture
        def browser_log(qbench):
            yield
            qbench.attach(f"log of attempt {len(ATTEMPTS)}", name="browser.log")

        def test_flaky(browser_log, qbench):
            ATTEMPTS.append(1)
            qbench.attach(b"shot", name="shot.png")
            assert len(ATTEMPTS) > 1
        """
    )
    run = run_qbench("-p", "rerunfailures", "--reruns", "1")
    assert run.result.parseoutcomes() == {"passed": 1, "rerun": 1}
    attached = run.by_name("test_flaky").attachments
    assert [a.name for a in attached] == ["shot.png", "browser.log", "shot.png", "browser.log"]
    assert [stored(run, a) for a in attached] == [
        b"shot",
        b"log of attempt 1",
        b"shot",
        b"log of attempt 2",
    ]
    assert len({a.path for a in attached}) == 4  # the second attempt's files are numbered


def test_no_temporary_files_are_left(pytester: pytest.Pytester, run_qbench: RunQBench) -> None:
    """Files are written through a temporary file that is renamed: none is left behind."""
    write_attaching(pytester)
    run = run_qbench()
    leftovers = [p for p in (run.run_dir / "attachments").rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_merge_does_not_follow_a_link_out_of_the_shard(pytester: pytest.Pytester) -> None:
    """An attachment that is a symlink to a file outside its run directory is not copied."""
    one = shard(pytester, "one", "test_a")
    secret = pytester.path / "secret.txt"
    secret.write_text("do not copy")
    (stored_file,) = (one / "attachments").rglob("log.txt")
    stored_file.unlink()
    stored_file.symlink_to(secret)
    out = pytester.path / "merged" / "report.json"
    assert main(["merge", str(one), "-o", str(out)]) == 0
    merged = TestReport.model_validate_json(out.read_text(encoding="utf-8"))
    (attachment,) = merged.results[0].attachments
    assert attachment.path is None and attachment.note == "missing when merged"
    assert not any(p.read_text() == "do not copy" for p in out.parent.rglob("*.txt"))


GROWING = """
    import threading
    from pathlib import Path

    def test_growing(qbench, tmp_path):
        log = tmp_path / "growing.log"
        log.write_bytes(b"a" * 1000)
        stop = threading.Event()

        def grow():
            with log.open("ab") as handle:
                while not stop.is_set():
                    handle.write(b"b" * 65536)

        writer = threading.Thread(target=grow)
        writer.start()
        try:
            qbench.attach(log)
        finally:
            stop.set()
            writer.join()

    def test_pagemap(qbench):
        qbench.attach(Path("/proc/self/pagemap"))  # says 0 bytes, holds far more
"""
CAP = 64 * 1024


def test_a_file_that_grows_or_lies_about_its_size_is_cut_at_the_cap(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """A file whose size grows while it is copied, or that says 0 bytes (/proc/self/pagemap), is
    copied up to the cap and no further: its record keeps the path, the stored size and a note."""
    pytester.makeini("[pytest]\nqbench_attach_max_size = 64KiB\n")
    pytester.makepyfile(GROWING)
    pagemap = Path("/proc/self/pagemap").exists()
    run = run_qbench(*([] if pagemap else ["-k", "growing"]), subprocess=True)
    assert run.result.ret == 0
    (growing,) = run.by_name("test_growing").attachments
    if growing.path is not None:  # else the writer won the race: refused at once, as too big
        assert len(stored(run, growing)) == growing.size <= CAP
    if pagemap:
        (record,) = run.by_name("test_pagemap").attachments
        assert record.path is not None and record.size == CAP
        assert len(stored(run, record)) == CAP
        assert record.note == (
            "truncated at qbench_attach_max_size (64.0 KiB): the file held more than its size "
            "when attached (0 B)"
        )
    assert sum(f.stat().st_size for f in run.run_dir.rglob("*") if f.is_file()) < 2 * 1024 * 1024


def test_a_growing_file_is_cut_at_the_run_total(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """The run's total cap holds too: a file larger than what is left of it is cut there."""
    if not Path("/proc/self/pagemap").exists():
        pytest.skip("needs /proc/self/pagemap")
    pytester.makeini("[pytest]\nqbench_attach_max_total = 10000\n")
    pytester.makepyfile(
        "from pathlib import Path\n"
        "def test_two(qbench):\n"
        "    qbench.attach(b'x' * 4000, name='first.bin')\n"
        "    qbench.attach(Path('/proc/self/pagemap'))\n"
    )
    run = run_qbench()
    first, second = run.by_name("test_two").attachments
    assert stored(run, first) == b"x" * 4000
    assert second.size == 6000 and len(stored(run, second)) == 6000
    assert second.note is not None and "qbench_attach_max_total" in second.note


AFTER_THE_END = """
    import threading
    import pytest

    kept = []
    errors = []
    tried = threading.Event()

    @pytest.fixture
    def keep(qbench):
        kept.append(qbench)
        return qbench

    def test_first(keep):
        keep.attach(b"in time", name="first.txt")

    def test_second():
        with pytest.raises(Exception) as info:
            kept[0].attach(b"too late", name="late.txt")
        print("MESSAGE", type(info.value).__name__, info.value)

    def test_thread(qbench):
        started = threading.Event()

        def later():
            started.wait()
            try:
                qbench.attach(b"from a thread", name="thread.txt")
            except Exception as exc:
                errors.append(exc)
            finally:
                tried.set()

        threading.Thread(target=later, daemon=True, name="late-attacher").start()
        pytest.thread_start = started

    def test_after_thread():
        pytest.thread_start.set()
        tried.wait(120)  # the thread's attach has returned or raised
        print("THREAD", type(errors[0]).__name__, errors[0])
"""


def test_attaching_after_the_test_ended_is_refused(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """An attach after the test's report was made (a kept fixture, a thread after teardown)
    raises AttachmentError naming the test and the fix; no file is written, the run goes on."""
    pytester.makepyfile(AFTER_THE_END)
    run = run_qbench("-s", subprocess=True)
    run.result.assert_outcomes(passed=4)
    out = run.result.stdout.str()
    for marker in ("MESSAGE", "THREAD"):
        line = next(line for line in out.splitlines() if f"{marker} " in line)
        assert "AttachmentError qbench.attach: " in line
        assert "has ended" in line and "attach while the test runs" in line
    assert "test_first" in out.split("MESSAGE")[1] and "test_thread" in out.split("THREAD")[1]
    assert [a.name for a in run.by_name("test_first").attachments] == ["first.txt"]
    files = sorted(f.name for f in (run.run_dir / "attachments").rglob("*") if f.is_file())
    assert files == ["first.txt"]


@pytest.mark.parametrize(
    ("name", "on_disk"),
    [
        ("CON", "CON_"),
        ("aux", "aux_"),
        ("NUL.txt", "NUL_.txt"),
        ("com1.txt", "com1_.txt"),
        ("LPT9.log", "LPT9_.log"),
        ("prn.tar.gz", "prn_.tar.gz"),
        ("Console.txt", "Console.txt"),
        ("com10.txt", "com10.txt"),
    ],
)
def test_windows_device_names_are_renamed(name: str, on_disk: str) -> None:
    """A Windows device name (any case, any extension) is never a file name on disk."""
    assert file_name(name) == on_disk


def test_windows_device_names_renamed_in_a_run(
    pytester: pytest.Pytester, run_qbench: RunQBench
) -> None:
    """Attached as CON, aux, NUL.txt, com1.txt: the files on disk are renamed, the records keep
    the names given."""
    pytester.makepyfile(
        "def test_devices(qbench):\n"
        "    for name in ('CON', 'aux', 'NUL.txt', 'com1.txt'):\n"
        "        qbench.attach(b'x', name=name)\n"
    )
    run = run_qbench()
    records = run.by_name("test_devices").attachments
    assert [a.name for a in records] == ["CON", "aux", "NUL.txt", "com1.txt"]
    assert [Path(a.path or "").name for a in records] == ["CON_", "aux_", "NUL_.txt", "com1_.txt"]
