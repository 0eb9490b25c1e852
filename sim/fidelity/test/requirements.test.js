'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { requirementsUnmet, parseVersion } = require('../lib/requirements');

const rs70 = { versionArray: [7, 0, 2], topology: 'replicaset', serverless: false, auth: false,
  parameters: { enableTestCommands: true } };

test('no requirements, or one met alternative, runs the test', () => {
  assert.strictEqual(requirementsUnmet(undefined, rs70), null);
  assert.strictEqual(requirementsUnmet([{ minServerVersion: '4.0' }], rs70), null);
  assert.strictEqual(requirementsUnmet([{ minServerVersion: '8.0' },
    { minServerVersion: '4.0', topologies: ['replicaset'] }], rs70), null);
  assert.strictEqual(requirementsUnmet([{ maxServerVersion: '7.0.2' }], rs70), null);
  assert.strictEqual(requirementsUnmet([{ serverless: 'forbid' }], rs70), null);
});

test('unmet requirements skip with a reason naming them', () => {
  assert.match(requirementsUnmet([{ minServerVersion: '8.0' }], rs70), /minServerVersion 8\.0/);
  assert.match(requirementsUnmet([{ maxServerVersion: '6.9.9' }], rs70), /maxServerVersion/);
  assert.match(requirementsUnmet([{ topologies: ['sharded', 'load-balanced'] }], rs70),
      /topology replicaset/);
  assert.match(requirementsUnmet([{ serverless: 'require' }], rs70), /serverless/);
  assert.match(requirementsUnmet([{ auth: true }], rs70), /authentication/);
  assert.match(requirementsUnmet([{ serverParameters: { enableTestCommands: false } }], rs70),
      /enableTestCommands/);
  assert.match(requirementsUnmet([{ somethingNew: 1 }], rs70), /unsupported requirement/);
  assert.match(requirementsUnmet([], rs70), /non-empty/);
});

test('version strings', () => {
  assert.deepStrictEqual(parseVersion('4.1'), [4, 1, 0]);
  assert.deepStrictEqual(parseVersion('4.1.11'), [4, 1, 11]);
  assert.throws(() => parseVersion('4.x'), /bad server version/);
});
