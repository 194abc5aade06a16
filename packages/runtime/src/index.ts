/**
 * @kiln/runtime: read a package's executable representation and call its covered exports (SPEC §7).
 * Depends on Node's built-ins only, so a consumer installs it without kiln's build machinery.
 * node:vm is not a security sandbox: see call.ts.
 */
export type { RepCoverage, RepEntry, RepHeader, RepPayload, RepRequirements, Representation } from './model.js';
export {
  COMPRESSION,
  DEFAULT_COMPRESSION,
  KNOWN_FEATURES,
  LIMITS,
  MAGIC,
  PREFIX,
  PREFIX_FIELDS,
  REPRESENTATION_FORMAT,
  SEAL_SIZE,
  STATIC_DICTIONARY_SHA256,
  fieldWidth,
  readVarUint,
  recordLayout,
  varUint,
  compareCodePoints,
  type Compression,
  type PrefixField,
  type PrefixValues,
  type RecordLayout,
} from './format.js';
export { staticDictionary } from './dictionary.js';
export { REP_HINTS, RepError, isRepError, repError, repErrorRecord, type RepErrorCode, type RepErrorRecord } from './errors.js';
export { compressPayload, encodeRepresentation, stampRepresentation, type EncodeOptions } from './write.js';
export { openRepresentation, readRepresentation, type OpenOptions, type RepPayloadInfo, type RepReader, type RepSections } from './read.js';
export { REPRESENTATION_FILE, findPackageDir, packageNameOf, representationPath, representationRelPath } from './locate.js';
export { callExport, checkRequirements, consumerFor, createConsumer, loadExport, type Consumer, type ConsumerOptions } from './call.js';
