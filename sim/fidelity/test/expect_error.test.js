'use strict';
// expectError is checked against driver error objects built here, as the driver builds them from
// a server reply or raises them itself.
const test = require('node:test');
const assert = require('node:assert');
const { MongoServerError, MongoInvalidArgumentError, MongoNetworkError } = require('mongodb');
const { checkError } = require('../lib/expect_error');

const serverError = (doc) => new MongoServerError({ ok: 0, errmsg: 'boom happened', ...doc });

test('no error at all fails every expectError', () => {
  assert.notStrictEqual(checkError({ isError: true }, null), null);
});

test('client and server errors are told apart', () => {
  const client = new MongoInvalidArgumentError('Update document requires atomic operators');
  assert.strictEqual(checkError({ isClientError: true }, client), null);
  assert.strictEqual(checkError({ isClientError: true }, new MongoNetworkError('closed')), null);
  assert.notStrictEqual(checkError({ isClientError: true }, serverError({ code: 8 })), null);
  assert.strictEqual(checkError({ isClientError: false }, serverError({ code: 8 })), null);
  assert.notStrictEqual(checkError({ isClientError: false }, client), null);
});

test('code, code name, message and labels', () => {
  const err = serverError({ code: 11000, codeName: 'DuplicateKey',
    errorLabels: ['RetryableWriteError'] });
  assert.strictEqual(checkError({ errorCode: 11000, errorCodeName: 'DuplicateKey',
    errorContains: 'BOOM', errorLabelsContain: ['RetryableWriteError'],
    errorLabelsOmit: ['TransientTransactionError'] }, err), null);
  assert.match(checkError({ errorCode: 8 }, err).path, /errorCode/);
  assert.match(checkError({ errorCodeName: 'Other' }, err).path, /errorCodeName/);
  assert.match(checkError({ errorContains: 'nothing like it' }, err).path, /errorContains/);
  assert.match(checkError({ errorLabelsContain: ['NoWritesPerformed'] }, err).path,
      /errorLabelsContain/);
  assert.match(checkError({ errorLabelsOmit: ['RetryableWriteError'] }, err).path,
      /errorLabelsOmit/);
});

test('errorResponse is matched as a root document', () => {
  const err = serverError({ code: 8, codeName: 'UnknownError' });
  assert.strictEqual(checkError({ errorResponse: { code: 8 } }, err), null);
  assert.notStrictEqual(checkError({ errorResponse: { code: 9 } }, err), null);
});
