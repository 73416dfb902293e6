-- A history index made by qbench at schema 11 (before runs.other_counts): one run, known1, of a
-- project whose conftest's pytest_report_teststatus counts a failure under its own word
-- (test_a.py: test_ok, test_ok2 passed, test_skip skipped, test_known failed and counted
-- "known"; pytest's line "2 passed, 1 skipped, 1 known", exit status 1), indexed at its session
-- end by the qbench of main at d648ae8; then sqlite3's iterdump. index-schema-11-known.json is
-- that run's report.json. tests/test_history_own_words.py loads it into a file and opens it
-- with this qbench, which must upgrade it in place.
BEGIN TRANSACTION;
CREATE TABLE checked (
        run_ref INTEGER NOT NULL REFERENCES runs (id),
        tool TEXT NOT NULL,
        PRIMARY KEY (run_ref, tool)
    );
CREATE TABLE deselected (
        run_ref INTEGER NOT NULL REFERENCES runs (id),
        nodeid TEXT NOT NULL,
        PRIMARY KEY (run_ref, nodeid)
    );
CREATE TABLE deselection_sets (
        digest TEXT PRIMARY KEY,
        count INTEGER NOT NULL,
        nodeids TEXT NOT NULL
    );
CREATE TABLE diagnostics (
        run_ref INTEGER NOT NULL REFERENCES runs (id),
        fingerprint TEXT NOT NULL,
        tool TEXT NOT NULL,
        severity TEXT NOT NULL,
        code TEXT,
        file TEXT,
        line INTEGER,
        message TEXT NOT NULL,
        occurrences INTEGER NOT NULL,
        PRIMARY KEY (run_ref, fingerprint)
    );
CREATE TABLE fingerprints (
        fingerprint TEXT PRIMARY KEY,
        error_type TEXT NOT NULL,
        location TEXT NOT NULL,
        message TEXT NOT NULL
    );
INSERT INTO "fingerprints" VALUES('367ed47c2668a6ce','AssertionError','test_a.py:7','assert 0');
CREATE TABLE merge_members (
        merge_ref INTEGER NOT NULL REFERENCES runs (id),
        member TEXT NOT NULL,
        PRIMARY KEY (merge_ref, member)
    );
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO "meta" VALUES('schema_version','11');
CREATE TABLE metrics (
        run_ref INTEGER NOT NULL REFERENCES runs (id),
        test_ref INTEGER NOT NULL REFERENCES tests (id),
        metric TEXT NOT NULL,
        seq INTEGER NOT NULL,
        score DOUBLE PRECISION,
        threshold DOUBLE PRECISION,
        passed INTEGER NOT NULL,
        PRIMARY KEY (run_ref, test_ref, metric, seq)
    );
CREATE TABLE quarantine (
        nodeid TEXT PRIMARY KEY,
        reason TEXT NOT NULL,
        added_at TEXT NOT NULL
    );
CREATE TABLE queue_units (
        queue TEXT NOT NULL,
        unit TEXT NOT NULL,
        position INTEGER NOT NULL,
        nodeids TEXT NOT NULL,
        expected DOUBLE PRECISION NOT NULL,
        created_at TEXT NOT NULL,
        owner TEXT,
        run_id TEXT,
        lease_until DOUBLE PRECISION,
        done INTEGER NOT NULL,
        PRIMARY KEY (queue, unit)
    );
CREATE TABLE results (
        run_ref INTEGER NOT NULL REFERENCES runs (id),
        test_ref INTEGER NOT NULL REFERENCES tests (id),
        outcome TEXT NOT NULL,
        duration DOUBLE PRECISION NOT NULL,
        reruns INTEGER NOT NULL,
        flaky INTEGER NOT NULL,
        fingerprint TEXT,
        message TEXT, setup DOUBLE PRECISION, teardown DOUBLE PRECISION,
        PRIMARY KEY (run_ref, test_ref)
    );
INSERT INTO "results" VALUES(1,4,'failed',0.000321,0,0,'367ed47c2668a6ce','assert 0',4.3e-05,0.000161);
INSERT INTO "results" VALUES(1,1,'passed',0.000326,0,0,NULL,NULL,0.000165,6.7e-05);
INSERT INTO "results" VALUES(1,2,'passed',0.000148,0,0,NULL,NULL,6.3e-05,3.9e-05);
INSERT INTO "results" VALUES(1,3,'skipped',0.000118,0,0,NULL,NULL,6.7e-05,5.2e-05);
CREATE TABLE run_deselection (
        run_ref INTEGER NOT NULL PRIMARY KEY REFERENCES runs (id),
        digest TEXT NOT NULL
    );
CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL UNIQUE,
        tool TEXT NOT NULL,
        started_at TEXT NOT NULL,
        completed_at TEXT,
        exit_code INTEGER,
        interrupted INTEGER NOT NULL,
        cwd TEXT NOT NULL,
        command TEXT NOT NULL,
        total INTEGER NOT NULL,
        passed INTEGER NOT NULL,
        failed INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        skipped INTEGER NOT NULL,
        xfailed INTEGER NOT NULL,
        xpassed INTEGER NOT NULL,
        reruns INTEGER NOT NULL,
        flaky INTEGER NOT NULL,
        deselected INTEGER NOT NULL,
        warnings INTEGER NOT NULL,
        duration DOUBLE PRECISION NOT NULL,
        branch TEXT,
        commit_sha TEXT,
        ci_provider TEXT,
        build_url TEXT,
        python TEXT,
        platform TEXT,
        qbench_version TEXT,
        indexed_at TEXT NOT NULL
    , shard TEXT, subtests_passed INTEGER, subtests_failed INTEGER, subtests_skipped INTEGER, max_failures INTEGER, last_failed INTEGER, recording_errors INTEGER);
INSERT INTO "runs" VALUES(1,'known1','pytest','2026-11-27T13:13:56.556686Z','2026-11-27T13:13:56.616538Z',1,0,'/tmp/t11/mk11','["pytest", "-p", "qbench", "-p", "no:randomly", "-q", "--qbench-run-id=known1"]',4,2,0,0,1,0,0,0,0,0,0,0.059894,NULL,NULL,NULL,NULL,'3.11.7','Linux-6.18.44-fc-v669-x86_64-with-glibc2.36','0.1.0.dev0','2026-11-27T13:13:56.685457Z',NULL,0,0,0,0,0,0);
CREATE TABLE tests (id INTEGER PRIMARY KEY, nodeid TEXT NOT NULL UNIQUE);
INSERT INTO "tests" VALUES(1,'test_a.py::test_ok');
INSERT INTO "tests" VALUES(2,'test_a.py::test_ok2');
INSERT INTO "tests" VALUES(3,'test_a.py::test_skip');
INSERT INTO "tests" VALUES(4,'test_a.py::test_known');
CREATE TABLE tool_calls (
        id INTEGER PRIMARY KEY,
        called_at TEXT NOT NULL,
        tool TEXT NOT NULL,
        arguments TEXT NOT NULL,
        success INTEGER NOT NULL,
        error_type TEXT,
        duration DOUBLE PRECISION NOT NULL,
        response_bytes BIGINT NOT NULL,
        replaced_bytes BIGINT NOT NULL
    );
CREATE INDEX runs_by_start ON runs (started_at, id);
CREATE INDEX results_by_test ON results (test_ref, run_ref);
CREATE INDEX results_failing ON results (run_ref, test_ref)
        WHERE outcome IN ('failed', 'error') OR flaky = 1;
CREATE INDEX results_by_fingerprint ON results (fingerprint) WHERE fingerprint IS NOT NULL;
CREATE INDEX run_deselection_by_digest ON run_deselection (digest);
CREATE INDEX tool_calls_by_tool ON tool_calls (tool, id);
CREATE INDEX diagnostics_by_fingerprint ON diagnostics (fingerprint);
CREATE INDEX merge_members_by_member ON merge_members (member);
COMMIT;
