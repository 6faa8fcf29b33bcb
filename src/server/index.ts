/**
 * The watch server's public surface: createWatchServer and the pieces a
 * caller needs to describe what it serves.
 */
export { createWatchServer, type TlsOptions, type WatchServer, type WatchServerOptions } from './server.js';
export { resolveResource, resourceInfo, deriveKind, singularize, type ResourceSpec } from './resources.js';
export type { ServedResource, WritableStore } from './served-resource.js';
export { DEFAULT_MAX_WATCHES } from './watch-registry.js';
export { DEFAULT_BODY_LIMIT } from './request-body.js';
export { MSGPACK_TYPE } from './media-type.js';
export { DEFAULT_TIMEOUTS, type ServerTimeouts } from './limits/timeouts.js';
export { DEFAULT_BUFFER_LIMITS, type BufferLimits } from './limits/response-buffers.js';
export { createLogger, LOG_LEVELS, type Logger, type LoggerOptions, type LogLevel } from './logging/logger.js';
