#!/usr/bin/env node
'use strict';
// A stand-in for the mongosim binary in mongosim_process.test.js: it takes mongosim's --port,
// listens there on 127.0.0.1 and logs mongosim's "Waiting for connections" line (id 23016), or
// exits 48 as mongosim does when the port is taken. FAKE_SPLIT_MS writes that line in two
// pieces that far apart (a pipe read ends inside a line). FAKE_DECOY=1: it first logs another
// line that names id 23016 and the port inside its attributes, and never listens. It runs until
// SIGTERM.
const net = require('node:net');

const port = Number(process.argv[process.argv.indexOf('--port') + 1]);
if (process.env.FAKE_DECOY === '1') {
  process.stdout.write(JSON.stringify({ t: { $date: new Date().toISOString() }, s: 'I',
    c: 'COMMAND', id: 51803, ctx: 'conn1', msg: 'Slow query',
    attr: { port, command: { id: 23016 } } }) + '\n');
  setInterval(() => {}, 1000);
  process.on('SIGTERM', () => process.exit(0));
  return;
}
const splitMs = Number(process.env.FAKE_SPLIT_MS || 0);
const server = net.createServer((sock) => sock.destroy());
server.on('error', (err) => {
  process.stderr.write(`cannot listen on 127.0.0.1:${port}: ${err.message}\n`);
  process.exit(48);
});
server.listen(port, '127.0.0.1', () => {
  const line = JSON.stringify({ t: { $date: new Date().toISOString() }, s: 'I', c: 'NETWORK',
    id: 23016, ctx: 'listener', msg: 'Waiting for connections', attr: { port } }) + '\n';
  if (splitMs <= 0) {
    process.stdout.write(line);
    return;
  }
  const half = Math.floor(line.length / 2);
  process.stdout.write(line.slice(0, half));
  setTimeout(() => process.stdout.write(line.slice(half)), splitMs);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
