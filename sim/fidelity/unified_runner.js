#!/usr/bin/env node
'use strict';
// Runs MongoDB's Unified Test Format spec files against mongosim (started here as a one-member
// replica set) or against any server given by URI, with the official Node.js driver.
//
//   node unified_runner.js --mongosim PATH [--suite crud]... [--specs DIR] [--filter TEXT]
//   node unified_runner.js --uri mongodb://HOST:PORT/?replicaSet=rs0 [--suite ...]
//   --results FILE also writes every test's result as JSON: [{file, description, status, detail}]
//
// The spec files are read where they are kept, never copied: --specs, else $LOCKLAB_SPECS_DIR,
// else ../shared/specs beside the repository. Output: one line per test, a summary per file, and
// a closing "N passed, M failed, K skipped" line. Exit status: 0 when tests ran and none failed,
// 1 when any failed or the run broke, 77 when the suite was not run (no spec files, no driver) or
// every test was skipped — never 0 for a suite that did not run.

const fs = require('node:fs');
const path = require('node:path');

const EXIT_PASS = 0;
const EXIT_FAIL = 1;
const EXIT_NOT_RUN = 77;
const SPEC_FILE_BYTES_MAX = 16 * 1024 * 1024;

function usage(message) {
  console.error(`unified_runner: ${message}`);
  console.error('usage: unified_runner.js (--mongosim PATH | --uri URI) [--suite NAME]... ' +
      '[--specs DIR] [--filter TEXT] [--results FILE]');
  process.exit(EXIT_FAIL);
}

function parseArgs(argv) {
  const opts = { suites: [], mongosim: null, uri: null, specs: null, filter: null,
    results: null };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${flag} needs a value`);
      return argv[++i];
    };
    if (flag === '--suite') opts.suites.push(value());
    else if (flag === '--mongosim') opts.mongosim = value();
    else if (flag === '--uri') opts.uri = value();
    else if (flag === '--specs') opts.specs = value();
    else if (flag === '--filter') opts.filter = value();
    else if (flag === '--results') opts.results = value();
    else usage(`unknown argument "${flag}"`);
  }
  if (!opts.mongosim === !opts.uri) usage('give exactly one of --mongosim and --uri');
  return opts;
}

function specsRoot(opts) {
  if (opts.specs) return path.resolve(opts.specs);
  if (process.env.LOCKLAB_SPECS_DIR) return path.resolve(process.env.LOCKLAB_SPECS_DIR);
  return path.resolve(__dirname, '..', '..', '..', 'shared', 'specs');
}

function notRun(reason) {
  console.log(`unified_runner: suite not run: ${reason}`);
  console.log('0 passed, 0 failed, 0 skipped');
  process.exit(EXIT_NOT_RUN);
}

// Lists the spec files to run as {name: 'crud/find.json', full}, sorted.
function listSpecFiles(root, suites, filter) {
  const unified = path.join(root, 'unified');
  if (!fs.existsSync(unified)) notRun(`spec directory ${unified} is absent`);
  const dirs = suites.length > 0 ? suites :
    fs.readdirSync(unified).filter((d) => fs.statSync(path.join(unified, d)).isDirectory());
  const files = [];
  for (const dir of dirs.sort()) {
    const full = path.join(unified, dir);
    if (!fs.existsSync(full)) notRun(`spec directory ${full} is absent`);
    for (const f of fs.readdirSync(full).filter((n) => n.endsWith('.json')).sort()) {
      const name = `${dir}/${f}`;
      if (!filter || name.includes(filter)) files.push({ name, full: path.join(full, f) });
    }
  }
  if (files.length === 0) notRun(`no spec files under ${unified} for [${dirs.join(', ')}]`);
  return files;
}

function loadSpecFile(file, EJSON) {
  const size = fs.statSync(file.full).size;
  if (size > SPEC_FILE_BYTES_MAX) {
    throw new Error(`${file.full}: ${size} bytes exceeds ${SPEC_FILE_BYTES_MAX}`);
  }
  const doc = EJSON.parse(fs.readFileSync(file.full, 'utf8'), { relaxed: true });
  if (!Array.isArray(doc.tests)) throw new Error(`${file.full}: no "tests" array`);
  return doc;
}

async function withServer(opts, body) {
  if (opts.uri) return body(opts.uri);
  const { MongosimProcess } = require('./lib/mongosim_process');
  const server = new MongosimProcess(path.resolve(opts.mongosim));
  await server.start();
  try {
    return await body(server.uri);
  } finally {
    await server.stop();
  }
}

async function runAll(opts, files) {
  const { MongoClient, BSON } = require('mongodb');
  const { describeServer, parameterNames } = require('./lib/requirements');
  const { SpecFileRunner } = require('./lib/spec_file_runner');
  const loaded = files.map((f) => ({ ...f, doc: loadSpecFile(f, BSON.EJSON) }));
  const wantedParams = parameterNames(loaded.flatMap((f) =>
    [f.doc.runOnRequirements, ...f.doc.tests.map((t) => t.runOnRequirements)]));
  const totals = { pass: 0, fail: 0, skip: 0, all: [] };
  await withServer(opts, async (uri) => {
    const internalClient = new MongoClient(uri, { serverSelectionTimeoutMS: 10000 });
    try {
      await internalClient.connect();
      const server = await describeServer(internalClient, wantedParams);
      console.log(`unified_runner: server ${server.version}, topology ${server.topology}, ${uri}`);
      const runner = new SpecFileRunner({ uri, internalClient, server });
      for (const f of loaded) {
        const results = await runner.runFile(f.doc);
        report(f.name, results, totals);
        totals.all.push(...results.map((r) => ({ file: f.name, ...r })));
      }
    } finally {
      await internalClient.close();
    }
  });
  return totals;
}

function report(fileName, results, totals) {
  const counts = { pass: 0, fail: 0, skip: 0 };
  for (const r of results) {
    counts[r.status]++;
    totals[r.status]++;
    const tag = { pass: 'PASS', fail: 'FAIL', skip: 'SKIP' }[r.status];
    console.log(`  ${tag} ${fileName}: ${r.description}${r.detail ? ` -- ${r.detail}` : ''}`);
  }
  console.log(`${fileName}: ${counts.pass} passed, ${counts.fail} failed, ${counts.skip} skipped`);
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  try {
    require.resolve('mongodb');
  } catch (_) {
    notRun(`the Node.js driver is not installed (run ${path.join(__dirname,
        'install-node-deps.sh')})`);
  }
  const files = listSpecFiles(specsRoot(opts), opts.suites, opts.filter);
  let totals;
  try {
    totals = await runAll(opts, files);
  } catch (err) {
    console.log(`unified_runner: run failed: ${err.message}`);
    console.log('0 passed, 1 failed, 0 skipped');
    return EXIT_FAIL;
  }
  if (opts.results) fs.writeFileSync(opts.results, JSON.stringify(totals.all, null, 1));
  console.log(`${totals.pass} passed, ${totals.fail} failed, ${totals.skip} skipped`);
  if (totals.fail > 0) return EXIT_FAIL;
  return totals.pass > 0 ? EXIT_PASS : EXIT_NOT_RUN;
}

main().then((code) => process.exit(code), (err) => {
  console.error(`unified_runner: ${err.stack || err}`);
  process.exit(EXIT_FAIL);
});
