'use strict';
// Executes one Unified Test Format file against a server, test by test, following the format's
// "Executing a Test" steps: requirements, initialData (majority write concern, internal client),
// entities, operations, fail point clean-up (mode off), expectEvents, outcome. Each test yields
// one result: {description, status: 'pass'|'fail'|'skip', detail}. A failing test reports its first
// mismatch (path, expected, actual); a skipped one the reason.
//
// Tests in a file run one after another; nothing is shared between tests but the internal client.

const { matchValue, formatMismatch } = require('./match');
const { requirementsUnmet } = require('./requirements');
const { EntityMap, unsupportedEntity } = require('./entities');
const { unsupportedOperation, runEntityOperation, runRunnerOperation } = require('./operations');
const { checkError, unsupportedErrorAssertion } = require('./expect_error');

// The schema versions this runner understands: any 1.x up to this minor.
const SCHEMA_MAJOR = 1;
const SCHEMA_MINOR_MAX = 28;
const SUPPORTED_TEST_FIELDS = new Set(['description', 'runOnRequirements', 'skipReason',
  'operations', 'expectEvents', 'outcome']);
const SUPPORTED_OPERATION_FIELDS = new Set(['name', 'object', 'arguments', 'expectResult',
  'expectError', 'saveResultAsEntity', 'ignoreResultAndError']);
const EVENT_KINDS = new Set(['commandStartedEvent', 'commandSucceededEvent', 'commandFailedEvent']);

class AssertionFailure extends Error {}

function schemaProblem(version) {
  const m = /^(\d+)\.(\d+)(\.\d+)?$/.exec(String(version));
  if (!m) return `malformed schemaVersion "${version}"`;
  if (Number(m[1]) !== SCHEMA_MAJOR || Number(m[2]) > SCHEMA_MINOR_MAX) {
    return `schemaVersion ${version} is newer than this runner ` +
        `(${SCHEMA_MAJOR}.${SCHEMA_MINOR_MAX})`;
  }
  return null;
}

// Finds the first feature of `test` this runner cannot execute, before anything is run.
function unsupportedFeature(file, test) {
  for (const key of Object.keys(test)) {
    if (!SUPPORTED_TEST_FIELDS.has(key)) return `unsupported test field "${key}"`;
  }
  const entityProblem = unsupportedEntity(file.createEntities);
  if (entityProblem) return entityProblem;
  const kinds = new Map();
  for (const spec of file.createEntities || []) {
    const kind = Object.keys(spec)[0];
    kinds.set(spec[kind].id, kind);
  }
  for (const op of test.operations) {
    for (const key of Object.keys(op)) {
      if (!SUPPORTED_OPERATION_FIELDS.has(key)) {
        return `unsupported operation field "${key}" in ${op.name}`;
      }
    }
    const opProblem = unsupportedOperation(op, (name) => kinds.get(name) || null);
    if (opProblem) return opProblem;
    const errProblem = op.expectError && unsupportedErrorAssertion(op.expectError);
    if (errProblem) return errProblem;
    if (op.saveResultAsEntity) kinds.set(op.saveResultAsEntity, 'result');
  }
  for (const expected of test.expectEvents || []) {
    if ((expected.eventType || 'command') !== 'command') {
      return `unsupported eventType "${expected.eventType}"`;
    }
    for (const ev of expected.events) {
      const kind = Object.keys(ev)[0];
      if (!EVENT_KINDS.has(kind)) return `unsupported expected event "${kind}"`;
    }
  }
  return null;
}

class SpecFileRunner {
  // server: the facts from describeServer; internalClient: a connected MongoClient; uri: the
  // connection string entity clients start from.
  constructor({ uri, internalClient, server }) {
    this.uri = uri;
    this.internalClient = internalClient;
    this.server = server;
  }

  async runFile(file) {
    const schema = schemaProblem(file.schemaVersion);
    if (schema) {
      return file.tests.map((t) => ({ description: t.description, status: 'fail',
        detail: schema }));
    }
    const fileUnmet = requirementsUnmet(file.runOnRequirements, this.server);
    if (fileUnmet) {
      return file.tests.map((t) => ({ description: t.description, status: 'skip',
        detail: fileUnmet }));
    }
    const results = [];
    for (const test of file.tests) results.push(await this.runTest(file, test));
    return results;
  }

  async runTest(file, test) {
    const result = (status, detail) => ({ description: test.description, status, detail });
    if (test.skipReason) return result('skip', test.skipReason);
    const unmet = requirementsUnmet(test.runOnRequirements, this.server);
    if (unmet) return result('skip', unmet);
    const unsupported = unsupportedFeature(file, test);
    if (unsupported) return result('skip', unsupported);

    const entities = new EntityMap(this.uri);
    const failPoints = [];
    try {
      await this.loadInitialData(file.initialData);
      const usesFailPoints = test.operations.some((op) => /failPoint$/i.test(op.name));
      await entities.create(file.createEntities, usesFailPoints);
      for (let i = 0; i < test.operations.length; i++) {
        await this.runOperation(test.operations[i], i, entities, failPoints);
      }
      entities.stopListening();
      await this.disableFailPoints(failPoints);
      this.checkEvents(test.expectEvents, entities);
      await this.checkOutcome(test.outcome);
      return result('pass', '');
    } catch (err) {
      return result('fail', failureDetail(err));
    } finally {
      entities.stopListening();
      await this.disableFailPoints(failPoints);
      await entities.close();
    }
  }

  async loadInitialData(initialData) {
    for (const data of initialData || []) {
      const db = this.internalClient.db(data.databaseName);
      const majority = { writeConcern: { w: 'majority' } };
      await db.collection(data.collectionName).drop(majority).catch((err) => {
        if (err.code !== 26) throw err; // NamespaceNotFound: nothing to drop.
      });
      if (data.createOptions || data.documents.length === 0) {
        await db.createCollection(data.collectionName, { ...(data.createOptions || {}),
          ...majority });
      }
      if (data.documents.length > 0) {
        await db.collection(data.collectionName).insertMany(data.documents, majority);
      }
    }
  }

  async runOperation(op, index, entities, failPoints) {
    const where = `operation ${index} (${op.object}.${op.name})`;
    if (op.object === 'testRunner') {
      try {
        await runRunnerOperation(op, { entities, failPoints, internalClient: this.internalClient,
          matchValue });
      } catch (err) {
        throw new AssertionFailure(`${where}: ${err.message}`);
      }
      return;
    }
    let value;
    let error = null;
    try {
      value = await runEntityOperation(op, entities);
    } catch (err) {
      error = err;
    }
    if (op.ignoreResultAndError) return;
    if (op.expectError) {
      const m = checkError(op.expectError, error, entities);
      if (m) throw new AssertionFailure(`${where}: ${formatMismatch(m)}`);
      return;
    }
    if (error) {
      const code = error.code !== undefined ? ` (code ${error.code}${error.codeName ?
        ` ${error.codeName}` : ''})` : '';
      throw new AssertionFailure(`${where}: unexpected error${code}: ${error.message}`);
    }
    if (op.expectResult !== undefined) {
      const m = matchValue(op.expectResult, value,
          { root: true, arrayOfRoots: true, entities }, 'expectResult');
      if (m) throw new AssertionFailure(`${where}: ${formatMismatch(m)}`);
    }
    if (op.saveResultAsEntity) entities.add(op.saveResultAsEntity, 'result', value);
  }

  async disableFailPoints(failPoints) {
    while (failPoints.length > 0) {
      const fp = failPoints.pop();
      await fp.client.db('admin').command({ configureFailPoint: fp.name, mode: 'off' })
          .catch(() => {});
    }
  }

  checkEvents(expectEvents, entities) {
    for (const expected of expectEvents || []) {
      const state = entities.fetch(expected.client, 'client');
      if (state.overflowed) {
        throw new AssertionFailure(`expectEvents(${expected.client}): too many events observed`);
      }
      const actual = state.events;
      const count = expected.ignoreExtraEvents ?
        Math.min(actual.length, expected.events.length) : actual.length;
      if (count !== expected.events.length) {
        const names = actual.map((e) => `${e.type}:${e.event.commandName}`).join(', ');
        throw new AssertionFailure(`expectEvents(${expected.client}): expected ` +
            `${expected.events.length} events, observed ${actual.length} [${names}]`);
      }
      expected.events.forEach((want, i) => {
        const m = matchEvent(want, actual[i], `expectEvents(${expected.client})[${i}]`, entities);
        if (m) throw new AssertionFailure(formatMismatch(m));
      });
    }
  }

  async checkOutcome(outcome) {
    for (const data of outcome || []) {
      const docs = await this.internalClient.db(data.databaseName)
          .collection(data.collectionName)
          .find({}, { sort: { _id: 1 }, readPreference: 'primary',
            readConcern: { level: 'local' } })
          .toArray();
      const m = matchValue(data.documents, docs, { exact: true },
          `outcome(${data.databaseName}.${data.collectionName})`);
      if (m) throw new AssertionFailure(formatMismatch(m));
    }
  }
}

// An assertion says what differed; anything else thrown is a runner or driver surprise, shown
// with the top of its stack.
function failureDetail(err) {
  if (err instanceof AssertionFailure) return err.message;
  const text = err && err.stack ? err.stack.split('\n').slice(0, 3).join(' | ') : String(err);
  return `unexpected error: ${text}`;
}

function matchEvent(want, have, path, entities) {
  const kind = Object.keys(want)[0];
  if (have.type !== kind) {
    return { path, expected: kind, actual: `${have.type}:${have.event.commandName}`,
      reason: 'event kind differs' };
  }
  const body = want[kind];
  const ev = have.event;
  if (body.commandName !== undefined && body.commandName !== ev.commandName) {
    return { path: `${path}.commandName`, expected: body.commandName, actual: ev.commandName,
      reason: 'command name differs' };
  }
  if (body.databaseName !== undefined && body.databaseName !== ev.databaseName) {
    return { path: `${path}.databaseName`, expected: body.databaseName, actual: ev.databaseName,
      reason: 'database differs' };
  }
  if (body.command !== undefined) {
    const m = matchValue(body.command, ev.command, { root: true, entities }, `${path}.command`);
    if (m) return m;
  }
  if (body.reply !== undefined) {
    const m = matchValue(body.reply, ev.reply, { root: true, entities }, `${path}.reply`);
    if (m) return m;
  }
  return null;
}

module.exports = { SpecFileRunner, unsupportedFeature, schemaProblem };
