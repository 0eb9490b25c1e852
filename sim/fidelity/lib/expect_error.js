'use strict';
// The expectError assertions of the Unified Test Format checked against an error thrown by the
// Node.js driver: isError, isClientError, errorContains, errorCode, errorCodeName,
// errorLabelsContain, errorLabelsOmit, errorResponse and expectResult. Returns null when every
// assertion holds, else a mismatch in the shape match.js produces.

const { MongoServerError } = require('mongodb');
const { matchValue } = require('./match');
const { bulkResult } = require('./operations');

const KNOWN_ASSERTIONS = new Set(['isError', 'isClientError', 'errorContains', 'errorCode',
  'errorCodeName', 'errorLabelsContain', 'errorLabelsOmit', 'errorResponse', 'expectResult']);

// A server error is one the driver built from a server reply (MongoServerError and its
// subclasses: write concern and bulk write errors). Validation and network errors are client
// errors, as the format counts them.
function isServerError(err) {
  return err instanceof MongoServerError;
}

function hasLabel(err, label) {
  if (typeof err.hasErrorLabel === 'function') return err.hasErrorLabel(label);
  return Array.isArray(err.errorLabels) && err.errorLabels.includes(label);
}

function unsupportedErrorAssertion(expectError) {
  for (const key of Object.keys(expectError || {})) {
    if (!KNOWN_ASSERTIONS.has(key)) return `unsupported expectError assertion "${key}"`;
  }
  return null;
}

function fail(path, expected, actual, reason) {
  return { path, expected, actual, reason };
}

function checkError(expectError, err, entities) {
  if (!err) return fail('expectError', expectError, undefined, 'operation succeeded');
  const e = expectError;
  const serverError = isServerError(err);
  if (e.isClientError !== undefined && e.isClientError === serverError) {
    return fail('expectError.isClientError', e.isClientError, !serverError,
        `error is a ${serverError ? 'server' : 'client'} error: ${err.message}`);
  }
  if (e.errorContains !== undefined &&
      !String(err.message).toLowerCase().includes(e.errorContains.toLowerCase())) {
    return fail('expectError.errorContains', e.errorContains, err.message, 'message differs');
  }
  if (e.errorCode !== undefined && (!serverError || err.code !== e.errorCode)) {
    return fail('expectError.errorCode', e.errorCode, err.code, `error: ${err.message}`);
  }
  if (e.errorCodeName !== undefined && (!serverError || err.codeName !== e.errorCodeName)) {
    return fail('expectError.errorCodeName', e.errorCodeName, err.codeName,
        `error: ${err.message}`);
  }
  for (const label of e.errorLabelsContain || []) {
    if (!hasLabel(err, label)) {
      return fail('expectError.errorLabelsContain', label, err.errorLabels || [],
          'label missing');
    }
  }
  for (const label of e.errorLabelsOmit || []) {
    if (hasLabel(err, label)) {
      return fail('expectError.errorLabelsOmit', label, err.errorLabels || [], 'label present');
    }
  }
  if (e.errorResponse !== undefined) {
    const m = matchValue(e.errorResponse, err.errorResponse, { root: true, entities },
        'expectError.errorResponse');
    if (m) return m;
  }
  if (e.expectResult !== undefined) {
    const m = matchValue(e.expectResult, partialResult(err), { root: true, entities },
        'expectError.expectResult');
    if (m) return m;
  }
  return null;
}

// The partial result of a failed bulk write, as the driver attaches it.
function partialResult(err) {
  return err.result ? bulkResult(err.result) : undefined;
}

module.exports = { checkError, unsupportedErrorAssertion, isServerError };
