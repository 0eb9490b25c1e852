#!/usr/bin/env node
'use strict';
// End-to-end check of the spec-test runner against a live mongosim, on the project's own small
// Unified Test Format files in test/specs/unified/selfcheck: every test in must-pass.json passes
// (or is skipped when its description says so), and every test in must-fail.json fails with a
// detail naming the mismatch its description names. A runner that passed everything, or failed
// for the wrong reason, fails this check.
//
//   node test/runner_selfcheck.js --mongosim PATH

const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const RUN_DEADLINE_MS = 120000;

function main() {
  const args = process.argv.slice(2);
  if (args[0] !== '--mongosim' || !args[1]) {
    console.error('usage: runner_selfcheck.js --mongosim PATH');
    return 1;
  }
  const here = path.resolve(__dirname, '..');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'locklab-selfcheck-'));
  try {
    return check(here, args[1], path.join(dir, 'r.json'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });  // pass or fail, nothing is left behind
  }
}

function check(here, mongosim, out) {
  const run = spawnSync(process.execPath, [path.join(here, 'unified_runner.js'),
    '--mongosim', mongosim, '--specs', path.join(__dirname, 'specs'), '--suite', 'selfcheck',
    '--results', out], { encoding: 'utf8', timeout: RUN_DEADLINE_MS });
  process.stdout.write(run.stdout || '');
  assert.strictEqual(run.status, 1, 'the runner must exit 1 when tests fail');
  const results = JSON.parse(fs.readFileSync(out, 'utf8'));
  let checked = 0;
  for (const r of results) {
    if (r.file.endsWith('must-fail.json')) {
      assert.strictEqual(r.status, 'fail', `${r.description} must fail`);
      assert.ok(r.detail.includes(r.description),
          `"${r.description}" failed for another reason: ${r.detail}`);
    } else {
      const want = /skips the test/.test(r.description) ? 'skip' : 'pass';
      assert.strictEqual(r.status, want, `${r.description}: ${r.detail}`);
    }
    checked++;
  }
  assert.strictEqual(checked, 9, 'every self-check test reported');
  console.log(`${checked} passed, 0 failed`);
  return 0;
}

try {
  process.exit(main());
} catch (err) {
  console.log(`runner_selfcheck: ${err.message}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
