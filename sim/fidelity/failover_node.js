#!/usr/bin/env node
'use strict';
// Failover smoke test of mongosim with the Node.js driver 6 on a three-member set (rs0):
//
// 1. the driver connects with ?replicaSet=rs0 and writes;
// 2. one secondary is paused, so an insert with w:3 is applied on the primary and then waits;
// 3. once the primary holds that document, replSetStepDown runs on an admin connection; the
//    waiting insert gets writeConcernError 189 with RetryableWriteError (docs/mongodb-behaviour.md,
//    Step-down commands);
// 4. the paused secondary is resumed; the driver retries the insert exactly once, on the new
//    primary, which already has it replicated (same lsid/txnNumber) and does not insert twice;
// 5. the driver keeps writing to the new primary.
// Shown by command monitoring (two insert attempts, on two servers) and by each member's
// serverStatus insert counter, and by counting the documents. No sleep stands in for ordering:
// every step waits for an observed condition.
//
//   node failover_node.js --mongosim PATH
//
// Prints one line per check and "N passed, M failed"; exits 0 only when every check passed,
// 77 when the driver is not installed.

const assert = require('node:assert');
const { checkMain } = require('./lib/three_member_check');

const POLL_INTERVAL_MS = 50;
const DEADLINE_MS = 30000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what, predicate) {
  const deadline = Date.now() + DEADLINE_MS;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await sleep(POLL_INTERVAL_MS);
  }
  throw new Error(`${what} not seen within ${DEADLINE_MS} ms`);
}

async function insertCounters(set) {
  return Promise.all(set.members.map(async (_, i) => {
    const status = await set.command(i, { serverStatus: 1 });
    const insert = status.metrics.commands.insert;  // absent until a member served one
    return insert ? Number(insert.total) : 0;
  }));
}

async function holds(set, i, id) {
  const { MongoClient } = require('mongodb');
  const direct = new MongoClient(set.members[i].directUri, { serverSelectionTimeoutMS: 2000 });
  try {
    return (await direct.db('failover').collection('items').findOne({ _id: id })) !== null;
  } finally {
    await direct.close();
  }
}

async function scenario(set, report) {
  const { MongoClient } = require('mongodb');
  const attempts = [];
  const client = new MongoClient(set.uri, { monitorCommands: true, appName: 'failover-node',
    serverSelectionTimeoutMS: DEADLINE_MS, heartbeatFrequencyMS: 500 });
  client.on('commandStarted', (ev) => {
    if (ev.commandName === 'insert' && ev.command.documents[0]._id === 'across') {
      attempts.push({ requestId: ev.requestId, address: ev.address, txnNumber: String(ev.command.txnNumber),
        lsid: ev.command.lsid.id.toString('hex') });
    }
  });
  const outcomes = new Map();  // requestId -> reply or error of each insert attempt
  client.on('commandSucceeded', (ev) => outcomes.set(ev.requestId, ev.reply));
  client.on('commandFailed', (ev) => outcomes.set(ev.requestId, ev.failure));
  await client.connect();
  try {
    const coll = client.db('failover').collection('items');
    await coll.insertOne({ _id: 'before' }, { writeConcern: { w: 'majority' } });
    const oldPrimary = await set.primaryIndex();
    report('driver writes to the set through ?replicaSet=rs0', () => assert.ok(oldPrimary >= 0));

    const paused = (oldPrimary + 2) % set.members.length;
    const before = await insertCounters(set);
    set.pause(paused);
    const across = coll.insertOne({ _id: 'across' }, { writeConcern: { w: 3 } });
    across.catch(() => {});  // awaited below; keeps an early rejection from going unhandled
    await waitFor('the insert applied on the primary', () => holds(set, oldPrimary, 'across'));
    const stepDown = await set.command(oldPrimary,
        { replSetStepDown: 30, secondaryCatchUpPeriodSecs: 10 });
    report('replSetStepDown on an admin connection succeeds', () => assert.strictEqual(stepDown.ok, 1));
    set.resume(paused);
    const result = await across;
    report('the insert around the step-down succeeds', () => assert.strictEqual(result.acknowledged, true));

    const newPrimary = await set.waitForPrimary(oldPrimary);
    report('a new primary is elected', () => assert.ok(newPrimary >= 0 && newPrimary !== oldPrimary));
    report('the driver retried exactly once, on the new primary, with the same transaction', () => {
      assert.strictEqual(attempts.length, 2, JSON.stringify(attempts));
      assert.strictEqual(attempts[0].address, set.members[oldPrimary].host);
      assert.strictEqual(attempts[1].address, set.members[newPrimary].host);
      assert.strictEqual(attempts[1].txnNumber, attempts[0].txnNumber);
      assert.strictEqual(attempts[1].lsid, attempts[0].lsid);
    });
    report('the first attempt got writeConcernError 189 labelled RetryableWriteError', () => {
      const first = outcomes.get(attempts[0].requestId);
      assert.ok(first && first.writeConcernError, JSON.stringify(first));
      assert.strictEqual(first.writeConcernError.code, 189);
      assert.ok((first.errorLabels || []).includes('RetryableWriteError'), JSON.stringify(first));
    });
    const after = await insertCounters(set);
    report('the servers saw one insert attempt each on the old and the new primary', () => {
      const delta = after.map((n, i) => n - before[i]);
      assert.strictEqual(delta[oldPrimary], 1, `deltas ${delta}`);
      assert.strictEqual(delta[newPrimary], 1, `deltas ${delta}`);
      assert.strictEqual(delta.reduce((a, b) => a + b, 0), 2, `deltas ${delta}`);
    });
    await coll.insertOne({ _id: 'after' }, { writeConcern: { w: 'majority' } });
    const acrossCount = await coll.countDocuments({ _id: 'across' });
    const total = await coll.countDocuments({});
    const onNewPrimary = await holds(set, newPrimary, 'after');
    report('the document was inserted once and the driver follows the new primary', () => {
      assert.strictEqual(acrossCount, 1);
      assert.strictEqual(total, 3);
      assert.ok(onNewPrimary);
    });
  } finally {
    await client.close();
  }
}

checkMain('failover_node', scenario);
