'use strict';
// The operations of the Unified Test Format this runner executes, mapped onto the Node.js driver:
// collection and database operations on entities, and the special `testRunner` operations. Each
// operation takes the entity, the test's arguments and the run context, and returns the value the
// format's expectResult is matched against.
//
// `unsupportedOperation` lets the runner skip a test, naming the operation, before it runs any of
// it, so a test is never half-run on an operation this file does not know.

const OPERATION_TIMEOUT_MS = 30000;

// Argument names the format gives positions to; every other argument is passed as an option.
const COLLECTION_OPERATIONS = {
  insertOne: async (coll, a, o) => coll.insertOne(a.document, o),
  insertMany: async (coll, a, o) => coll.insertMany(a.documents, o),
  updateOne: async (coll, a, o) => coll.updateOne(a.filter, a.update, o),
  updateMany: async (coll, a, o) => coll.updateMany(a.filter, a.update, o),
  replaceOne: async (coll, a, o) => coll.replaceOne(a.filter, a.replacement, o),
  deleteOne: async (coll, a, o) => coll.deleteOne(a.filter, o),
  deleteMany: async (coll, a, o) => coll.deleteMany(a.filter, o),
  find: async (coll, a, o) => coll.find(a.filter, o).toArray(),
  findOne: async (coll, a, o) => coll.findOne(a.filter, o),
  findOneAndUpdate: async (coll, a, o) => coll.findOneAndUpdate(a.filter, a.update, o),
  findOneAndReplace: async (coll, a, o) => coll.findOneAndReplace(a.filter, a.replacement, o),
  findOneAndDelete: async (coll, a, o) => coll.findOneAndDelete(a.filter, o),
  countDocuments: async (coll, a, o) => coll.countDocuments(a.filter, o),
  estimatedDocumentCount: async (coll, a, o) => coll.estimatedDocumentCount(o),
  distinct: async (coll, a, o) => coll.distinct(a.fieldName, a.filter, o),
  aggregate: async (coll, a, o) => coll.aggregate(a.pipeline, o).toArray(),
  bulkWrite: async (coll, a, o) => bulkResult(await coll.bulkWrite(a.requests, o)),
  createIndex: async (coll, a, o) => coll.createIndex(a.keys, o),
  dropIndex: async (coll, a, o) => coll.dropIndex(a.name, o),
  listIndexes: async (coll, a, o) => coll.listIndexes(o).toArray(),
  drop: async (coll, a, o) => coll.drop(o),
};

const POSITIONAL = new Set(['document', 'documents', 'filter', 'update', 'replacement',
  'fieldName', 'pipeline', 'requests', 'keys', 'name', 'command', 'commandName', 'collection']);

const DATABASE_OPERATIONS = {
  runCommand: async (db, a, o) => db.command(a.command, o),
  aggregate: async (db, a, o) => db.aggregate(a.pipeline, o).toArray(),
  createCollection: async (db, a, o) => {
    await db.createCollection(a.collection, o);
    return undefined;
  },
  dropCollection: async (db, a, o) => db.dropCollection(a.collection, o),
  listCollections: async (db, a, o) => db.listCollections(a.filter || {}, o).toArray(),
  listCollectionNames: async (db, a, o) =>
    (await db.listCollections(a.filter || {}, { ...o, nameOnly: true }).toArray())
        .map((c) => c.name),
};

const RUNNER_OPERATIONS = new Set(['failPoint', 'targetedFailPoint', 'assertCollectionExists',
  'assertCollectionNotExists', 'assertIndexExists', 'assertIndexNotExists',
  'assertSameLsidOnLastTwoCommands', 'assertDifferentLsidOnLastTwoCommands']);

function unsupportedOperation(op, kindOf) {
  if (op.object === 'testRunner') {
    return RUNNER_OPERATIONS.has(op.name) ? null : `unsupported testRunner operation "${op.name}"`;
  }
  const kind = kindOf(op.object);
  const table = kind === 'collection' ? COLLECTION_OPERATIONS :
    kind === 'database' ? DATABASE_OPERATIONS : null;
  if (!table) return `operation "${op.name}" on unsupported entity "${op.object}" (${kind})`;
  if (!(op.name in table)) return `unsupported ${kind} operation "${op.name}"`;
  return null;
}

// The format names returnDocument "Before"/"After"; the Node driver wants lower case.
function driverOptions(args, entities) {
  const out = {};
  for (const [key, value] of Object.entries(args || {})) {
    if (POSITIONAL.has(key)) continue;
    if (key === 'session') out.session = entities.fetch(value, 'session');
    else if (key === 'returnDocument') out.returnDocument = String(value).toLowerCase();
    else if (key === 'readPreference' && value && value.mode) {
      out.readPreference = value.mode.replace(/^./, (c) => c.toLowerCase());
    } else out[key] = value;
  }
  return out;
}

// BulkWriteResult exposes its counts as getters; copy them into a plain document to match.
function bulkResult(r) {
  return {
    insertedCount: r.insertedCount, matchedCount: r.matchedCount,
    modifiedCount: r.modifiedCount, deletedCount: r.deletedCount,
    upsertedCount: r.upsertedCount, upsertedIds: r.upsertedIds, insertedIds: r.insertedIds,
  };
}

function withTimeout(promise, what) {
  let timer = null;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ` +
        `${OPERATION_TIMEOUT_MS} ms`)), OPERATION_TIMEOUT_MS);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

// Runs an entity operation; throws whatever the driver throws.
async function runEntityOperation(op, entities) {
  const kind = entities.kindOf(op.object);
  const table = kind === 'collection' ? COLLECTION_OPERATIONS : DATABASE_OPERATIONS;
  const target = entities.fetch(op.object, kind);
  const args = op.arguments || {};
  return withTimeout(table[op.name](target, args, driverOptions(args, entities)),
      `${op.object}.${op.name}`);
}

// Runs a testRunner operation. `ctx` has entities, internalClient, failPoints (a list the runner
// disables after the test) and matchValue for the assert operations.
async function runRunnerOperation(op, ctx) {
  const a = op.arguments || {};
  switch (op.name) {
    case 'failPoint':
    case 'targetedFailPoint': {
      const client = op.name === 'failPoint' ? ctx.entities.fetch(a.client, 'client').client :
        ctx.entities.fetch(a.session, 'session').client;
      await withTimeout(client.db('admin').command(a.failPoint), 'configureFailPoint');
      ctx.failPoints.push({ client, name: a.failPoint.configureFailPoint });
      return undefined;
    }
    case 'assertCollectionExists':
    case 'assertCollectionNotExists': {
      const names = await collectionNames(ctx.internalClient, a.databaseName);
      const exists = names.includes(a.collectionName);
      if (exists !== (op.name === 'assertCollectionExists')) {
        throw new Error(`collection ${a.databaseName}.${a.collectionName} ` +
            `${exists ? 'exists' : 'does not exist'}`);
      }
      return undefined;
    }
    case 'assertIndexExists':
    case 'assertIndexNotExists': {
      const coll = ctx.internalClient.db(a.databaseName).collection(a.collectionName);
      const indexes = await coll.listIndexes().toArray().catch(() => []);
      const exists = indexes.some((i) => i.name === a.indexName);
      if (exists !== (op.name === 'assertIndexExists')) {
        throw new Error(`index ${a.indexName} on ${a.databaseName}.${a.collectionName} ` +
            `${exists ? 'exists' : 'does not exist'}`);
      }
      return undefined;
    }
    case 'assertSameLsidOnLastTwoCommands':
    case 'assertDifferentLsidOnLastTwoCommands': {
      const started = ctx.entities.fetch(a.client, 'client').events
          .filter((e) => e.type === 'commandStartedEvent');
      if (started.length < 2) throw new Error(`${op.name}: fewer than two commands observed`);
      const [x, y] = started.slice(-2).map((e) => e.event.command.lsid);
      const same = ctx.matchValue(x, y, { exact: true }) === null;
      if (same !== (op.name === 'assertSameLsidOnLastTwoCommands')) {
        throw new Error(`${op.name}: the last two lsids are ${same ? 'equal' : 'different'}`);
      }
      return undefined;
    }
    default:
      throw new Error(`unsupported testRunner operation "${op.name}"`);
  }
}

async function collectionNames(client, dbName) {
  const list = await client.db(dbName).listCollections({}, { nameOnly: true }).toArray();
  return list.map((c) => c.name);
}

module.exports = { unsupportedOperation, runEntityOperation, runRunnerOperation, bulkResult,
  OPERATION_TIMEOUT_MS };
