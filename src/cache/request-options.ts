/**
 * The options of watch, list and get (API.md "Library"), and their
 * validation. Malformed input is a BadRequestError (400) with a clear message,
 * thrown before anything starts.
 */
import { BadRequestError } from '../core/errors.js';

/** The longest watch timeout a Node timer can hold (2^31 - 1 ms, about 24.8 days); longer is clamped to it. */
export const MAX_WATCH_TIMEOUT_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

export type ResourceVersionMatch = 'NotOlderThan' | 'Exact';

export interface WatchOptions {
  /** '' = now (consistent), '0' = any, 'N' = after N. */
  resourceVersion?: string;
  resourceVersionMatch?: ResourceVersionMatch;
  sendInitialEvents?: boolean;
  allowWatchBookmarks?: boolean;
  namespace?: string;
  name?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Per-watch channel size (overrides the cache's channelCapacity and the heuristic). */
  channelCapacity?: number;
  timeoutSeconds?: number;
  signal?: AbortSignal;
}

export interface ListOptions {
  resourceVersion?: string;
  resourceVersionMatch?: ResourceVersionMatch;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export interface GetOptions {
  resourceVersion?: string;
}

/** Parse an RV parameter: undefined/'' -> '' (unset), else a non-negative integer. */
function parseResourceVersion(value: string | undefined, what = 'resourceVersion'): number | '' {
  if (value === undefined || value === '') return '';
  if (typeof value !== 'string' || !/^\d+$/.test(value)) {
    throw new BadRequestError(`invalid ${what} "${String(value)}": must be an unsigned decimal integer`);
  }
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new BadRequestError(`invalid ${what} "${value}": too large`);
  return n;
}

function checkMatch(value: unknown): ResourceVersionMatch | undefined {
  if (value === undefined || value === '') return undefined;
  if (value !== 'NotOlderThan' && value !== 'Exact') {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- whatever the caller passed, shown as String() shows it
    const shown = String(value);
    throw new BadRequestError(`invalid resourceVersionMatch "${shown}": must be NotOlderThan or Exact`);
  }
  return value;
}

function checkString(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'string') throw new BadRequestError(`${name} must be a string`);
}

export interface ValidatedWatch {
  rv: number | '';
  sendInitialEvents: boolean | undefined;
  allowBookmarks: boolean;
  timeoutMs: number;
  channelCapacity: number | undefined;
}

export function validateWatchOptions(o: WatchOptions): ValidatedWatch {
  if (o === null || typeof o !== 'object') throw new BadRequestError('watch options must be an object');
  for (const k of ['namespace', 'name', 'labelSelector', 'fieldSelector'] as const) checkString(k, o[k]);
  const rv = parseResourceVersion(o.resourceVersion);
  const match = checkMatch(o.resourceVersionMatch);
  if (o.sendInitialEvents !== undefined && typeof o.sendInitialEvents !== 'boolean')
    throw new BadRequestError('sendInitialEvents must be a boolean');
  if (o.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    throw new BadRequestError('sendInitialEvents requires resourceVersionMatch=NotOlderThan');
  }
  if (match !== undefined && o.sendInitialEvents === undefined) {
    throw new BadRequestError('resourceVersionMatch on a watch requires sendInitialEvents');
  }
  if (match === 'Exact') throw new BadRequestError('resourceVersionMatch=Exact is not allowed on a watch');
  let timeoutMs = Infinity;
  if (o.timeoutSeconds !== undefined) {
    if (typeof o.timeoutSeconds !== 'number' || !Number.isFinite(o.timeoutSeconds) || o.timeoutSeconds < 0) {
      throw new BadRequestError(`invalid timeoutSeconds ${String(o.timeoutSeconds)}: must be a number >= 0`);
    }
    // Clamped to what a Node timer can hold (longer overflowed it and ended the watch at once).
    if (o.timeoutSeconds > 0) timeoutMs = Math.min(o.timeoutSeconds, MAX_WATCH_TIMEOUT_SECONDS) * 1000;
  }
  if (o.channelCapacity !== undefined && (!Number.isInteger(o.channelCapacity) || o.channelCapacity < 1)) {
    throw new BadRequestError(`invalid channelCapacity ${String(o.channelCapacity)}: must be an integer >= 1`);
  }
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal))
    throw new BadRequestError('signal must be an AbortSignal');
  return {
    rv,
    sendInitialEvents: o.sendInitialEvents,
    allowBookmarks: o.allowWatchBookmarks === true,
    timeoutMs,
    channelCapacity: o.channelCapacity,
  };
}

export interface ValidatedList {
  rv: number | '';
  match: ResourceVersionMatch | undefined;
  limit: number;
}

export function validateListOptions(o: ListOptions): ValidatedList {
  if (o === null || typeof o !== 'object') throw new BadRequestError('list options must be an object');
  for (const k of ['namespace', 'labelSelector', 'fieldSelector', 'continue'] as const) checkString(k, o[k]);
  const rv = parseResourceVersion(o.resourceVersion);
  const match = checkMatch(o.resourceVersionMatch);
  if (match !== undefined && (o.resourceVersion === undefined || o.resourceVersion === '')) {
    throw new BadRequestError('resourceVersionMatch is forbidden unless resourceVersion is provided');
  }
  if (match === 'Exact' && rv === 0)
    throw new BadRequestError('resourceVersionMatch "Exact" is forbidden for resourceVersion "0"');
  if (o.continue !== undefined && o.continue !== '') {
    if (rv !== '' && rv !== 0)
      throw new BadRequestError('specifying resource version is not allowed when using continue');
    if (match !== undefined) throw new BadRequestError('resourceVersionMatch is forbidden when continue is provided');
  }
  let limit = 0;
  if (o.limit !== undefined) {
    if (typeof o.limit !== 'number' || !Number.isInteger(o.limit) || o.limit < 0)
      throw new BadRequestError(`invalid limit ${String(o.limit)}: must be an integer >= 0`);
    limit = o.limit;
  }
  return { rv, match, limit };
}
