'use strict';
// The frame of a driver check script against a fresh three-member mongosim set (rs0):
//
//   node SCRIPT.js --mongosim PATH
//
// `checkMain(name, scenario)` parses the arguments, exits 77 when the Node.js driver is not
// installed, starts the set, runs `scenario(set, report)` and stops the set whatever happens.
// `report(checkName, fn)` runs one synchronous check and prints "ok - NAME" or "not ok - NAME:
// why"; an exception out of the scenario itself is one more failed check. Prints "N passed,
// M failed" and exits 0 only when every check passed and at least one ran.

const path = require('node:path');

const MEMBERS = 3;

async function runChecks(binary, scenario) {
  const { MongosimReplicaSet } = require('./mongosim_replica_set');
  const set = await new MongosimReplicaSet(binary, MEMBERS).start();
  let passed = 0;
  let failed = 0;
  const oneLine = (err) => err.message.split('\n').join(' ');
  const report = (name, fn) => {
    try {
      fn();
      passed++;
      console.log(`ok - ${name}`);
    } catch (err) {
      failed++;
      console.log(`not ok - ${name}: ${oneLine(err)}`);
    }
  };
  try {
    await scenario(set, report);
  } catch (err) {
    failed++;
    console.log(`not ok - scenario: ${oneLine(err)}`);
    // Where it was thrown and what the driver attached (a network error's cause): a failure on a
    // CI machine must be diagnosable from its log alone.
    for (const line of String(err.stack || '').split('\n').slice(1)) console.log(`#   ${line.trim()}`);
    if (err.cause) console.log(`#   cause: ${err.cause.stack || err.cause}`);
  } finally {
    await set.stop();
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

async function mainOf(name, scenario) {
  try {
    require.resolve('mongodb');
  } catch (_) {
    console.log(`${name}: the Node.js driver is not installed; not run`);
    return 77;
  }
  const args = process.argv.slice(2);
  if (args[0] !== '--mongosim' || !args[1]) {
    console.error(`usage: ${name}.js --mongosim PATH`);
    return 1;
  }
  return runChecks(path.resolve(args[1]), scenario);
}

function checkMain(name, scenario) {
  mainOf(name, scenario).then((code) => process.exit(code), (err) => {
    console.log(`${name}: ${err.message}`);
    console.log('0 passed, 1 failed');
    process.exit(1);
  });
}

module.exports = { checkMain };
