// node tsc_build.js TSC TSCONFIG: check a tsconfig.json with project references as `tsc -b`
// does (TypeScript's own solution builder: its order, its diagnostics, a dependent project
// reading what its references emit), with every file it would write kept in memory: nothing is
// written into the project. TSC is the project's node_modules/.bin/tsc, whose TypeScript is
// loaded; prints tsc's `--pretty false` lines and exits with the builder's status.
"use strict";
const fs = require("fs");
const path = require("path");

function loadTypeScript(tsc) {
  try {
    const real = fs.realpathSync(tsc); // node_modules/typescript/bin/tsc
    return require(path.join(path.dirname(path.dirname(real)), "lib", "typescript.js"));
  } catch (error) {
    return require(require.resolve("typescript", { paths: [process.cwd()] }));
  }
}

const ts = loadTypeScript(process.argv[2]);
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
