'use strict';
// MongosimProcess's start: ready is the child's own "Waiting for connections" line for its port.
// The child here is fake_listener.js (mongosim's port option, ready line and exit when the port
// is taken), so the test can hand the first attempt a port another process already listens on.
// What the model omits: a real mongosim and its replica-set initiation (initiate: false; the
// fidelity checks run the real binary).
const test = require('node:test');
const assert = require('node:assert');
const net = require('node:net');
const path = require('node:path');
const { MongosimProcess } = require('../lib/mongosim_process');

const FAKE = path.join(__dirname, 'fake_listener.js');

function listen(port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.accepted = 0;
    server.on('connection', (sock) => { server.accepted++; sock.destroy(); });
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

// The ports a start attempt is handed: `first`, then free ones.
function portsStartingWith(first) {
  let handed = false;
  return async () => {
    if (!handed) {
      handed = true;
      return first;
    }
    const s = await listen(0);
    const { port } = s.address();
    await new Promise((resolve) => s.close(resolve));
    return port;
  };
}

test('a port another process listens on is never taken for ours: the start moves on', async () => {
  const other = await listen(0);
  const taken = other.address().port;
  const m = new MongosimProcess(FAKE, { initiate: false, pickPort: portsStartingWith(taken) });
  try {
    await m.start();
    assert.notStrictEqual(m.port, taken, 'started "on" the port another process holds');
    assert.strictEqual(m.exited, null, 'the child it reports ready has exited');
    assert.strictEqual(other.accepted, 0, 'connected to the other process while waiting');
    assert.match(m.recentLog(), new RegExp(`"port":${m.port}`));
  } finally {
    await m.stop();
    await new Promise((resolve) => other.close(resolve));
  }
});

test('a ready line split across two reads still counts', async () => {
  process.env.FAKE_SPLIT_MS = '200';
  const m = new MongosimProcess(FAKE, { initiate: false });
  try {
    await m.start();
    assert.strictEqual(m.listening, true);
    assert.strictEqual(m.exited, null);
  } finally {
    delete process.env.FAKE_SPLIT_MS;
    await m.stop();
  }
});

test('a child that exits before its ready line is not ready', async () => {
  const other = await listen(0);
  const taken = other.address().port;
  // Every attempt is handed the taken port: each child exits, and start() gives up.
  const m = new MongosimProcess(FAKE, { initiate: false, pickPort: async () => taken });
  try {
    await assert.rejects(m.start(), /exited before listening/);
    assert.strictEqual(other.accepted, 0);
  } finally {
    await new Promise((resolve) => other.close(resolve));
  }
});

test('a line naming id 23016 and the port elsewhere is not the ready line', async () => {
  process.env.FAKE_DECOY = '1';
  const m = new MongosimProcess(FAKE, { initiate: false, listenDeadlineMs: 1000 });
  try {
    await assert.rejects(m.start(), /did not listen/);
    assert.strictEqual(m.listening, false);
  } finally {
    delete process.env.FAKE_DECOY;
    await m.stop();
  }
});
