/** What the harness records of one watch session. */
import type { WatchOptions } from '../../src/index.js';
import type { HistoryBounds } from '../../src/history/event-history.js';

export interface Received {
  type: string;
  key: string;
  /** metadata.resourceVersion of the object (bookmarks: the bookmark RV). */
  rv: number;
  initialEnd?: boolean;
  /** ERROR: the Status code and message. */
  code?: number;
  message?: string;
}

export interface SessionRecord {
  consumer: number;
  index: number; // 0 for the first session of a consumer, then per reconnect
  options: WatchOptions;
  /** Store RV when the watch was requested (a consistent start is at least this). */
  floorRV: number;
  /** Cache RV right after watch() returned (a '0' state start is exactly this). */
  cacheRVAtStart: number;
  boundsAtStart: HistoryBounds;
  received: Received[];
  /** How the session ended: 'done' (iterator ended by the engine), 'client' (consumer stopped it), 'open' (still open at the end). */
  end: 'done' | 'client' | 'open';
  /** The consumer kept reading until the end (so the session must be complete). */
  readingAtEnd: boolean;
  /** A reconnecting consumer re-listed after this session, at this RV. */
  relistRV?: number;
}

export interface Violation {
  session: SessionRecord;
  rule: string;
  detail: string;
}
