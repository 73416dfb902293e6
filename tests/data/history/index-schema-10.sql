-- A history index made by qbench before schema 11 (schema 10: no merge_members): two CI shards
-- (pytest -p qbench --qbench-shard=1/2 and 2/2, run ids s1 and s2; test_a.py::test_a failing
-- in s1), each indexed at its session end, then `qbench merge .qbench/runs/s1 .qbench/runs/s2
-- -o merged/report.json` (index-schema-10-merged.json) and `qbench index merged/report.json`,
-- all by the qbench of main at a8b0a62; then sqlite3's iterdump. tests/test_history_merged_once.py
-- loads it into a file and opens it with this qbench, which must upgrade it in place.
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
INSERT INTO "deselection_sets" VALUES('4c2a938e696c9a872200e869bf425c20f373fd533a949ff34158806c7e18a070',1,'eJwrSS0uiU/SK6i0sioBMwE7jwaO');
INSERT INTO "deselection_sets" VALUES('b7c37d38b87473db618870d2ef58c7a8356cb552a0f3524a06e19900d69c4838',1,'eJwrSS0uiU/UK6i0sioBMwE7ggaM');
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
INSERT INTO "fingerprints" VALUES('8f74f8ec3069e3d1','AssertionError','test_a.py:7','assert not True');
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO "meta" VALUES('schema_version','10');
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
INSERT INTO "results" VALUES(1,1,'failed',0.000486,0,0,'8f74f8ec3069e3d1','assert not True',0.000166,0.000171);
INSERT INTO "results" VALUES(2,2,'passed',0.000263,0,0,NULL,NULL,0.000143,5.0e-05);
INSERT INTO "results" VALUES(3,1,'failed',0.000486,0,0,'8f74f8ec3069e3d1','assert not True',0.000166,0.000171);
INSERT INTO "results" VALUES(3,2,'passed',0.000263,0,0,NULL,NULL,0.000143,5.0e-05);
CREATE TABLE run_deselection (
        run_ref INTEGER NOT NULL PRIMARY KEY REFERENCES runs (id),
        digest TEXT NOT NULL
    );
INSERT INTO "run_deselection" VALUES(1,'4c2a938e696c9a872200e869bf425c20f373fd533a949ff34158806c7e18a070');
INSERT INTO "run_deselection" VALUES(2,'b7c37d38b87473db618870d2ef58c7a8356cb552a0f3524a06e19900d69c4838');
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
INSERT INTO "runs" VALUES(1,'s1','pytest','2026-11-27T08:44:51.108782Z','2026-11-27T08:44:51.248283Z',1,0,'/tmp/mh/gen','["pytest", "-q", "-p", "qbench", "-p", "no:randomly", "--qbench-shard=1/2", "--qbench-run-id=s1"]',1,0,1,0,0,0,0,0,0,1,0,0.139535,NULL,'0123456789abcdef0123456789abcdef01234567','github-actions',NULL,'3.11.7','Linux-6.18.44-fc-v669-x86_64-with-glibc2.36','0.1.0.dev0','2026-11-27T08:44:51.329459Z','1/2',0,0,0,0,0,0);
INSERT INTO "runs" VALUES(2,'s2','pytest','2026-11-27T08:44:52.421529Z','2026-11-27T08:44:52.478239Z',0,0,'/tmp/mh/gen','["pytest", "-q", "-p", "qbench", "-p", "no:randomly", "--qbench-shard=2/2", "--qbench-run-id=s2"]',1,1,0,0,0,0,0,0,0,1,0,0.056742,NULL,'0123456789abcdef0123456789abcdef01234567','github-actions',NULL,'3.11.7','Linux-6.18.44-fc-v669-x86_64-with-glibc2.36','0.1.0.dev0','2026-11-27T08:44:52.514396Z','2/2',0,0,0,0,0,0);
INSERT INTO "runs" VALUES(3,'20261127T084453Z-c40a42','pytest','2026-11-27T08:44:51.108782Z','2026-11-27T08:44:52.478239Z',1,0,'/tmp/mh/gen','["qbench", "merge", ".qbench/runs/s1", ".qbench/runs/s2"]',2,1,1,0,0,0,0,0,0,0,0,0.196211,NULL,'0123456789abcdef0123456789abcdef01234567','github-actions',NULL,'3.11.7','Linux-6.18.44-fc-v669-x86_64-with-glibc2.36','0.1.0.dev0','2026-11-27T08:44:54.287857Z',NULL,0,0,0,NULL,NULL,0);
CREATE TABLE tests (id INTEGER PRIMARY KEY, nodeid TEXT NOT NULL UNIQUE);
INSERT INTO "tests" VALUES(1,'test_a.py::test_a');
INSERT INTO "tests" VALUES(2,'test_b.py::test_b');
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
COMMIT;
