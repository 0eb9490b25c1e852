'use strict';
// The matcher is the runner's judge: each rule is shown to accept what it must and to reject what
// it must, so a broken matcher cannot turn failing spec tests into passes.
const test = require('node:test');
const assert = require('node:assert');
const { Long, Int32, Double, ObjectId } = require('mongodb');
const { matchValue, formatMismatch } = require('../lib/match');

const root = { root: true };
const ok = (e, a, o = root) => assert.strictEqual(matchValue(e, a, o), null,
    `expected match of ${JSON.stringify(e)}`);
const bad = (e, a, o = root) => {
  const m = matchValue(e, a, o);
  assert.notStrictEqual(m, null, `expected mismatch of ${JSON.stringify(e)}`);
  return m;
};

test('root documents allow extra fields, nested ones do not', () => {
  ok({ x: 1 }, { x: 1, y: 2 });
  bad({ x: 1, y: 1 }, { x: 1 });
  ok({ x: { y: 1 } }, { x: { y: 1 } });
  const m = bad({ x: { y: 1 } }, { x: { y: 1, z: 1 } });
  assert.strictEqual(m.path, '$.x.z');
});

test('arrays need the same length; find results are arrays of root documents', () => {
  bad([1, 2, 3], [1, 2, 3, 4]);
  bad([{ x: 1 }], [{ x: 1, y: 1 }], { root: true });
  ok([{ x: 1 }], [{ x: 1, y: 1 }], { root: true, arrayOfRoots: true });
  bad([{ x: { a: 1 } }], [{ x: { a: 1, b: 2 } }], { root: true, arrayOfRoots: true });
});

test('numbers compare by value across int, long and double', () => {
  ok({ n: 1 }, { n: Long.fromNumber(1) });
  ok({ n: new Int32(2) }, { n: new Double(2) });
  bad({ n: 1 }, { n: Long.fromNumber(2) });
  bad({ n: 1 }, { n: '1' });
  bad({ n: true }, { n: 1 });
});

test('key order does not matter; null is not unset', () => {
  ok({ x: 1, y: 2 }, { y: 2, x: 1 });
  bad({ x: null }, {});
  ok(null, null);
  bad(null, { _id: 1 });
});

test('$$unsetOrMatches', () => {
  ok({ insertedId: { $$unsetOrMatches: 2 } }, { insertedId: 2 });
  ok({ insertedId: { $$unsetOrMatches: 2 } }, {});
  ok({ insertedId: { $$unsetOrMatches: 2 } }, { insertedId: undefined });
  bad({ insertedId: { $$unsetOrMatches: 2 } }, { insertedId: 3 });
  ok({ $$unsetOrMatches: { a: 1 } }, undefined);
  bad({ $$unsetOrMatches: { a: 1 } }, { a: 2 });
});

test('$$exists', () => {
  ok({ txnNumber: { $$exists: true } }, { txnNumber: Long.fromNumber(1) });
  ok({ txnNumber: { $$exists: true } }, { txnNumber: null });
  bad({ txnNumber: { $$exists: true } }, {});
  ok({ writeConcern: { $$exists: false } }, { a: 1 });
  bad({ writeConcern: { $$exists: false } }, { writeConcern: { w: 1 } });
});

test('$$type', () => {
  ok({ getMore: { $$type: ['int', 'long'] } }, { getMore: Long.fromNumber(12345) });
  ok({ a: { $$type: 'array' } }, { a: [] });
  bad({ a: { $$type: 'array' } }, { a: {} });
  bad({ a: { $$type: 'array' } }, {});
  ok({ a: { $$type: 'objectId' } }, { a: new ObjectId() });
  bad({ a: { $$type: 'string' } }, { a: 1 });
  bad({ a: { $$type: 'int' } }, { a: 1.5 });
  bad({ a: { $$type: 'long' } }, { a: new Int32(1) });
});

test('$$matchesEntity and unknown operators', () => {
  const entities = { get: (n) => { if (n !== 'id0') throw new Error(`no ${n}`); return 7; } };
  ok({ _id: { $$matchesEntity: 'id0' } }, { _id: 7 }, { root: true, entities });
  bad({ _id: { $$matchesEntity: 'id0' } }, { _id: 8 }, { root: true, entities });
  assert.throws(() => matchValue({ _id: { $$matchesEntity: 'nope' } }, { _id: 7 },
      { root: true, entities }), /no nope/);
  assert.throws(() => matchValue({ a: { $$bogus: 1 } }, { a: 1 }, root), /\$\$bogus/);
});

test('exact mode (outcome) allows no extra field and takes $$ keys literally', () => {
  ok([{ _id: 1, x: 11 }], [{ _id: 1, x: 11 }], { exact: true });
  bad([{ _id: 1 }], [{ _id: 1, x: 11 }], { exact: true });
  bad([{ _id: 1 }], [], { exact: true });
});

test('a mismatch names path, expected and actual', () => {
  const m = bad({ a: [{ b: 1 }] }, { a: [{ b: 2 }] });
  assert.strictEqual(m.path, '$.a[0].b');
  const text = formatMismatch(m);
  assert.match(text, /\$\.a\[0\]\.b/);
  assert.match(text, /expected 1, actual 2/);
});
