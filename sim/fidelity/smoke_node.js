#!/usr/bin/env node
'use strict';
// Smoke test of mongosim with the Node.js driver 6: the driver discovers a one-member replica set
// (rs0), its monitor keeps answering hello over OP_MSG after the handshake, and the everyday
// operations and a server error come back as they would from mongod 7.0.
//
//   node smoke_node.js --mongosim PATH      (starts and stops its own server)
//   MONGOSIM_URI=mongodb://... node smoke_node.js
//
// Prints one line per check and "N passed, M failed"; exits 0 only when every check passed,
// 77 when the driver is not installed.

const assert = require('node:assert');
const path = require('node:path');

const HEARTBEATS_WANTED = 3;
const HEARTBEAT_DEADLINE_MS = 15000;

const checks = [];
function check(name, fn) {
  checks.push({ name, fn });
}

function waitFor(what, predicate, deadlineMs) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const timer = setInterval(() => {
      if (predicate()) {
        clearInterval(timer);
        resolve();
      } else if (Date.now() - started > deadlineMs) {
        clearInterval(timer);
        reject(new Error(`${what} not seen within ${deadlineMs} ms`));
      }
    }, 20);
  });
}

function defineChecks(ctx) {
  check('discovers a replica set with a primary', async () => {
    const desc = ctx.client.topology.description;
    assert.strictEqual(desc.type, 'ReplicaSetWithPrimary');
    assert.strictEqual(desc.setName, 'rs0');
  });

  check('monitor keeps exchanging hello over OP_MSG after the handshake', async () => {
    // The first check of a monitor connection is the handshake; every later one is an OP_MSG
    // hello (the driver only uses legacy OP_QUERY before it knows the wire version).
    await waitFor(`${HEARTBEATS_WANTED} successful heartbeats`,
        () => ctx.heartbeats.length >= HEARTBEATS_WANTED, HEARTBEAT_DEADLINE_MS);
    const reply = ctx.heartbeats[ctx.heartbeats.length - 1].reply;
    assert.strictEqual(reply.setName, 'rs0');
    assert.strictEqual(reply.isWritablePrimary, true);
  });

  check('hello command reply has the shape of a 7.0 primary', async () => {
    const hello = await ctx.db.admin().command({ hello: 1 });
    assert.strictEqual(hello.ok, 1);
    assert.strictEqual(hello.isWritablePrimary, true);
    assert.strictEqual(hello.secondary, false);
    assert.strictEqual(hello.setName, 'rs0');
    assert.strictEqual(hello.maxWireVersion, 21);
    assert.strictEqual(hello.minWireVersion, 0);
    assert.strictEqual(hello.logicalSessionTimeoutMinutes, 30);
    assert.ok(Array.isArray(hello.hosts) && hello.hosts.includes(hello.primary), 'hosts/primary');
    assert.strictEqual(hello.me, hello.primary);
  });

  check('a client declaring serverApi version 1 is served', async () => {
    const { MongoClient } = require('mongodb');
    const versioned = new MongoClient(ctx.uri, { serverApi: { version: '1' },
      serverSelectionTimeoutMS: 10000 });
    try {
      const coll = versioned.db('smoke_node').collection('versioned');
      await coll.insertOne({ _id: 'v1' });
      assert.deepStrictEqual(await coll.findOne({ _id: 'v1' }), { _id: 'v1' });
    } finally {
      await versioned.close();
    }
  });

  check('buildInfo reports a 7.0 server', async () => {
    const info = await ctx.db.admin().command({ buildInfo: 1 });
    assert.match(String(info.version), /^7\.0\./);
    assert.strictEqual(Number(info.versionArray[0]), 7);
  });

  check('insertOne / insertMany / find with sort', async () => {
    await ctx.coll.insertOne({ _id: 1, x: 10 });
    const many = await ctx.coll.insertMany([{ _id: 2, x: 20 }, { _id: 3, x: 30 }]);
    assert.strictEqual(many.insertedCount, 2);
    const docs = await ctx.coll.find({ x: { $gte: 20 } }, { sort: { _id: -1 } }).toArray();
    assert.deepStrictEqual(docs, [{ _id: 3, x: 30 }, { _id: 2, x: 20 }]);
  });

  check('updateOne $inc and updateMany', async () => {
    const one = await ctx.coll.updateOne({ _id: 1 }, { $inc: { x: 1 } });
    assert.strictEqual(one.matchedCount, 1);
    assert.strictEqual(one.modifiedCount, 1);
    const many = await ctx.coll.updateMany({ x: { $gt: 15 } }, { $set: { big: true } });
    assert.strictEqual(many.matchedCount, 2);
    assert.deepStrictEqual(await ctx.coll.findOne({ _id: 1 }), { _id: 1, x: 11 });
  });

  check('findOneAndUpdate with upsert', async () => {
    const before = await ctx.coll.findOneAndUpdate({ _id: 'lock-a' }, { $set: { owner: 'p1' } },
        { upsert: true, returnDocument: 'before' });
    assert.strictEqual(before, null);
    const after = await ctx.coll.findOneAndUpdate({ _id: 'lock-b' },
        { $set: { owner: 'p2' }, $inc: { token: 1 } }, { upsert: true, returnDocument: 'after' });
    assert.deepStrictEqual(after, { _id: 'lock-b', owner: 'p2', token: 1 });
    const again = await ctx.coll.findOneAndUpdate({ _id: 'lock-b' }, { $inc: { token: 1 } },
        { returnDocument: 'after', projection: { _id: 0, token: 1 } });
    assert.deepStrictEqual(again, { token: 2 });
  });

  check('countDocuments', async () => {
    assert.strictEqual(await ctx.coll.countDocuments({}), 5);
    assert.strictEqual(await ctx.coll.countDocuments({ big: true }), 2);
  });

  check('duplicate key is error 11000 with keyPattern and keyValue', async () => {
    await assert.rejects(ctx.coll.insertOne({ _id: 1 }), (err) => {
      assert.strictEqual(err.code, 11000);
      assert.deepStrictEqual(err.keyPattern, { _id: 1 });
      assert.deepStrictEqual(err.keyValue, { _id: 1 });
      return true;
    });
  });

  check('unknown command is CommandNotFound (59)', async () => {
    await assert.rejects(ctx.db.command({ noSuchCommandHere: 1 }), (err) => {
      assert.strictEqual(err.code, 59);
      assert.strictEqual(err.codeName, 'CommandNotFound');
      return true;
    });
  });

  check('serverStatus counts the commands it served', async () => {
    const status = await ctx.db.admin().command({ serverStatus: 1 });
    assert.strictEqual(status.ok, 1);
    assert.match(String(status.version), /^7\.0\./);
    const commands = status.metrics && status.metrics.commands;
    assert.ok(commands, 'serverStatus.metrics.commands missing');
    assert.ok(Number(commands.insert.total) >= 2, 'insert counter');
    assert.ok(Number(commands.findAndModify.total) >= 3, 'findAndModify counter');
  });
}

async function connectAndRun(uri) {
  const { MongoClient } = require('mongodb');
  const heartbeats = [];
  const client = new MongoClient(uri, { heartbeatFrequencyMS: 500, serverSelectionTimeoutMS: 10000,
    appName: 'locklab-smoke-node' });
  client.on('serverHeartbeatSucceeded', (ev) => heartbeats.push(ev));
  await client.connect();
  const db = client.db('smoke_node');
  await db.dropDatabase();
  const ctx = { uri, client, db, coll: db.collection('items'), heartbeats };
  defineChecks(ctx);
  let failed = 0;
  try {
    for (const c of checks) {
      try {
        await c.fn();
        console.log(`ok - ${c.name}`);
      } catch (err) {
        failed++;
        console.log(`not ok - ${c.name}: ${err.message.split('\n').join(' ')}`);
      }
    }
  } finally {
    await client.close();
  }
  console.log(`${checks.length - failed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

async function main() {
  try {
    require.resolve('mongodb');
  } catch (_) {
    console.log('smoke_node: the Node.js driver is not installed; not run');
    return 77;
  }
  const args = process.argv.slice(2);
  if (args[0] === '--mongosim' && args[1]) {
    const { MongosimProcess } = require('./lib/mongosim_process');
    const server = new MongosimProcess(path.resolve(args[1]));
    await server.start();
    try {
      return await connectAndRun(server.uri);
    } finally {
      await server.stop();
    }
  }
  if (process.env.MONGOSIM_URI) return connectAndRun(process.env.MONGOSIM_URI);
  console.error('usage: smoke_node.js --mongosim PATH   (or set MONGOSIM_URI)');
  return 1;
}

main().then((code) => process.exit(code), (err) => {
  console.log(`smoke_node: ${err.message}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
