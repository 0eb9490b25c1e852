'use strict';
// The runner decides before running a test whether it can run it at all; these cases show that a
// test using something unknown is skipped with the feature named, and a plain one is not.
const test = require('node:test');
const assert = require('node:assert');
const { unsupportedFeature, schemaProblem } = require('../lib/spec_file_runner');

const file = {
  createEntities: [
    { client: { id: 'client0', observeEvents: ['commandStartedEvent'] } },
    { database: { id: 'database0', client: 'client0', databaseName: 'db' } },
    { collection: { id: 'collection0', database: 'database0', collectionName: 'c' } },
  ],
};
const op = (name, object = 'collection0', extra = {}) =>
  ({ name, object, arguments: {}, ...extra });

test('supported tests are not skipped', () => {
  assert.strictEqual(unsupportedFeature(file, { description: 'd',
    operations: [op('insertOne'), op('failPoint', 'testRunner'), op('runCommand', 'database0')],
    expectEvents: [{ client: 'client0', events: [{ commandStartedEvent: {} }] }] }), null);
});

test('unknown operations, fields, entities and events are named', () => {
  assert.match(unsupportedFeature(file, { operations: [op('watch')] }),
      /collection operation "watch"/);
  assert.match(unsupportedFeature(file, { operations: [op('loop', 'testRunner')] }),
      /testRunner operation "loop"/);
  assert.match(unsupportedFeature(file, { operations: [op('insertOne', 'nobody')] }),
      /unsupported entity "nobody"/);
  assert.match(unsupportedFeature(file, { operations: [],
    expectEvents: [{ client: 'client0', eventType: 'cmap', events: [] }] }), /eventType "cmap"/);
  assert.match(unsupportedFeature(file, { operations: [op('insertOne', 'collection0',
      { expectError: { isTimeoutError: true } })] }), /isTimeoutError/);
  assert.match(unsupportedFeature({ createEntities: [{ bucket: { id: 'b' } }] },
      { operations: [] }), /entity type "bucket"/);
  assert.match(unsupportedFeature(file, { operations: [], expectLogMessages: [] }),
      /test field "expectLogMessages"/);
});

test('schema versions', () => {
  assert.strictEqual(schemaProblem('1.0'), null);
  assert.strictEqual(schemaProblem('1.12'), null);
  assert.match(schemaProblem('2.0'), /newer/);
  assert.match(schemaProblem('1.99'), /newer/);
  assert.match(schemaProblem('one'), /malformed/);
});
