#include "base/error_codes.h"

#include <mutex>
#include <string>
#include <unordered_map>

namespace mongosim {

namespace {

struct Named {
  int32_t code;
  std::string_view name;
};

constexpr Named kNames[] = {
    {1, "InternalError"},
    {2, "BadValue"},
    {4, "NoSuchKey"},
    {6, "HostUnreachable"},
    {7, "HostNotFound"},
    {8, "UnknownError"},
    {9, "FailedToParse"},
    {11, "UserNotFound"},
    {13, "Unauthorized"},
    {14, "TypeMismatch"},
    {15, "Overflow"},
    {20, "IllegalOperation"},
    {23, "AlreadyInitialized"},
    {26, "NamespaceNotFound"},
    {27, "IndexNotFound"},
    {28, "PathNotViable"},
    {40, "ConflictingUpdateOperators"},
    {43, "CursorNotFound"},
    {48, "NamespaceExists"},
    {50, "MaxTimeMSExpired"},
    {52, "DollarPrefixedFieldName"},
    {53, "InvalidIdField"},
    {54, "NotSingleValueField"},
    {56, "EmptyFieldName"},
    {59, "CommandNotFound"},
    {64, "WriteConcernFailed"},
    {65, "MultipleErrorsOccurred"},
    {66, "ImmutableField"},
    {67, "CannotCreateIndex"},
    {68, "IndexAlreadyExists"},
    {72, "InvalidOptions"},
    {73, "InvalidNamespace"},
    {74, "NodeNotFound"},
    {76, "NoReplicationEnabled"},
    {79, "UnknownReplWriteConcern"},
    {82, "NoProgressMade"},
    {85, "IndexOptionsConflict"},
    {86, "IndexKeySpecsConflict"},
    {89, "NetworkTimeout"},
    {91, "ShutdownInProgress"},
    {93, "InvalidReplicaSetConfig"},
    {94, "NotYetInitialized"},
    {95, "NotSecondary"},
    {96, "OperationFailed"},
    {125, "CommandFailed"},
    {100, "UnsatisfiableWriteConcern"},
    {112, "WriteConflict"},
    {117, "ConflictingOperationInProgress"},
    {119, "InvalidSyncSource"},
    {120, "OplogStartMissing"},
    {134, "ReadConcernMajorityNotAvailableYet"},
    {186, "ClientMetadataCannotBeMutated"},
    {145, "StaleTerm"},
    {146, "ExceededMemoryLimit"},
    {189, "PrimarySteppedDown"},
    {207, "InvalidUUID"},
    {216, "ElectionInProgress"},
    {217, "IncompleteTransactionHistory"},
    {223, "IllegalOpMsgFlag"},
    {224, "QueryFeatureNotAllowed"},
    {225, "TransactionTooOld"},
    {233, "TooManyDocumentSequences"},
    {238, "NotImplemented"},
    {251, "NoSuchTransaction"},
    {262, "ExceededTimeLimit"},
    {14031, "OutOfDiskSpace"},
    {288, "ChecksumMismatch"},
    {352, "UnsupportedOpQueryCommand"},
    {168, "InvalidPipelineOperator"},
    {241, "ConversionFailure"},
    {9001, "SocketException"},
    {10107, "NotWritablePrimary"},
    {11000, "DuplicateKey"},
    {11600, "InterruptedAtShutdown"},
    {11601, "Interrupted"},
    {11602, "InterruptedDueToReplStateChange"},
    {13435, "NotPrimaryNoSecondaryOk"},
    {13436, "NotPrimaryOrSecondary"},
    {50915, "BackupCursorOpenConflictWithCheckpoint"},
    {47, "NoMatchingDocument"},
    {136, "CappedPositionLost"},
    {63, "StaleShardVersion"},
    {133, "FailedToSatisfyReadPreference"},
    {150, "StaleEpoch"},
    {159, "DurationOverflow"},
    {234, "RetryChangeStream"},
    {237, "CursorKilled"},
    {260, "InvalidResumeToken"},
    {280, "ChangeStreamFatalError"},
    {286, "ChangeStreamHistoryLost"},
    {292, "CursorInUse"},
    {10334, "BSONObjectTooLarge"},
    {13388, "StaleConfig"},
};

}  // namespace

std::string_view code_name(int32_t code) {
  for (const auto& n : kNames) {
    if (n.code == code) return n.name;
  }
  // mongod names anonymous assertion codes "Location<code>"; intern them so the view lives on.
  static std::mutex mu;
  static std::unordered_map<int32_t, std::string> interned;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = interned.try_emplace(code, "Location" + std::to_string(code));
  return it->second;
}

bool is_retriable_error(int32_t code) {
  switch (code) {
    case 6: case 7: case 89: case 91: case 134: case 189: case 262: case 9001:
    case 10107: case 11600: case 11602: case 13435: case 13436: case 50915:
      return true;
    default:
      return false;
  }
}

bool is_network_error(int32_t code) {
  switch (code) {
    case 6: case 7: case 89: case 9001:
      return true;
    default:
      return false;
  }
}

bool is_resumable_change_stream_error(int32_t code) {
  switch (code) {
    case code::kRetryChangeStream:
    case code::kFailedToSatisfyReadPreference:
    case code::kStaleShardVersion:
    case code::kStaleEpoch:
    case code::kStaleConfig:
      return true;
    default:
      return is_retriable_error(code) || is_network_error(code);
  }
}

bool is_non_resumable_change_stream_error(int32_t code) {
  return code == code::kChangeStreamFatalError || code == code::kChangeStreamHistoryLost;
}

}  // namespace mongosim
