'use strict';
// Starts a mongosim binary on a free loopback port as a one-member replica set (rs0), waits until
// it is a writable primary (or, with initiate: false, only until it listens, for a larger set that
// lib/mongosim_replica_set.js initiates), and stops it again: SIGTERM, then SIGKILL when it has not exited
// within stop_grace_ms. Every started server is also killed when this Node process exits, so a
// failing or interrupted run never leaves one behind.
//
// Ready means the child's own "Waiting for connections" log line (id 23016) naming our port, not a
// connection that succeeds: the port is picked free and handed over by number, so another
// process can take it first; the child then exits (and start() retries on a fresh port), but a
// connect could have reached that other process's listener.
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
const LINE_BYTES_MAX = 1 << 20;  // a longer unfinished line is kept as it is
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

// The port of a "Waiting for connections" line (log id 23016), or null for any other line.
function listeningPort(line) {
  if (!line.includes('23016')) return null;  // most lines: no JSON parse
  try {
    const entry = JSON.parse(line);
    if (entry === null || entry.id !== 23016 || !entry.attr) return null;
    return Number.isInteger(entry.attr.port) ? entry.attr.port : null;
  } catch (_) {
    return null;
  }
}

class MongosimProcess {
  // pickPort: how a start attempt chooses its port; listenDeadlineMs: how long an attempt waits
  // for the ready line (tests' hooks; defaults: a free port, LISTEN_DEADLINE_MS).
  constructor(binaryPath, {
    extraArgs = [], initiate = true, pickPort = freePort, listenDeadlineMs = LISTEN_DEADLINE_MS,
  } = {}) {
    if (!binaryPath || !fs.existsSync(binaryPath)) {
      throw new Error(`mongosim binary not found at "${binaryPath}"`);
    }
    this.binaryPath = binaryPath;
    this.extraArgs = extraArgs;
    this.initiateAlone = initiate;
    this.pickPort = pickPort;
    this.listenDeadlineMs = listenDeadlineMs;
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
      this.port = await this.pickPort();
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
    this.listening = false;
    this.logLines = [];
    const child = spawn(this.binaryPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    live.add(child);
    const keep = (line) => {
      if (line === '') return;
      if (listeningPort(line) === this.port) this.listening = true;
      this.logLines.push(line);
      if (this.logLines.length > LOG_LINES_MAX) this.logLines.shift();
    };
    // A chunk ends anywhere, also inside a line: the unfinished tail waits for the next chunk.
    const lineReader = () => {
      let tail = '';
      return (chunk) => {
        const parts = (tail + chunk).split('\n');
        tail = parts.pop();
        if (tail.length > LINE_BYTES_MAX) {
          keep(tail);
          tail = '';
        }
        parts.forEach(keep);
      };
    };
    // Decoded as a stream, so a character split across two reads stays whole.
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', lineReader());
    child.stderr.on('data', lineReader());
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
    const deadline = Date.now() + this.listenDeadlineMs;
    while (Date.now() < deadline) {
      if (this.exited) {
        throw new Error(`mongosim exited before listening (${JSON.stringify(this.exited)})`);
      }
      if (this.listening) return;
      await sleep(POLL_INTERVAL_MS);
    }
    throw new Error(
        `mongosim did not listen on port ${this.port} within ${this.listenDeadlineMs} ms`);
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
