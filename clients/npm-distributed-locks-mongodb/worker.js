#!/usr/bin/env node
// locklab worker for the npm package distributed-locks-mongodb 1.0.3, run as published (its
// MongoStorage does every MongoDB operation). The reference example of harness/WORKERS.md.
//
// The package's lock factory (package distributed-locks-common / distributed-locks) cannot be
// installed, so its Lock is re-created here: value = `${key}-${machineId}-${uuid}`, lock() calls
// storage.set(key, value, {ttl}) up to `retries` times, waiting `interval` between attempts
// (also after the last) before giving up, and unlock() is storage.unSet(key, value).
// Mapping of the protocol's flags: ttl = --expiry-ms rounded up to whole seconds (the library
// counts in seconds), interval = --busy-wait-max-ms (it waits a fixed time), retries = 3 (the
// factory's default), w from --write-concern in the connection string (the README asks for
// majority). Other flags (extension, backoff, fencing, honour-lost) have no counterpart here.
//
// What the history says about this lock: acquire ok carries no token (value.no_token: true: the
// library has none); a `false` from set() is recorded as not acquired (the library turns every
// error of its writes into `false`, so this is all a user can know); an exception from set()
// (its first read) fails the attempt, where the factory would leave lock() pending forever; a
// release completes `info`, because unlock() answers true whether or not it deleted anything.
'use strict';
const fs = require('fs');
const crypto = require('crypto');
const { MongoClient } = require('mongodb');
const { MongoStorage } = require('distributed-locks-mongodb');

const RETRIES = 3;
const opts = parseFlags(process.argv.slice(2));
const num = (key, fallback) => (opts[key] === undefined ? fallback : Number(opts[key]));
const id = opts.id;
const ttlSeconds = Math.ceil(num('expiry-ms', 2000) / 1000);
// --write-concern: "majority" or a member count 1..7, as the protocol says; anything else is
// refused (exit 2) rather than run at another concern than the history records.
const writeConcern = parseWriteConcern(opts['write-concern'] || 'majority');
const uri = `${opts.uri}&w=${writeConcern}`;
let stopping = false;
let wake = () => {};
process.on('SIGTERM', () => { stopping = true; wake(); });
process.on('SIGINT', () => { stopping = true; wake(); });

function parseWriteConcern(text) {
  if (text === 'majority') return 'majority';
  if (/^[1-7]$/.test(text)) return Number(text);
  console.error(`npm-distributed-locks-mongodb: --write-concern: expected majority or 1..7, got "${text}"`);
  process.exit(2);
}

function parseFlags(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i].startsWith('--')) throw new Error(`unexpected argument ${argv[i]}`);
    const key = argv[i].slice(2);
    out[key] = key === 'no-fencing' ? true : argv[++i];
  }
  for (const key of ['id', 'uri', 'history']) {
    if (!out[key]) throw new Error(`--${key} is required`);
  }
  return out;
}

// One event, one write(2) on an O_APPEND descriptor. t is CLOCK_MONOTONIC in nanoseconds
// (process.hrtime is libuv's monotonic clock), written as an exact integer.
const historyFd = fs.openSync(opts.history, 'a');
function record(type, f, lock, value) {
  const rest = JSON.stringify({ process: id, type, f, lock, value });
  fs.writeSync(historyFd, `{"t":${process.hrtime.bigint()},${rest.slice(1)}\n`);
}

// Sleeps up to ms; a stop request ends it early.
function sleep(ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    wake = () => { clearTimeout(timer); resolve(); };
  });
}

// The worker's own random choices (which lock), seeded: splitmix32.
let seed = num('seed', 0) >>> 0;
function random() {
  seed = (seed + 0x9e3779b9) >>> 0;
  let z = seed;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return ((z ^ (z >>> 16)) >>> 0) / 4294967296;
}

// The factory's lock(): true when acquired, false after `retries` refusals or a stop.
async function acquire(storage, key, value) {
  for (let attempt = 0; attempt < RETRIES && !stopping; attempt++) {
    if (await storage.set(key, value, { ttl: ttlSeconds })) return true;
    await sleep(num('busy-wait-max-ms', 1000));
  }
  return false;
}

async function operation(storage, counter, kind) {
  const lock = kind === 'counter' ? 'L1' : `L${1 + Math.floor(random() * num('locks', 1))}`;
  const value = `${lock}-${id}-${crypto.randomUUID()}`;
  record('invoke', 'acquire', lock);
  try {
    if (!(await acquire(storage, lock, value))) {
      const reason = stopping ? 'cancelled' : `not acquired after ${RETRIES} attempts`;
      return record('fail', 'acquire', lock, { reason });
    }
  } catch (e) {
    return record('fail', 'acquire', lock, { reason: `set() threw: ${e.message}` });
  }
  record('ok', 'acquire', lock, { lease_ms: ttlSeconds * 1000, no_token: true });
  if (kind === 'counter') await increment(counter, lock);
  else await sleep(num('critical-section-ms', 50));
  record('invoke', 'release', lock);
  try {
    await storage.unSet(lock, value);
    record('info', 'release', lock, { error: 'unlock() answers true whether or not it deleted' });
  } catch (e) {
    record('info', 'release', lock, { error: e.message });
  }
}

// Read the counter, hold, write it back plus one: guarded only by the lock.
async function increment(counter, lock) {
  let count;
  try {
    count = ((await counter.findOne({ _id: 'counter' })) || { count: 0 }).count;
  } catch (e) {
    return record('fail', 'read', lock, { resource: 'counter', error: e.message });
  }
  record('ok', 'read', lock, { resource: 'counter', count });
  await sleep(num('critical-section-ms', 50));
  if (stopping) return;
  const written = { resource: 'counter', count: count + 1, read: count };
  record('invoke', 'write', lock, written);
  try {
    await counter.updateOne({ _id: 'counter' }, { $set: { count: count + 1 } }, { upsert: true });
    record('ok', 'write', lock, written);
  } catch (e) {
    record('info', 'write', lock, { resource: 'counter', count: count + 1, error: e.message });
  }
}

async function main() {
  const database = opts.database || 'locklab';
  const storage = new MongoStorage({ url: uri, database, collectionName: 'locks' });
  const client = new MongoClient(uri);
  try {
    await storage.init();
    await client.connect();
  } catch (e) {
    console.error(`npm-distributed-locks-mongodb ${id}: cannot connect: ${e.message}`);
    process.exit(2);
  }
  // The counter's read shows every acknowledged write: majority at w:majority, the primary's
  // own ("local") at a numbered w, where the commit point trails what the primary acknowledged.
  const level = writeConcern === 'majority' ? 'majority' : 'local';
  const counter = client.db(database).collection('counter', { readConcern: { level } });
  const operations = num('operations', 0);
  for (let done = 0; !stopping && (operations === 0 || done < operations); done++) {
    await operation(storage, counter, opts.kind || 'mutex');
  }
  await Promise.all([storage.close(), client.close()]);
}

main().then(() => process.exit(0));
