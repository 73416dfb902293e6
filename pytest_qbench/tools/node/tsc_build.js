// node tsc_build.js TSC TSCONFIG SCRATCH: check a tsconfig.json with project references as
// `tsc -b` does (TypeScript's own solution builder: its order, its diagnostics, a dependent
// project reading what its references emit), with every file it would write kept in memory:
// nothing is written into the project. TSC is the project's node_modules/.bin/tsc, whose
// TypeScript is loaded; prints tsc's `--pretty false` lines and exits with the builder's status.
// A TypeScript without a JavaScript API (7, the native compiler) has no builder to load: each
// project of the references is then checked on its own, references first as `tsc -b` orders
// them, by `TSC -p` on a configuration in SCRATCH that extends the project's own and sends
// everything it writes (outputs, .tsbuildinfo) into a mirror of the project's paths under
// SCRATCH, its references pointing at their mirrored configurations: a project importing
// what a reference emits reads the declarations just built there, as under `tsc -b`.
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

// The configuration `TSC --showConfig` resolves for PROJECT (its `extends` followed, paths
// relative to its directory); null when tsc cannot resolve it (the check then says why).
function showConfig(tsc, project) {
  const { spawnSync } = require("child_process");
  const done = spawnSync(tsc, ["--showConfig", "-p", project], {
    encoding: "utf8",
    maxBuffer: 1 << 28,
  });
  if (done.error) throw done.error;
  try {
    return done.status === 0 ? JSON.parse(done.stdout) : null;
  } catch (error) {
    return null;
  }
}

// A project's own references (not inherited through `extends`), as tsconfig files.
function references(project) {
  const data = readConfig(project);
  const found = [];
  for (const reference of (data && data.references) || []) {
    if (!reference || typeof reference.path !== "string") continue;
    const target = path.resolve(path.dirname(project), reference.path);
    found.push(target.endsWith(".json") ? target : path.join(target, "tsconfig.json"));
  }
  return found;
}

// The configuration in the mirror for PROJECT: extends it; its files as tsc resolved them (a
// default `include` would be read from the mirror's directory); every path it writes under
// MIRROR (the same relative layout, so a dependent maps a source to its declarations there);
// its .tsbuildinfo as INFO; its references to their mirrored configurations.
function mirrored(project, shown, mirror, info) {
  const directory = path.dirname(project);
  const options = (shown && shown.compilerOptions) || {};
  const absolute = (value) => path.resolve(directory, value);
  const into = (value) => path.join(mirror, absolute(value));
  const compilerOptions = {};
  if (options.incremental || options.composite) compilerOptions.tsBuildInfoFile = info;
  if (options.composite && !options.rootDir) compilerOptions.rootDir = directory;
  // paths tsc resolves against the configuration's directory (`${configDir}` included)
  if (options.baseUrl) compilerOptions.baseUrl = absolute(options.baseUrl);
  if (options.paths) {
    compilerOptions.paths = {};
    for (const [name, targets] of Object.entries(options.paths)) {
      compilerOptions.paths[name] = options.baseUrl ? targets : targets.map(absolute);
    }
  }
  for (const name of ["typeRoots", "rootDirs"]) {
    if (Array.isArray(options[name])) compilerOptions[name] = options[name].map(absolute);
  }
  if (!options.noEmit) {
    const root = options.rootDir ? absolute(options.rootDir) : options.composite && directory;
    if (options.outDir) compilerOptions.outDir = into(options.outDir);
    else if (root) compilerOptions.outDir = path.join(mirror, root);
    else compilerOptions.noEmit = true; // outputs beside its sources, read by no reference
    if (options.declarationDir) compilerOptions.declarationDir = into(options.declarationDir);
    if (options.outFile) compilerOptions.outFile = into(options.outFile);
  }
  const config = {
    extends: project,
    compilerOptions,
    references: references(project).map((target) => ({ path: path.join(mirror, target) })),
  };
  const files = (shown && shown.files) || [];
  if (files.length) Object.assign(config, { files: files.map(absolute), include: [] });
  return config;
}

// Each project by the native tsc on its mirrored configuration, references first; its lines
// with the mirror's paths turned back into the project's; the worst status.
function checkEach(tsc, config, scratch) {
  const { spawnSync } = require("child_process");
  const mirror = path.join(fs.mkdtempSync(path.join(scratch, "tsc-")), "mirror");
  const order = projects(config);
  const linked = new Set();
  order.forEach((project, number) => {
    const file = path.join(mirror, project);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const info = path.join(scratch, `${number}.tsbuildinfo`);
    const data = mirrored(project, showConfig(tsc, project), mirror, info);
    fs.writeFileSync(file, JSON.stringify(data, null, 2));
    // node_modules at the same places above the mirrored outputs as above the project's
    for (const written of [file, ...Object.values(data.compilerOptions)]) {
      if (typeof written !== "string" || !written.startsWith(mirror + path.sep)) continue;
      linkModules(written.slice(mirror.length), mirror, linked);
    }
  });
  let status = 0;
  for (const project of order) {
    const args = ["-p", path.join(mirror, project), "--pretty", "false"];
    const done = spawnSync(tsc, args, { encoding: "utf8", maxBuffer: 1 << 28 });
    if (done.error) throw done.error;
    process.stdout.write(unmirrored(done.stdout, mirror));
    process.stderr.write(done.stderr);
    status = Math.max(status, done.status === null ? 99 : done.status);
  }
  return status;
}

// For each directory above ORIGINAL holding a node_modules, the same link in the mirror.
function linkModules(original, mirror, linked) {
  for (let dir = path.dirname(original); !linked.has(dir); dir = path.dirname(dir)) {
    linked.add(dir);
    const modules = path.join(dir, "node_modules");
    if (fs.existsSync(modules)) {
      fs.mkdirSync(path.join(mirror, dir), { recursive: true });
      fs.symlinkSync(modules, path.join(mirror, modules));
    }
    if (path.dirname(dir) === dir) break;
  }
}

// tsc's lines with each path in the mirror given as the project's own: a line's file relative
// to the working directory, and the mirror's prefix dropped from the messages.
function unmirrored(text, mirror) {
  const cwd = process.cwd();
  return text
    .split("\n")
    .map((line) => {
      const match = /^(.+?)(\(\d+,\d+\): .*)$/.exec(line);
      if (match) {
        const file = path.resolve(cwd, match[1]);
        if (file.startsWith(mirror + path.sep)) {
          line = path.relative(cwd, file.slice(mirror.length)) + match[2];
        }
      }
      return line.split(mirror + path.sep).join(path.sep);
    })
    .join("\n");
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
