'use strict';
// Value matching for the Unified Test Format ("Evaluating Matches" in the format's
// specification): compares an expected value from a spec file with an actual value produced by the
// driver and answers with the first mismatch, or null when they match.
//
// Rules kept here:
// - Root-level documents (an operation's expectResult, each element of a find/aggregate result,
//   a command in commandStartedEvent, a reply in commandSucceededEvent, an error response) may
//   hold extra fields; nested documents may not.
// - Arrays have the same length and match element by element.
// - int, long and double compare by numeric value.
// - Special operators are objects whose only key starts with `$$`.
// Outcome comparison (collection contents) uses `exact`, which allows no extra field anywhere.
//
// Pure functions; no driver calls. Entities are looked up through the `entities` argument, an
// object with get(name) that throws for an unknown name.

const MAX_DEPTH = 100;

// A mismatch names where it happened (a JSONPath-like string), what was wanted and what was found.
function mismatch(path, expected, actual, reason) {
  return { path, expected, actual, reason };
}

function bsonTypeName(v) {
  return v !== null && typeof v === 'object' && typeof v._bsontype === 'string' ? v._bsontype : '';
}

function isNumeric(v) {
  const t = bsonTypeName(v);
  return typeof v === 'number' || typeof v === 'bigint' || t === 'Int32' || t === 'Double' ||
      t === 'Long' || t === 'Decimal128';
}

function numericValue(v) {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  const t = bsonTypeName(v);
  if (t === 'Long') return v.toNumber();
  if (t === 'Decimal128') return Number(v.toString());
  return Number(v.valueOf());
}

function isDocument(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && bsonTypeName(v) === '' &&
      !(v instanceof Date) && !(v instanceof RegExp) && !Buffer.isBuffer(v) &&
      !(v instanceof Uint8Array);
}

function isSpecialOperator(v) {
  if (!isDocument(v)) return false;
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0].startsWith('$$');
}

// The $type alias of a value as the driver hands it to us. Promoted JS numbers have lost their
// BSON type, so an integral number counts as "int" (when it fits) and "long", any number as
// "double"; values the driver builds itself (e.g. a getMore cursor id) keep their wrapper type.
function typeAliases(v) {
  if (v === undefined) return [];
  if (v === null) return ['null'];
  if (typeof v === 'boolean') return ['bool'];
  if (typeof v === 'string') return ['string'];
  if (typeof v === 'number') {
    const out = ['double'];
    if (Number.isInteger(v)) {
      out.push('long');
      if (v >= -2147483648 && v <= 2147483647) out.push('int');
    }
    return out;
  }
  if (typeof v === 'bigint') return ['long'];
  if (Array.isArray(v)) return ['array'];
  if (v instanceof Date) return ['date'];
  if (v instanceof RegExp) return ['regex'];
  const byBsonType = {
    Int32: 'int', Double: 'double', Long: 'long', Decimal128: 'decimal', ObjectId: 'objectId',
    Binary: 'binData', Timestamp: 'timestamp', BSONRegExp: 'regex', Code: 'javascript',
    MinKey: 'minKey', MaxKey: 'maxKey', BSONSymbol: 'symbol', DBRef: 'dbPointer',
  };
  const t = bsonTypeName(v);
  if (t) return byBsonType[t] ? [byBsonType[t]] : [t];
  return ['object'];
}

function matchesType(expectedTypes, actual) {
  const wanted = Array.isArray(expectedTypes) ? expectedTypes : [expectedTypes];
  const have = typeAliases(actual);
  return wanted.some((w) => have.includes(w) || (w === 'number' && isNumeric(actual)));
}

function binaryBytes(v) {
  if (bsonTypeName(v) === 'Binary') return Buffer.from(v.buffer);
  return Buffer.from(v);
}

// Equality of two non-document, non-array values.
function scalarEquals(expected, actual) {
  if (isNumeric(expected) || isNumeric(actual)) {
    return isNumeric(expected) && isNumeric(actual) &&
        numericValue(expected) === numericValue(actual);
  }
  if (expected === null || actual === null || expected === undefined || actual === undefined) {
    return expected === actual;
  }
  if (expected instanceof Date || actual instanceof Date) {
    return expected instanceof Date && actual instanceof Date &&
        expected.getTime() === actual.getTime();
  }
  const te = bsonTypeName(expected);
  const ta = bsonTypeName(actual);
  if (te !== ta) return false;
  if (te === 'ObjectId') return expected.toHexString() === actual.toHexString();
  if (te === 'Binary') {
    return expected.sub_type === actual.sub_type &&
        binaryBytes(expected).equals(binaryBytes(actual));
  }
  if (te !== '') return JSON.stringify(expected) === JSON.stringify(actual);
  return expected === actual;
}

function describe(v) {
  if (v === undefined) return '(unset)';
  try {
    const { EJSON } = require('mongodb').BSON;
    return EJSON.stringify(v, { relaxed: true });
  } catch (_) {
    return String(v);
  }
}

function childPath(path, key) {
  return typeof key === 'number' ? `${path}[${key}]` : `${path}.${key}`;
}

// Options: root (extra fields allowed at this level), arrayOfRoots (each element of a top-level
// array is a root document), exact (no extra field anywhere and no special operators), entities.
function matchValue(expected, actual, options, path = '$', depth = 0) {
  if (depth > MAX_DEPTH) {
    return mismatch(path, '(depth limit)', '(deeper)', `nesting deeper than ${MAX_DEPTH} levels`);
  }
  const opts = options || {};
  if (!opts.exact && isSpecialOperator(expected)) {
    return matchSpecial(expected, actual, opts, path, depth);
  }
  if (Array.isArray(expected)) {
    return matchArray(expected, actual, opts, path, depth);
  }
  if (isDocument(expected)) {
    return matchDocument(expected, actual, opts, path, depth);
  }
  if (!scalarEquals(expected, actual)) {
    return mismatch(path, expected, actual, 'values differ');
  }
  return null;
}

function matchArray(expected, actual, opts, path, depth) {
  if (!Array.isArray(actual)) return mismatch(path, expected, actual, 'expected an array');
  if (expected.length !== actual.length) {
    return mismatch(path, expected, actual,
        `expected ${expected.length} elements, found ${actual.length}`);
  }
  const elementOpts = { ...opts, root: Boolean(opts.arrayOfRoots) && !opts.exact,
    arrayOfRoots: false };
  for (let i = 0; i < expected.length; i++) {
    const m = matchValue(expected[i], actual[i], elementOpts, childPath(path, i), depth + 1);
    if (m) return m;
  }
  return null;
}

// Keys whose value is undefined are treated as absent: driver result objects use that for "unset".
function presentKeys(doc) {
  const keys = new Set();
  for (const k of Object.keys(doc)) {
    if (doc[k] !== undefined) keys.add(k);
  }
  return keys;
}

function hasKey(doc, key) {
  return doc[key] !== undefined;
}

function matchDocument(expected, actual, opts, path, depth) {
  if (!isDocument(actual)) return mismatch(path, expected, actual, 'expected a document');
  const nestedOpts = { ...opts, root: false, arrayOfRoots: false };
  for (const key of Object.keys(expected)) {
    const want = expected[key];
    const where = childPath(path, key);
    if (!opts.exact && isSpecialOperator(want)) {
      const op = Object.keys(want)[0];
      if (op === '$$exists') {
        if (hasKey(actual, key) !== Boolean(want.$$exists)) {
          return mismatch(where, want, actual[key],
              want.$$exists ? 'field must exist' : 'field must not exist');
        }
        continue;
      }
      if (op === '$$unsetOrMatches' && !hasKey(actual, key)) continue;
    }
    if (!hasKey(actual, key)) {
      return mismatch(where, want, undefined, 'field missing');
    }
    const m = matchValue(want, actual[key], nestedOpts, where, depth + 1);
    if (m) return m;
  }
  if (!opts.root || opts.exact) {
    for (const key of presentKeys(actual)) {
      if (!Object.prototype.hasOwnProperty.call(expected, key)) {
        return mismatch(childPath(path, key), undefined, actual[key],
            'extra field in a nested document');
      }
    }
  }
  return null;
}

function matchSpecial(expected, actual, opts, path, depth) {
  const op = Object.keys(expected)[0];
  const arg = expected[op];
  switch (op) {
    case '$$unsetOrMatches':
      if (actual === undefined) return null;
      return matchValue(arg, actual, opts, path, depth + 1);
    case '$$exists':
      if ((actual !== undefined) !== Boolean(arg)) {
        return mismatch(path, expected, actual, arg ? 'value must exist' : 'value must be unset');
      }
      return null;
    case '$$type':
      if (actual === undefined || !matchesType(arg, actual)) {
        return mismatch(path, expected, actual,
            `type ${typeAliases(actual).join('/') || 'unset'} is not ${JSON.stringify(arg)}`);
      }
      return null;
    case '$$matchesEntity':
      return matchValue(requireEntities(opts, path).get(arg), actual, opts, path, depth + 1);
    case '$$sessionLsid':
      return matchValue(requireEntities(opts, path).lsid(arg), actual,
          { ...opts, root: false }, path, depth + 1);
    case '$$matchesHexBytes': {
      if (!/^([0-9a-fA-F]{2})*$/.test(arg)) {
        throw new Error(`${path}: malformed $$matchesHexBytes "${arg}"`);
      }
      const bytes = actual === undefined || actual === null ? null : binaryBytes(actual);
      if (!bytes || bytes.toString('hex') !== arg.toLowerCase()) {
        return mismatch(path, expected, actual, 'bytes differ');
      }
      return null;
    }
    case '$$lte':
      if (!isNumeric(actual) || numericValue(actual) > numericValue(arg)) {
        return mismatch(path, expected, actual, 'value is not <= the bound');
      }
      return null;
    default:
      throw new Error(`${path}: unsupported special operator ${op}`);
  }
}

function requireEntities(opts, path) {
  if (!opts.entities) throw new Error(`${path}: entity operator used without an entity map`);
  return opts.entities;
}

function formatMismatch(m) {
  return `at ${m.path}: ${m.reason}: expected ${describe(m.expected)}, ` +
      `actual ${describe(m.actual)}`;
}

module.exports = { matchValue, formatMismatch, typeAliases, isSpecialOperator, describe };
