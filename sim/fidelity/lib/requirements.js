'use strict';
// runOnRequirements evaluation for the Unified Test Format: a list of requirement objects is met
// when any one of them is met, and one object is met when every field in it is. The server's
// facts (version, topology, parameters) are gathered once per run by describeServer(); the
// evaluation itself is pure so it can be tested without a server.
//
// A requirement this runner cannot judge (an unknown field) is reported as unmet with its name,
// so the test is skipped with a reason rather than run on a guess.

const KNOWN_FIELDS = new Set([
  'minServerVersion', 'maxServerVersion', 'topologies', 'serverless', 'auth', 'csfle',
  'serverParameters', 'authMechanism',
]);

// "7.0.2" -> [7, 0, 2]; missing parts count as 0 (so "4.1" equals "4.1.0").
function parseVersion(text) {
  if (typeof text !== 'string' || !/^\d+(\.\d+){0,2}$/.test(text)) {
    throw new Error(`bad server version string "${text}" (want N, N.N or N.N.N)`);
  }
  const parts = text.split('.').map(Number);
  while (parts.length < 3) parts.push(0);
  return parts;
}

function compareVersions(a, b) {
  for (let i = 0; i < 3; i++) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

function sameValue(want, have) {
  if (typeof want === 'number' || typeof have === 'number') return Number(want) === Number(have);
  return JSON.stringify(want) === JSON.stringify(have);
}

// Returns null when `req` is met by `server`, else a reason naming the requirement.
function unmetReason(req, server) {
  for (const key of Object.keys(req)) {
    if (!KNOWN_FIELDS.has(key)) return `unsupported requirement "${key}"`;
  }
  const version = server.versionArray;
  if (req.minServerVersion !== undefined &&
      compareVersions(version, parseVersion(req.minServerVersion)) < 0) {
    return `server ${version.join('.')} < minServerVersion ${req.minServerVersion}`;
  }
  if (req.maxServerVersion !== undefined &&
      compareVersions(version, parseVersion(req.maxServerVersion)) > 0) {
    return `server ${version.join('.')} > maxServerVersion ${req.maxServerVersion}`;
  }
  if (req.topologies !== undefined && !topologyMatches(req.topologies, server.topology)) {
    return `topology ${server.topology} not in [${req.topologies.join(', ')}]`;
  }
  if (req.serverless === 'require' && !server.serverless) return 'requires serverless';
  if (req.serverless === 'forbid' && server.serverless) return 'forbids serverless';
  if (req.auth === true && !server.auth) return 'requires authentication';
  if (req.auth === false && server.auth) return 'requires no authentication';
  if (req.csfle === true) return 'requires client-side field level encryption';
  if (req.authMechanism !== undefined) return `requires auth mechanism ${req.authMechanism}`;
  for (const [name, want] of Object.entries(req.serverParameters || {})) {
    const params = server.parameters || {};
    if (!(name in params)) return `server parameter ${name} unknown to the server`;
    if (!sameValue(want, params[name])) {
      return `server parameter ${name} is ${JSON.stringify(params[name])}, ` +
          `requires ${JSON.stringify(want)}`;
    }
  }
  return null;
}

function topologyMatches(wanted, have) {
  if (wanted.includes(have)) return true;
  // A sharded cluster whose shards are replica sets also satisfies "sharded".
  return have === 'sharded-replicaset' && wanted.includes('sharded');
}

// Returns null when `reqs` (a runOnRequirements array, possibly undefined) is met, else the
// reasons each alternative failed, joined.
function requirementsUnmet(reqs, server) {
  if (reqs === undefined) return null;
  if (!Array.isArray(reqs) || reqs.length === 0) {
    return 'runOnRequirements must be a non-empty array';
  }
  const reasons = [];
  for (const req of reqs) {
    const reason = unmetReason(req, server);
    if (reason === null) return null;
    reasons.push(reason);
  }
  return reasons.join('; or ');
}

function parameterNames(reqLists) {
  const names = new Set();
  for (const reqs of reqLists) {
    for (const req of reqs || []) {
      for (const name of Object.keys(req.serverParameters || {})) names.add(name);
    }
  }
  return [...names];
}

// Gathers the facts requirements are judged against, using the runner's internal client.
// `parameterNamesWanted` lists the server parameters any file asks about.
async function describeServer(client, parameterNamesWanted) {
  const admin = client.db('admin');
  const build = await admin.command({ buildInfo: 1 });
  const hello = await admin.command({ hello: 1 });
  let topology = 'single';
  if (hello.msg === 'isdbgrid') topology = 'sharded';
  else if (hello.setName !== undefined) topology = 'replicaset';
  const versionArray = Array.isArray(build.versionArray) ?
      build.versionArray.slice(0, 3).map(Number) :
      parseVersion(String(build.version).split('-')[0]);
  const parameters = {};
  for (const name of parameterNamesWanted) {
    try {
      const reply = await admin.command({ getParameter: 1, [name]: 1 });
      if (name in reply) parameters[name] = reply[name];
    } catch (_) {
      // An unknown parameter is simply absent; the requirement then reports it by name.
    }
  }
  return { versionArray, version: build.version, topology, serverless: false, auth: false,
    parameters };
}

module.exports = { requirementsUnmet, describeServer, parseVersion, compareVersions,
  parameterNames };
