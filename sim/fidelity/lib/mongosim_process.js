'use strict';
// Starts a mongosim binary on a free loopback port as a one-member replica set (rs0), waits until
// it is a writable primary (or, with initiate: false, only until it listens, for a larger set that
// lib/mongosim_replica_set.js initiates), and stops it again: SIGTERM, then SIGKILL when it has not exited
// within stop_grace_ms. Every started server is also killed when this Node process exits, so a
// failing or interrupted run never leaves one behind.
//
// One MongosimProcess per server; not shared between concurrent callers. The server's output is
// kept in a bounded ring of lines for diagnostics.

const { spawn } = require('node:child_process');
const net = require('node:net');
const fs = require('node:fs');

const START_ATTEMPTS_MAX = 3;
const LISTEN_DEADLINE_MS = 15000;
const PRIMARY_DEADLINE_MS = 20000;
const POLL_INTERVAL_MS = 50;
const STOP_GRACE_MS = 5000;
const LOG_LINES_MAX = 200;
const SET_NAME = 'rs0';

const live = new Set();
let exitHookInstalled = false;

function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) {
      try { child.kill('SIGKILL'); } catch (_) { /* already gone */ }
    }
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => process.exit(sig === 'SIGINT' ? 130 : 143));
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    sock.once('connect', () => { sock.destroy(); resolve(true); });
    sock.once('error', () => resolve(false));
  });
}

class MongosimProcess {
  constructor(binaryPath, { extraArgs = [], initiate = true } = {}) {
    if (!binaryPath || !fs.existsSync(binaryPath)) {
      throw new Error(`mongosim binary not found at "${binaryPath}"`);
    }
    this.binaryPath = binaryPath;
    this.extraArgs = extraArgs;
    this.initiateAlone = initiate;
    this.child = null;
    this.port = 0;
    this.logLines = [];
    this.exited = null;
  }

  get uri() {
    return `mongodb://127.0.0.1:${this.port}/?replicaSet=${SET_NAME}`;
  }

  get host() {
    return `127.0.0.1:${this.port}`;
  }

  get pid() {
    return this.child && !this.exited ? this.child.pid : null;
  }

  get directUri() {
    return `mongodb://127.0.0.1:${this.port}/?directConnection=true`;
  }

  recentLog() {
    return this.logLines.join('\n');
  }

  // Starts the server and initiates the set; retries on a fresh port when the chosen one was
  // taken in between (the server then exits before listening).
  async start() {
    let lastError = null;
    for (let attempt = 0; attempt < START_ATTEMPTS_MAX; attempt++) {
      this.port = await freePort();
      this.spawnChild();
      try {
        await this.waitListening();
        if (this.initiateAlone) await this.initiate();
        return this;
      } catch (err) {
        lastError = err;
        const diedBeforeListening = this.exited !== null;
        await this.stop();
        if (!diedBeforeListening) break;
      }
    }
    throw new Error(`mongosim did not start: ${lastError && lastError.message}\n` +
        `--- last mongosim output ---\n${this.recentLog()}`);
  }

  spawnChild() {
    installExitHook();
    const args = ['--port', String(this.port), '--bind_ip', '127.0.0.1', '--replSet', SET_NAME,
      '--setParameter', 'ttlMonitorSleepSecs=1', ...this.extraArgs];
    this.exited = null;
    this.logLines = [];
    const child = spawn(this.binaryPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    live.add(child);
    const keep = (chunk) => {
      for (const line of chunk.toString().split('\n')) {
        if (line === '') continue;
        this.logLines.push(line);
        if (this.logLines.length > LOG_LINES_MAX) this.logLines.shift();
      }
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('exit', (code, signal) => {
      live.delete(child);
      this.exited = { code, signal };
    });
    child.on('error', (err) => {
      live.delete(child);
      this.exited = { code: null, signal: null, error: err };
    });
  }

  async waitListening() {
    const deadline = Date.now() + LISTEN_DEADLINE_MS;
    while (Date.now() < deadline) {
      if (this.exited) {
        throw new Error(`mongosim exited before listening (${JSON.stringify(this.exited)})`);
      }
      if (await canConnect(this.port)) return;
      await sleep(POLL_INTERVAL_MS);
    }
    throw new Error(`mongosim did not listen on port ${this.port} within ${LISTEN_DEADLINE_MS} ms`);
  }

  // replSetInitiate over a direct connection, then wait for hello to say writable primary.
  async initiate() {
    const { MongoClient } = require('mongodb');
    const client = new MongoClient(this.directUri, { serverSelectionTimeoutMS: 5000 });
    try {
      const admin = client.db('admin');
      const config = { _id: SET_NAME, members: [{ _id: 0, host: `127.0.0.1:${this.port}` }] };
      await admin.command({ replSetInitiate: config });
      const deadline = Date.now() + PRIMARY_DEADLINE_MS;
      while (Date.now() < deadline) {
        const hello = await admin.command({ hello: 1 });
        if (hello.isWritablePrimary && hello.setName === SET_NAME) return;
        await sleep(POLL_INTERVAL_MS);
      }
      throw new Error(`mongosim did not become primary of ${SET_NAME} within ` +
          `${PRIMARY_DEADLINE_MS} ms`);
    } finally {
      await client.close();
    }
  }

  async stop() {
    const child = this.child;
    if (!child || this.exited) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    let timer = null;
    const grace = new Promise((resolve) => {
      timer = setTimeout(() => resolve('timeout'), STOP_GRACE_MS);
    });
    const first = await Promise.race([gone, grace]);
    clearTimeout(timer);
    if (first === 'timeout' && !this.exited) {
      child.kill('SIGKILL');
      await gone;
    }
  }
}

module.exports = { MongosimProcess, SET_NAME };
