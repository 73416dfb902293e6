"""Which tests tox's ``pytestmin`` environment runs on the oldest supported pytest (8.0, with the
pytest-xdist, pytest-rerunfailures, pytest-cov and coverage.py of its time).

Only ``pytest_qbench/plugin/`` imports pytest (the import-linter contracts), so what differs
between pytest versions reaches qbench through the plugin's use of pytest's API alone: hooks and
their reports, collection and deselection, the terminal and its closing line, the exit status,
options and usage errors, and the plugins of their time (xdist, rerunfailures, pytest-cov,
coverage.py), pytest's own subtests and JUnit XML. The modules that test that surface run whole
under pytest 8.0; every other plugin feature keeps the end-to-end tests named here, so each
feature still runs once through the old pytest. Everything else (the report library, the
renderers, the CLI and the MCP server over stored runs, the engines) does the same under any
pytest, and ``py`` runs it. tests/conftest.py marks the tests chosen here ``pytest_api``.
"""

from __future__ import annotations


WHOLE_MODULES = frozenset(
    {
        "test_plugin.py",  # every outcome kind through the hooks; the report against pytest's
        "test_options.py",  # addoption, ini values, usage errors before any test runs
        "test_reruns_subtests.py",  # pytest-rerunfailures' reports, pytest's subtests
        "test_xdist.py",  # reports serialized from the workers
        "test_crash_safety.py",  # hard exits, Ctrl-C, errors inside hooks
        "test_hookspecs.py",  # qbench's hooks through pluggy
        "test_summary_words.py",  # pytest's closing line
        "test_shards.py",  # deselection through pytest's hook
        "test_coverage.py",  # coverage.py and pytest-cov of their time
        "test_junit.py",  # pytest's own JUnit XML
        "test_new_tests_repeat.py",  # running an item again
        "test_agent_cases.py",  # agent.yaml files collected as pytest items
        "test_ctrf.py",  # counts reconciled with pytest's closing line, collection errors
        "test_mcp_report_details.py",  # collection errors as pytest children print them
        "test_doctest_failures.py",  # pytest's doctest items and their exceptions
        "test_session_end_warnings.py",  # pytest's warnings and terminal wrappers at the end
    }
)
"""Modules that test pytest's API surface: all their tests that run pytest (marked
``runs_pytest``) run on the oldest pytest."""


ONE_PER_FEATURE: dict[str, tuple[str, ...]] = {
    # outcomes changed in the reports, the exit status (the MCP answers read stored runs)
    "test_quarantine_run.py": (
        "test_a_quarantined_known_failure_does_not_fail_the_run",
        "test_a_new_failure_of_a_quarantined_test_fails_the_run",
        "test_a_failure_beside_a_quarantined_one_fails_the_run",
        "test_a_quarantine_without_history_keeps_the_run_failed",
        "test_a_run_stopped_early_stays_failed",
        "test_a_bad_value_is_a_usage_error",
        "test_auto_quarantines_a_flaky_test",
    ),
    # the run loop pulling tests from a queue (SQLite: the database does not depend on pytest)
    "test_shard_queue.py": (
        "test_processes_pulling_one_queue_run_every_test_exactly_once",
        "test_a_killed_machines_unit_is_run_by_another_after_its_lease",
        "test_a_retried_machine_gets_back_its_own_units",
    ),
    "test_agent_eval.py": (
        "test_recorded_sample_lands_in_the_report",
        "test_marker_on_a_class_applies_to_its_tests",
        "test_xdist_gives_the_serial_results",
    ),
    "test_agent_gates.py": (
        "test_metric_min_below_fails_the_run",
        "test_baseline_real_drop_fails_and_lists_new_failures",
        "test_repeat_runs_agent_tests_n_times",
        "test_repeat_under_xdist_equals_a_serial_run",
    ),
    "test_attachments.py": (
        "test_attach_bytes_text_file_and_image",
        "test_attach_in_teardown_and_across_reruns",
        "test_attach_under_xdist",
        "test_hook_lets_other_plugins_attach",
    ),
    "test_output_paths.py": (
        "test_read_only_runs_dir_refused_at_start",
        "test_disk_full_for_a_moment_keeps_every_result",
    ),
    "test_history_runs.py": (
        "test_failing_tests_carry_their_history",
        "test_history_under_xdist",
        "test_a_crashed_run_is_indexed_from_its_stream",
        "test_qbench_diff_sees_the_stop_and_lf_wherever_they_were_given",  # pytest's options
    ),
    "test_history_flaky.py": (
        "test_pass_on_retry_needs_the_same_failure_passing_on_rerun",
        "test_a_pass_and_a_fail_on_one_commit_is_flaky",
    ),
    "test_history_postgres.py": (
        "test_pytest_runs_with_qbench_db_share_their_history",
        "test_a_bad_qbench_db_is_refused_before_any_test_runs",
    ),
    "test_check_plugin.py": (
        "test_diagnostics_in_report_json_md_digest_annotations",
        "test_xdist_runs_checkers_on_the_controller_only",
        "test_exit_during_the_tests_stops_the_checkers",
    ),
    "test_merge.py": (
        "test_rerun_shard_equals_pytest_rerunfailures",
        "test_shards_by_keyword_equal_the_whole_run",
    ),
    "test_html_report.py": (
        "test_html_option_writes_the_page_and_the_run_dir_copy",
        "test_collection_errors_and_warnings",
        "test_interrupted_run_writes_the_html",
    ),
    "test_gates_fail_closed.py": (
        "test_error_at_start_fails_every_configured_gate",
        "test_coverage_gate_error_fails_the_run",
    ),
    "test_github.py": (
        "test_annotations_for_failures_errors_and_the_coverage_gate",
        "test_job_summary_is_appended_once",
    ),
    "test_secrets.py": (
        "test_secret_in_test_id_is_redacted",
        "test_secret_in_a_parametrized_id_reaches_no_file",
    ),
    "test_facts.py": ("test_error_lines_agree", "test_max_warnings_exit_is_known"),
    "test_mcp_runs.py": (
        "test_ingest_from_pytest_collection",
        "test_collection_errors_are_data",
        "test_a_run_returns_failures_only",
        "test_usage_error_is_a_tool_error_with_pytests_words",
        "test_a_crash_is_a_tool_error_that_counts_what_finished",
    ),
    "test_template_lookup.py": ("test_plugin_report_md_ignores_a_stray_template",),
    "test_template_cache.py": ("test_run_reuses_the_compiled_report_template",),
    "test_report_details.py": ("test_collect_only_is_a_collection_kept_out_of_history",),
    "test_compact_records.py": ("test_a_passing_test_stores_none_of_its_default_fields",),
    "test_docs_match_code.py": (
        "test_check_timeout_environment_variable_comes_between_command_line_and_ini",
    ),
}
"""The end-to-end tests (function names, every parameter) that keep each other plugin feature
running on the oldest pytest."""


def on_oldest_pytest(module: str, function: str) -> bool:
    """Whether the test ``function`` of the test module file ``module`` runs on pytest 8.0."""
    return module in WHOLE_MODULES or function in ONE_PER_FEATURE.get(module, ())


def chooses_from(module: str) -> bool:
    """Whether the test module file ``module`` holds a test that runs on pytest 8.0."""
    return module in WHOLE_MODULES or module in ONE_PER_FEATURE
