#!/usr/bin/env node
'use strict';
// Change streams of mongosim with the Node.js driver 6 on a three-member set (rs0)
// (docs/mongodb-behaviour.md, Change streams):
//
// 1. collection.watch() with fullDocument "updateLookup" and a $match stage returns insert,
//    update (with updateDescription and the looked-up document), replace and delete events in
//    order, each with a resume token, and filters what the $match rejects;
// 2. watch({resumeAfter}) and watch({startAtOperationTime}) resume exactly there;
// 3. a bad stage gets mongod's code (IllegalOperation 20);
// 4. across replSetStepDown the stream goes on, and when the member it reads from is killed the
//    driver resumes on the new primary by itself, with no event lost or repeated (shown by the
//    events and by command monitoring: a second aggregate with resumeAfter, on another host).
// No sleep stands in for ordering: every step waits for an observed condition or an event.
//
// The kill lands while the stream's getMore is in flight on that member. Killed between getMores
// (when no read of the stream is pending), Node.js driver 6 can write the next getMore to a
// socket whose peer has closed it but whose close it has not yet processed: the write fails with
// a raw EPIPE ("This socket has been ended by the other party"), not a MongoNetworkError, and the
// stream gives up instead of resuming. That is the driver's, and the same against mongod: a killed
// process's sockets close the same way.
//
//   node change_stream_node.js --mongosim PATH
//
// Prints one line per check and "N passed, M failed"; exits 0 only when every check passed,
// 77 when the driver is not installed.
//
// What it leaves out: concurrent writers, partitions (members are stopped, not cut off), and
// events larger than a few bytes.

const assert = require('node:assert');
const { checkMain } = require('./lib/three_member_check');

const DEADLINE_MS = 30000;
const AWAIT_MS = 200;
const SELECTION_TIMEOUT_MS = 3000;

// The next event of the stream, or an error after the deadline.
async function nextEvent(stream) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no event within ${DEADLINE_MS} ms`)), DEADLINE_MS);
  });
  try {
    return await Promise.race([stream.next(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function events(stream, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await nextEvent(stream));
  return out;
}

async function shapes(coll, report) {
  const stream = coll.watch([{ $match: { 'documentKey._id': { $ne: 'skipped' } } }],
      { fullDocument: 'updateLookup', maxAwaitTimeMS: AWAIT_MS });
  await stream.tryNext();  // the aggregate has run: the stream starts here
  const majority = { writeConcern: { w: 'majority' } };
  await coll.insertOne({ _id: 'a', n: 1, tags: [1, 2, 3] }, majority);
  await coll.insertOne({ _id: 'skipped' }, majority);
  await coll.updateOne({ _id: 'a' }, { $set: { n: 2 }, $pop: { tags: 1 } }, majority);
  await coll.replaceOne({ _id: 'a' }, { r: true }, majority);
  await coll.deleteOne({ _id: 'a' }, majority);
  const got = await events(stream, 4);
  await stream.close();
  report('watch() returns insert, update, replace, delete in order, $match applied', () => {
    assert.deepStrictEqual(got.map((e) => e.operationType), ['insert', 'update', 'replace', 'delete']);
    for (const e of got) {
      assert.deepStrictEqual(e.ns, { db: 'cs', coll: 'items' });
      assert.deepStrictEqual(e.documentKey, { _id: 'a' });
      assert.strictEqual(typeof e._id._data, 'string');
      assert.strictEqual(e.clusterTime._bsontype, 'Timestamp');
      assert.ok(e.wallTime instanceof Date);
    }
  });
  report('the insert event carries the document', () => {
    assert.deepStrictEqual(got[0].fullDocument, { _id: 'a', n: 1, tags: [1, 2, 3] });
  });
  report('the update event carries mongod\'s updateDescription and the looked-up document', () => {
    assert.deepStrictEqual(got[1].updateDescription,
        { updatedFields: { n: 2 }, removedFields: [], truncatedArrays: [{ field: 'tags', newSize: 2 }] });
    assert.strictEqual(got[1].fullDocument, null);  // deleted by the time it is read
  });
  report('the replace event carries the new document', () => {
    assert.deepStrictEqual(got[2].fullDocument, { _id: 'a', r: true });
  });
  return got;
}

async function resumes(coll, got, report) {
  const fromToken = coll.watch([], { resumeAfter: got[1]._id, maxAwaitTimeMS: AWAIT_MS });
  const afterToken = await events(fromToken, 2);
  await fromToken.close();
  report('watch({resumeAfter}) returns exactly the events after the token', () => {
    assert.deepStrictEqual(afterToken.map((e) => e.operationType), ['replace', 'delete']);
  });
  const fromTime = coll.watch([], { startAtOperationTime: got[2].clusterTime, maxAwaitTimeMS: AWAIT_MS });
  const atTime = await events(fromTime, 2);
  await fromTime.close();
  report('watch({startAtOperationTime}) starts at that event', () => {
    assert.deepStrictEqual(atTime.map((e) => e.operationType), ['replace', 'delete']);
  });
  let error = null;
  const bad = coll.watch([{ $group: { _id: 1 } }]);
  try {
    await bad.tryNext();
  } catch (err) {
    error = err;
  }
  await bad.close().catch(() => {});
  report('a stage a change stream does not allow gets IllegalOperation (20)', () => {
    assert.ok(error, 'no error');
    assert.strictEqual(error.code, 20);
  });
}

async function failover(set, report) {
  const { MongoClient } = require('mongodb');
  const aggregates = [];
  // The driver sends a getMore only to its cursor's server once server selection finds it; after
  // that server dies, selection fails after serverSelectionTimeoutMS and the stream resumes. A
  // short timeout keeps that wait short (the same against mongod).
  const client = new MongoClient(set.uri, { monitorCommands: true,
    serverSelectionTimeoutMS: SELECTION_TIMEOUT_MS, heartbeatFrequencyMS: 500 });
  let onGetMore = null;  // called once with the address of the next getMore the stream sends
  client.on('commandStarted', (ev) => {
    if (ev.commandName === 'aggregate') aggregates.push({ address: ev.address, stage: ev.command.pipeline[0].$changeStream });
    if (ev.commandName === 'getMore' && onGetMore) {
      const call = onGetMore;
      onGetMore = null;
      call(ev.address);
    }
  });
  const writer = new MongoClient(set.uri, { serverSelectionTimeoutMS: DEADLINE_MS, heartbeatFrequencyMS: 500 });
  await client.connect();
  await writer.connect();
  try {
    const coll = client.db('cs').collection('failover');
    const wcoll = writer.db('cs').collection('failover');
    const majority = { writeConcern: { w: 'majority' } };
    const stream = coll.watch([], { maxAwaitTimeMS: AWAIT_MS });
    await stream.tryNext();
    const seen = [];
    const take = async () => seen.push((await nextEvent(stream)).documentKey._id);
    await wcoll.insertOne({ _id: 'e1' }, majority);
    await take();
    const oldPrimary = await set.primaryIndex();
    const down = await set.command(oldPrimary, { replSetStepDown: 30, secondaryCatchUpPeriodSecs: 10 });
    report('replSetStepDown succeeds', () => assert.strictEqual(down.ok, 1));
    const newPrimary = await set.waitForPrimary(oldPrimary);
    report('a new primary is elected', () => assert.ok(newPrimary >= 0 && newPrimary !== oldPrimary));
    await wcoll.insertOne({ _id: 'e2' }, majority);
    await take();
    report('the stream goes on across the step-down without resuming', () => {
      assert.deepStrictEqual(seen, ['e1', 'e2']);
      assert.strictEqual(aggregates.length, 1, JSON.stringify(aggregates));
      assert.strictEqual(aggregates[0].address, set.members[oldPrimary].host);
    });
    // The getMore is started (the event comes before its bytes are written, and the write
    // follows within the same turn of the event loop, before the kill's socket close is read).
    let killedAt = null;
    const killed = new Promise((resolve) => {
      onGetMore = (address) => {
        killedAt = address;
        set.kill(oldPrimary);
        resolve();
      };
    });
    const third = take();
    third.catch(() => {});  // awaited below; until then a rejection must not end the process
    let killTimer;
    const noGetMore = new Promise((_, reject) => {
      killTimer = setTimeout(() => reject(new Error(`no getMore within ${DEADLINE_MS} ms`)), DEADLINE_MS);
    });
    try {
      await Promise.race([killed, noGetMore]);
    } finally {
      clearTimeout(killTimer);
    }
    report('the member is killed while the stream\'s getMore waits on it', () => {
      assert.strictEqual(killedAt, set.members[oldPrimary].host);
    });
    await wcoll.insertOne({ _id: 'e3' }, majority);
    await third;
    await wcoll.insertOne({ _id: 'e4' }, majority);
    await take();
    await stream.close();
    report('when its member dies the driver resumes on the new primary, nothing lost or repeated', () => {
      assert.deepStrictEqual(seen, ['e1', 'e2', 'e3', 'e4']);
      assert.ok(aggregates.length >= 2, JSON.stringify(aggregates));
      const last = aggregates[aggregates.length - 1];
      assert.notStrictEqual(last.address, set.members[oldPrimary].host);
      assert.ok(last.stage.resumeAfter, JSON.stringify(last.stage));
    });
  } finally {
    await client.close();
    await writer.close();
  }
}

async function scenario(set, report) {
  const { MongoClient } = require('mongodb');
  const client = new MongoClient(set.uri, { serverSelectionTimeoutMS: DEADLINE_MS });
  await client.connect();
  try {
    const coll = client.db('cs').collection('items');
    const got = await shapes(coll, report);
    await resumes(coll, got, report);
  } finally {
    await client.close();
  }
  await failover(set, report);
}

checkMain('change_stream_node', scenario);
