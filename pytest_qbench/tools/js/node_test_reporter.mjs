// node --test --test-reporter=THIS_FILE --test-reporter-destination=FILE: each test Node's
// built-in runner ended as one JSON line (its name, the suites around it, its file, line and
// column where Node gives them, skip/todo, the error's message and stack), a suite as one line
// too (kind "suite": Node counts no suite among its tests), and Node's own closing counts
// ("tests 6", "pass 2", ...) as "diagnostic" lines: qbench checks its counts against them.
function text(error) {
  if (!error) return null;
  const cause = error.cause instanceof Error ? error.cause : error;
  return String(cause.stack || cause.message || cause);
}

export default async function* qbenchReporter(source) {
  const suites = [];
  for await (const event of source) {
    const data = event.data || {};
    if (event.type === "test:start") {
      suites[data.nesting] = data.name;
      suites.length = data.nesting + 1;
    } else if (event.type === "test:pass" || event.type === "test:fail") {
      const details = data.details || {};
      const error = details.error;
      yield JSON.stringify({
        type: event.type === "test:pass" ? "pass" : "fail",
        kind: details.type === "suite" ? "suite" : "test",
        name: data.name,
        parents: suites.slice(0, data.nesting),
        file: data.file || null,
        line: data.line || null,
        column: data.column || null,
        skip: data.skip === undefined ? false : data.skip,
        todo: data.todo === undefined ? false : data.todo,
        failureType: error && error.failureType ? error.failureType : null,
        duration: details.duration_ms || 0,
        error: text(error),
      }) + "\n";
    } else if (event.type === "test:diagnostic" && !data.nesting) {
      yield JSON.stringify({ type: "diagnostic", message: String(data.message) }) + "\n";
    }
  }
}
