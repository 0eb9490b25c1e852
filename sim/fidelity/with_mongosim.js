#!/usr/bin/env node
'use strict';
// Runs one command against a fresh mongosim one-member replica set and stops the server after it:
//
//   node with_mongosim.js --mongosim PATH -- COMMAND [ARG]...
//
// The command finds the server in $MONGOSIM_URI (mongodb://127.0.0.1:PORT/?replicaSet=rs0). Its
// exit status is passed through; a server that does not start exits 1 with its last output. The
// command is given at most COMMAND_DEADLINE_MS, then killed.

const path = require('node:path');
const { spawn } = require('node:child_process');

const COMMAND_DEADLINE_MS = 120000;

function usage(message) {
  console.error(`with_mongosim: ${message}`);
  console.error('usage: with_mongosim.js --mongosim PATH -- COMMAND [ARG]...');
  process.exit(1);
}

function runChild(argv, uri) {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: 'inherit',
      env: { ...process.env, MONGOSIM_URI: uri } });
    const timer = setTimeout(() => {
      console.error(`with_mongosim: ${argv[0]} did not finish within ${COMMAND_DEADLINE_MS} ms`);
      child.kill('SIGKILL');
    }, COMMAND_DEADLINE_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      console.error(`with_mongosim: cannot run ${argv[0]}: ${err.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(signal ? 1 : code);
    });
  });
}

async function main() {
  const args = process.argv.slice(2);
  const sep = args.indexOf('--');
  if (sep < 0 || sep === args.length - 1) usage('missing -- COMMAND');
  if (args[0] !== '--mongosim' || sep !== 2) usage('expected --mongosim PATH before --');
  const { MongosimProcess } = require('./lib/mongosim_process');
  const server = new MongosimProcess(path.resolve(args[1]));
  await server.start();
  try {
    return await runChild(args.slice(sep + 1), server.uri);
  } finally {
    await server.stop();
  }
}

main().then((code) => process.exit(code), (err) => {
  console.error(`with_mongosim: ${err.message}`);
  process.exit(1);
});
