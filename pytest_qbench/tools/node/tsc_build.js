// node tsc_build.js TSC TSCONFIG SCRATCH: check a tsconfig.json with project references as
// `tsc -b` does (TypeScript's own solution builder: its order, its diagnostics, a dependent
// project reading what its references emit), with every file it would write kept in memory:
// nothing is written into the project. TSC is the project's node_modules/.bin/tsc, whose
// TypeScript is loaded; prints tsc's `--pretty false` lines and exits with the builder's status.
// A TypeScript without a JavaScript API (7, the native compiler) has no builder to load: each
// project of the references is then checked on its own, references first as `tsc -b` orders
// them, by `TSC -p PROJECT --noEmit` with its .tsbuildinfo in SCRATCH.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");

function loadTypeScript(tsc) {
  let ts = null;
  try {
    const real = fs.realpathSync(tsc); // node_modules/typescript/bin/tsc
    ts = require(path.join(path.dirname(path.dirname(real)), "lib", "typescript.js"));
  } catch (error) {
    try {
      ts = require(require.resolve("typescript", { paths: [process.cwd()] }));
    } catch (again) {
      ts = null;
    }
  }
  return ts && typeof ts.createSolutionBuilder === "function" ? ts : null;
}

// JSON with comments and trailing commas, as tsconfig.json is written; null when unreadable.
function readConfig(file) {
  try {
    const text = fs.readFileSync(file, "utf8").replace(/^\uFEFF/, "");
    const plain = text.replace(/"(?:\\.|[^"\\])*"|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (m) =>
      m.startsWith('"') ? m : " ",
    );
    return JSON.parse(plain.replace(/,(\s*[}\]])/g, "$1"));
  } catch (error) {
    return null;
  }
}

// The projects `tsc -b` builds for CONFIG, references first, each once; a solution file of
// `"files": []` and no `include` checks nothing of its own and is left out.
function projects(config, seen = new Set(), order = []) {
  const file = path.resolve(config);
  if (seen.has(file)) return order;
  seen.add(file);
  const data = readConfig(file);
  for (const reference of (data && data.references) || []) {
    if (!reference || typeof reference.path !== "string") continue;
    let target = path.resolve(path.dirname(file), reference.path);
    if (!target.endsWith(".json")) target = path.join(target, "tsconfig.json");
    projects(target, seen, order);
  }
  const solution = data && Array.isArray(data.files) && !data.files.length && !data.include;
  if (!solution) order.push(file);
  return order;
}

// Each project by the native tsc, its .tsbuildinfo into SCRATCH; the worst status.
function checkEach(tsc, config, scratch) {
  const { spawnSync } = require("child_process");
  let status = 0;
  projects(config).forEach((project, number) => {
    const relative = path.relative(process.cwd(), project) || project;
    const info = path.join(scratch, `${number}.tsbuildinfo`);
    const args = ["-p", relative, "--noEmit", "--pretty", "false"];
    const done = spawnSync(tsc, [...args, "--incremental", "--tsBuildInfoFile", info], {
      stdio: "inherit",
    });
    if (done.error) throw done.error;
    status = Math.max(status, done.status === null ? 99 : done.status);
  });
  return status;
}

const ts = loadTypeScript(process.argv[2]);
if (ts === null) {
  process.exitCode = checkEach(process.argv[2], process.argv[3], process.argv[4] || os.tmpdir());
  return;
}
const written = new Map(); // absolute path -> [text, time]
const directories = new Set();
const key = (file) => path.resolve(file);
const system = Object.assign({}, ts.sys, {
  writeFile(file, data) {
    written.set(key(file), [data, new Date()]);
    for (let dir = path.dirname(key(file)); !directories.has(dir); dir = path.dirname(dir)) {
      directories.add(dir);
      if (path.dirname(dir) === dir) break;
    }
  },
  createDirectory(dir) {
    directories.add(key(dir));
  },
  fileExists(file) {
    return written.has(key(file)) || (!isBuildInfo(file) && ts.sys.fileExists(file));
  },
  readFile(file, encoding) {
    const kept = written.get(key(file));
    if (kept) return kept[0];
    return isBuildInfo(file) ? undefined : ts.sys.readFile(file, encoding);
  },
  directoryExists(dir) {
    return directories.has(key(dir)) || ts.sys.directoryExists(dir);
  },
  getModifiedTime(file) {
    const kept = written.get(key(file));
    if (kept) return kept[1];
    return isBuildInfo(file) ? undefined : ts.sys.getModifiedTime(file);
  },
  setModifiedTime(file, time) {
    const kept = written.get(key(file));
    if (kept) kept[1] = time;
  },
  deleteFile(file) {
    written.delete(key(file));
  },
  realpath(file) {
    return written.has(key(file)) ? key(file) : ts.sys.realpath(file);
  },
});

// A .tsbuildinfo on disk from an earlier build is not read: every project is checked afresh.
function isBuildInfo(file) {
  return file.endsWith(".tsbuildinfo");
}

const host = ts.createSolutionBuilderHost(
  system,
  undefined,
  ts.createDiagnosticReporter(system, false),
  () => {},
);
const builder = ts.createSolutionBuilder(host, [process.argv[3]], { force: true });
process.exitCode = builder.build();
