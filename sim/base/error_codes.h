// MongoDB server error codes mongosim uses, with the codeName strings drivers see.
// Source: the server's error_codes.yml (see docs/mongodb-behaviour.md, Error codes).
#pragma once

#include <cstdint>
#include <string_view>

namespace mongosim {

namespace code {
inline constexpr int32_t kInternalError = 1;
inline constexpr int32_t kBadValue = 2;
inline constexpr int32_t kNoSuchKey = 4;
inline constexpr int32_t kHostUnreachable = 6;
inline constexpr int32_t kHostNotFound = 7;
inline constexpr int32_t kUnknownError = 8;
inline constexpr int32_t kFailedToParse = 9;
inline constexpr int32_t kUserNotFound = 11;
inline constexpr int32_t kUnauthorized = 13;
inline constexpr int32_t kTypeMismatch = 14;
inline constexpr int32_t kOverflow = 15;
inline constexpr int32_t kIllegalOperation = 20;
inline constexpr int32_t kAlreadyInitialized = 23;
inline constexpr int32_t kNamespaceNotFound = 26;
inline constexpr int32_t kIndexNotFound = 27;
inline constexpr int32_t kPathNotViable = 28;
inline constexpr int32_t kConflictingUpdateOperators = 40;
inline constexpr int32_t kCursorNotFound = 43;
inline constexpr int32_t kNamespaceExists = 48;
inline constexpr int32_t kMaxTimeMSExpired = 50;
inline constexpr int32_t kDollarPrefixedFieldName = 52;
inline constexpr int32_t kInvalidIdField = 53;
inline constexpr int32_t kNotSingleValueField = 54;
inline constexpr int32_t kEmptyFieldName = 56;
inline constexpr int32_t kCommandNotFound = 59;
inline constexpr int32_t kImmutableField = 66;
inline constexpr int32_t kCannotCreateIndex = 67;
inline constexpr int32_t kIndexAlreadyExists = 68;
inline constexpr int32_t kInvalidOptions = 72;
inline constexpr int32_t kInvalidNamespace = 73;
inline constexpr int32_t kNoReplicationEnabled = 76;
inline constexpr int32_t kUnsatisfiableWriteConcern = 100;
inline constexpr int32_t kClientMetadataCannotBeMutated = 186;
inline constexpr int32_t kIndexOptionsConflict = 85;
inline constexpr int32_t kIndexKeySpecsConflict = 86;
inline constexpr int32_t kNetworkTimeout = 89;
inline constexpr int32_t kShutdownInProgress = 91;
inline constexpr int32_t kWriteConcernFailed = 64;
inline constexpr int32_t kMultipleErrorsOccurred = 65;
inline constexpr int32_t kInvalidReplicaSetConfig = 93;
inline constexpr int32_t kNodeNotFound = 74;
inline constexpr int32_t kNotYetInitialized = 94;
inline constexpr int32_t kUnknownReplWriteConcern = 79;
inline constexpr int32_t kConflictingOperationInProgress = 117;
inline constexpr int32_t kInvalidSyncSource = 119;
inline constexpr int32_t kOplogStartMissing = 120;
inline constexpr int32_t kStaleTerm = 145;
inline constexpr int32_t kExceededMemoryLimit = 146;
inline constexpr int32_t kDurationOverflow = 159;
inline constexpr int32_t kOperationFailed = 96;
inline constexpr int32_t kNotSecondary = 95;
inline constexpr int32_t kCommandFailed = 125;
inline constexpr int32_t kNoSuchTransaction = 251;
inline constexpr int32_t kInvalidUUID = 207;
inline constexpr int32_t kNotImplemented = 238;
inline constexpr int32_t kIncompleteTransactionHistory = 217;
inline constexpr int32_t kIllegalOpMsgFlag = 223;
inline constexpr int32_t kQueryFeatureNotAllowed = 224;  // e.g. $expr in an inserting upsert
inline constexpr int32_t kTransactionTooOld = 225;
inline constexpr int32_t kTooManyDocumentSequences = 233;
inline constexpr int32_t kExceededTimeLimit = 262;
inline constexpr int32_t kOutOfDiskSpace = 14031;
inline constexpr int32_t kChecksumMismatch = 288;
inline constexpr int32_t kUnsupportedOpQueryCommand = 352;
inline constexpr int32_t kPrimarySteppedDown = 189;
inline constexpr int32_t kElectionInProgress = 216;
inline constexpr int32_t kNotWritablePrimary = 10107;
inline constexpr int32_t kInterrupted = 11601;
inline constexpr int32_t kInterruptedAtShutdown = 11600;
inline constexpr int32_t kInterruptedDueToReplStateChange = 11602;
inline constexpr int32_t kDuplicateKey = 11000;
inline constexpr int32_t kNotPrimaryNoSecondaryOk = 13435;
inline constexpr int32_t kNotPrimaryOrSecondary = 13436;
inline constexpr int32_t kWriteConflict = 112;
inline constexpr int32_t kNoProgressMade = 82;
inline constexpr int32_t kInvalidPipelineOperator = 168;  // unknown expression or stage
inline constexpr int32_t kConversionFailure = 241;        // $toDate/$toLong/$convert
inline constexpr int32_t kLocation16612 = 16612;  // $add: only one date allowed
inline constexpr int32_t kUnknownField = 40415;   // an IDL-parsed argument has an unknown field
// Change streams (docs/mongodb-behaviour.md, Change streams).
inline constexpr int32_t kNoMatchingDocument = 47;
inline constexpr int32_t kCappedPositionLost = 136;
inline constexpr int32_t kStaleShardVersion = 63;
inline constexpr int32_t kFailedToSatisfyReadPreference = 133;
inline constexpr int32_t kStaleEpoch = 150;
inline constexpr int32_t kRetryChangeStream = 234;
inline constexpr int32_t kCursorKilled = 237;
inline constexpr int32_t kInvalidResumeToken = 260;
inline constexpr int32_t kChangeStreamFatalError = 280;
inline constexpr int32_t kChangeStreamHistoryLost = 286;
inline constexpr int32_t kCursorInUse = 292;
inline constexpr int32_t kBSONObjectTooLarge = 10334;
inline constexpr int32_t kBufBuilderTooLarge = 13548;  // a value past the 64 MiB encoding buffer
inline constexpr int32_t kStaleConfig = 13388;
}  // namespace code

// The codeName for a code; "Location<code>" for codes that have no name (as mongod does).
// Returns a view into static storage.
std::string_view code_name(int32_t code);

// True for codes in the server's RetriableError category (docs/mongodb-behaviour.md, Error labels):
// a retryable write that fails with one of these gets the "RetryableWriteError" label.
bool is_retriable_error(int32_t code);
// The server's NetworkError category.
bool is_network_error(int32_t code);
// Codes for which an aggregate or getMore of a change stream gets the
// "ResumableChangeStreamError" label (mongod's ErrorLabelBuilder: retriable, network and
// need-retargeting errors, RetryChangeStream, FailedToSatisfyReadPreference).
bool is_resumable_change_stream_error(int32_t code);
// The NonResumableChangeStreamError category (280, 286): those errors get that label.
bool is_non_resumable_change_stream_error(int32_t code);

}  // namespace mongosim
