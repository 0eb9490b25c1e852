'use strict';
// The entity map of one Unified Test Format test: clients (with their observed command events),
// databases, collections and sessions built from `createEntities`, plus values saved with
// saveResultAsEntity. Names are unique; fetching an unknown name or a name of the wrong kind is an
// error naming both. A map lives for one test and close() releases every driver object in it.

const { MongoClient } = require('mongodb');

// Commands whose events the format says to drop (the Command Monitoring spec's sensitive list,
// plus the runner's own fail point commands).
const SENSITIVE_COMMANDS = new Set([
  'authenticate', 'saslstart', 'saslcontinue', 'getnonce', 'createuser', 'updateuser',
  'copydbgetnonce', 'copydbsaslstart', 'copydb', 'hello', 'ismaster',
]);
const RUNNER_COMMANDS = new Set(['configurefailpoint']);
const EVENTS_PER_CLIENT_MAX = 10000;
const SUPPORTED_ENTITY_KINDS = new Set(['client', 'database', 'collection', 'session']);
const SUPPORTED_CLIENT_FIELDS = new Set([
  'id', 'uriOptions', 'observeEvents', 'ignoreCommandMonitoringEvents', 'useMultipleMongoses',
  'observeSensitiveCommands',
]);
const EVENT_KINDS = {
  commandStartedEvent: 'commandStarted',
  commandSucceededEvent: 'commandSucceeded',
  commandFailedEvent: 'commandFailed',
};

// Returns null when every entity in `createEntities` can be built here, else the first reason not.
function unsupportedEntity(createEntities) {
  for (const spec of createEntities || []) {
    const kind = Object.keys(spec)[0];
    if (!SUPPORTED_ENTITY_KINDS.has(kind)) return `unsupported entity type "${kind}"`;
    if (kind === 'client') {
      for (const field of Object.keys(spec.client)) {
        if (!SUPPORTED_CLIENT_FIELDS.has(field)) return `unsupported client field "${field}"`;
      }
      for (const ev of spec.client.observeEvents || []) {
        if (!(ev in EVENT_KINDS)) return `unsupported observed event "${ev}"`;
      }
    }
  }
  return null;
}

function clientUri(baseUri, uriOptions, reduceHeartbeat) {
  const url = new URL(baseUri);
  const given = new Set(Object.keys(uriOptions || {}).map((k) => k.toLowerCase()));
  for (const [key, value] of Object.entries(uriOptions || {})) {
    url.searchParams.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  if (reduceHeartbeat && !given.has('heartbeatfrequencyms')) {
    url.searchParams.set('heartbeatFrequencyMS', '500');
  }
  if (!given.has('serverselectiontimeoutms')) {
    url.searchParams.set('serverSelectionTimeoutMS', '10000');
  }
  return url.toString();
}

class EntityMap {
  constructor(baseUri) {
    this.baseUri = baseUri;
    this.entries = new Map();
  }

  add(name, kind, value) {
    if (this.entries.has(name)) throw new Error(`entity "${name}" already exists`);
    this.entries.set(name, { kind, value });
  }

  fetch(name, kind) {
    const e = this.entries.get(name);
    if (!e) throw new Error(`entity "${name}" is not defined`);
    if (kind && e.kind !== kind) throw new Error(`entity "${name}" is a ${e.kind}, not a ${kind}`);
    return e.value;
  }

  kindOf(name) {
    const e = this.entries.get(name);
    return e ? e.kind : null;
  }

  has(name) {
    return this.entries.has(name);
  }

  // For $$matchesEntity.
  get(name) {
    return this.fetch(name);
  }

  // For $$sessionLsid.
  lsid(name) {
    return this.fetch(name, 'session').id;
  }

  // Builds every entity in order; `usesFailPoints` lets clients use a short heartbeat so they
  // rediscover the primary quickly after a fail point closes a connection.
  async create(createEntities, usesFailPoints) {
    for (const spec of createEntities || []) {
      const kind = Object.keys(spec)[0];
      const body = spec[kind];
      if (kind === 'client') await this.createClient(body, usesFailPoints);
      else if (kind === 'database') this.createDatabase(body);
      else if (kind === 'collection') this.createCollection(body);
      else if (kind === 'session') this.createSession(body);
      else throw new Error(`unsupported entity type "${kind}"`);
    }
  }

  async createClient(body, usesFailPoints) {
    const uri = clientUri(this.baseUri, body.uriOptions, usesFailPoints);
    const observe = new Set(body.observeEvents || []);
    const ignore = new Set((body.ignoreCommandMonitoringEvents || []).map((c) => c.toLowerCase()));
    const sensitiveObserved = Boolean(body.observeSensitiveCommands);
    const client = new MongoClient(uri, { monitorCommands: observe.size > 0 });
    const state = { client, events: [], listening: true, overflowed: false };
    for (const [name, driverEvent] of Object.entries(EVENT_KINDS)) {
      if (!observe.has(name)) continue;
      client.on(driverEvent, (ev) => {
        const cmd = ev.commandName.toLowerCase();
        if (!state.listening || ignore.has(cmd) || RUNNER_COMMANDS.has(cmd)) return;
        if (!sensitiveObserved && SENSITIVE_COMMANDS.has(cmd)) return;
        if (state.events.length >= EVENTS_PER_CLIENT_MAX) {
          state.overflowed = true;
          return;
        }
        state.events.push({ type: name, event: ev });
      });
    }
    await client.connect();
    this.add(body.id, 'client', state);
  }

  createDatabase(body) {
    const state = this.fetch(body.client, 'client');
    this.add(body.id, 'database', state.client.db(body.databaseName, body.databaseOptions || {}));
  }

  createCollection(body) {
    const db = this.fetch(body.database, 'database');
    const options = body.collectionOptions || {};
    this.add(body.id, 'collection', db.collection(body.collectionName, options));
  }

  createSession(body) {
    const state = this.fetch(body.client, 'client');
    this.add(body.id, 'session', state.client.startSession(body.sessionOptions || {}));
  }

  stopListening() {
    for (const e of this.entries.values()) {
      if (e.kind === 'client') e.value.listening = false;
    }
  }

  async close() {
    for (const e of this.entries.values()) {
      if (e.kind === 'session') await e.value.endSession().catch(() => {});
    }
    for (const e of this.entries.values()) {
      if (e.kind === 'client') await e.value.client.close().catch(() => {});
    }
    this.entries.clear();
  }
}

module.exports = { EntityMap, unsupportedEntity, clientUri };
