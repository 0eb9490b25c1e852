#!/usr/bin/env node
'use strict';
// Runs one command against a fresh mongosim replica set (rs0) and stops it after the command:
//
//   node with_mongosim.js --mongosim PATH [--members N] -- COMMAND [ARG]...
//
// One member by default; --members N (2..7) starts N members with short election timers. The
// command finds the set in $MONGOSIM_URI (mongodb://HOST,.../?replicaSet=rs0), the members in
// $MONGOSIM_HOSTS and their process ids in $MONGOSIM_PIDS (comma-separated, same order; for
// pausing a member with SIGSTOP, which the command must undo with SIGCONT). Its exit status is
// passed through; a server that does not start exits 1 with its last output. The
// command is given at most COMMAND_DEADLINE_MS, then killed.

const path = require('node:path');
const { spawn } = require('node:child_process');

const COMMAND_DEADLINE_MS = 120000;

function usage(message) {
  console.error(`with_mongosim: ${message}`);
  console.error('usage: with_mongosim.js --mongosim PATH [--members N] -- COMMAND [ARG]...');
  process.exit(1);
}

function runChild(argv, env) {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: 'inherit',
      env: { ...process.env, ...env } });
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
  if (args[0] !== '--mongosim' || (sep !== 2 && sep !== 4)) {
    usage('expected --mongosim PATH [--members N] before --');
  }
  let members = 1;
  if (sep === 4) {
    members = Number(args[3]);
    if (args[2] !== '--members' || !Number.isInteger(members) || members < 1 || members > 7) {
      usage(`--members expects an integer in [1, 7], got "${args[3]}"`);
    }
  }
  const binary = path.resolve(args[1]);
  let servers;
  if (members === 1) {
    const { MongosimProcess } = require('./lib/mongosim_process');
    servers = { members: [await new MongosimProcess(binary).start()] };
    servers.uri = servers.members[0].uri;
    servers.stop = () => servers.members[0].stop();
  } else {
    const { MongosimReplicaSet } = require('./lib/mongosim_replica_set');
    servers = await new MongosimReplicaSet(binary, members).start();
  }
  try {
    return await runChild(args.slice(sep + 1), {
      MONGOSIM_URI: servers.uri,
      MONGOSIM_HOSTS: servers.members.map((m) => m.host).join(','),
      MONGOSIM_PIDS: servers.members.map((m) => m.pid).join(','),
    });
  } finally {
    await servers.stop();
  }
}

main().then((code) => process.exit(code), (err) => {
  console.error(`with_mongosim: ${err.message}`);
  process.exit(1);
});
