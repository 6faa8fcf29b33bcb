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
