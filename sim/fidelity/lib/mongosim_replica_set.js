'use strict';
// A replica set (rs0) of N mongosim processes on loopback ports, for the drivers' failover checks:
// started, initiated with short protocol timers so elections take about a second, waited for until
// exactly one member is a writable primary, and stopped again (every member, also when paused).
//
//   const set = await new MongosimReplicaSet(binary, 3).start();
//   set.uri; set.hosts; await set.primaryIndex(); set.pause(i); set.resume(i); set.kill(i);
//   await set.stop();
//
// One owner; pause/resume send SIGSTOP/SIGCONT, so a paused member keeps its sockets but answers
// nothing, like a stalled process; kill sends SIGKILL, a crash that closes its sockets.

const { MongosimProcess, SET_NAME } = require('./mongosim_process');

const MEMBERS_MAX = 7;
const ELECTION_TIMEOUT_MS = 1000;
const HEARTBEAT_INTERVAL_MS = 200;
const PRIMARY_DEADLINE_MS = 30000;
const POLL_INTERVAL_MS = 50;
const COMMAND_TIMEOUT_MS = 2000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class MongosimReplicaSet {
  constructor(binaryPath, memberCount) {
    if (!Number.isInteger(memberCount) || memberCount < 2 || memberCount > MEMBERS_MAX) {
      throw new Error(`member count must be an integer in [2, ${MEMBERS_MAX}], got ${memberCount}`);
    }
    this.members = [];
    for (let i = 0; i < memberCount; i++) {
      this.members.push(new MongosimProcess(binaryPath, { initiate: false }));
    }
    this.paused = new Set();
    this.killed = new Set();
  }

  get hosts() {
    return this.members.map((m) => m.host);
  }

  get uri() {
    return `mongodb://${this.hosts.join(',')}/?replicaSet=${SET_NAME}`;
  }

  async start() {
    try {
      for (const m of this.members) await m.start();
      await this.command(0, { replSetInitiate: this.config() });
      if (await this.waitForPrimary() < 0) {
        throw new Error(`no primary within ${PRIMARY_DEADLINE_MS} ms`);
      }
      return this;
    } catch (err) {
      const logs = this.members.map((m, i) => `--- member ${i}\n${m.recentLog()}`).join('\n');
      await this.stop();
      throw new Error(`replica set did not start: ${err.message}\n${logs}`);
    }
  }

  config() {
    return {
      _id: SET_NAME,
      members: this.members.map((m, i) => ({ _id: i, host: m.host })),
      settings: { electionTimeoutMillis: ELECTION_TIMEOUT_MS,
        heartbeatIntervalMillis: HEARTBEAT_INTERVAL_MS },
    };
  }

  // One admin command on a direct connection to member i.
  async command(i, cmd) {
    const { MongoClient } = require('mongodb');
    const client = new MongoClient(this.members[i].directUri,
        { serverSelectionTimeoutMS: COMMAND_TIMEOUT_MS, socketTimeoutMS: 60000 });
    try {
      return await client.db('admin').command(cmd);
    } finally {
      await client.close();
    }
  }

  // The member that alone says isWritablePrimary (and that every other answering member names as
  // primary), or -1.
  async primaryIndex() {
    const silent = (i) => this.paused.has(i) || this.killed.has(i);
    const hellos = await Promise.all(this.members.map((m, i) => (silent(i) ? null
      : this.command(i, { hello: 1 }).catch(() => null))));
    const writable = hellos.map((h, i) => (h && h.isWritablePrimary ? i : -1)).filter((i) => i >= 0);
    if (writable.length !== 1) return -1;
    const primaryHost = this.members[writable[0]].host;
    const agree = hellos.every((h, i) => silent(i) || (h && h.primary === primaryHost));
    return agree ? writable[0] : -1;
  }

  // Polls for a primary other than notThis; returns it, or -1 at the deadline.
  async waitForPrimary(notThis = -1) {
    const deadline = Date.now() + PRIMARY_DEADLINE_MS;
    while (Date.now() < deadline) {
      const p = await this.primaryIndex();
      if (p >= 0 && p !== notThis) return p;
      await sleep(POLL_INTERVAL_MS);
    }
    return -1;
  }

  pause(i) {
    process.kill(this.members[i].pid, 'SIGSTOP');
    this.paused.add(i);
  }

  resume(i) {
    process.kill(this.members[i].pid, 'SIGCONT');
    this.paused.delete(i);
  }

  kill(i) {
    process.kill(this.members[i].pid, 'SIGKILL');
    this.paused.delete(i);
    this.killed.add(i);
  }

  async stop() {
    for (const i of [...this.paused]) {
      try { this.resume(i); } catch (_) { /* already gone */ }
    }
    await Promise.all(this.members.map((m) => m.stop()));
  }
}

module.exports = { MongosimReplicaSet };
