/**
 * Worker script for history-ring.test.ts: a second thread that reads the ring
 * while the main thread appends. Two modes (workerData.mode):
 *
 * - 'hammer': random reads around the oldest and newest indices, decoding and
 *   checking every OK payload against its index; indices known to be evicted
 *   must answer OVERWRITTEN; indexAfterRV answers are checked too.
 * - 'follow': reads every index in order, parking on the publish counter when
 *   caught up; when it falls behind (OVERWRITTEN) it resumes at indexAfterRV.
 * - 'refs': like 'hammer', on payloads whose previous object is a reference
 *   into an earlier payload (ring-fixtures refPayload): every OK read must hold
 *   exactly its payload and the previous event's frame (refCheck).
 *
 * Runs until control[0] becomes 1 ('hammer') or the writer's final index is
 * reached ('follow'), then posts its counters. Loaded directly by the test
 * runner (node --test dist/test/) it does nothing.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { HistoryRingHandle } from '../../src/ring/ring-layout.js';
import { HistoryRingReader, ReadStatus, TOO_OLD, createRingRecord } from '../../src/ring/ring-reader.js';
import { hash32 } from '../../src/ring/hash32.js';
import { checkEvent, namespaceOf, refCheck, refPrevTable, rvOf, typeCodeOf } from './ring-fixtures.js';

export interface ReaderWorkerData {
  mode: 'hammer' | 'follow' | 'refs';
  /** 'refs': events on refKeys keys (ring-fixtures refKeyOf), refEvents of them in all. */
  refKeys?: number;
  refEvents?: number;
  handle: HistoryRingHandle;
  /** Int32: [0] stop flag, [1] final published index for 'follow' (-1 until known). */
  control: SharedArrayBuffer;
  maxCapacity: number;
}

export interface ReaderWorkerResult {
  reads: number;
  ok: number;
  overwritten: number;
  notPublished: number;
  /** Reads that returned OK with wrong metadata or bytes: must be 0. */
  torn: number;
  /** Reads of indices below published − maxCapacity (must all answer OVERWRITTEN). */
  staleReads: number;
  /** Of those, answers other than OVERWRITTEN: must be 0. */
  staleOk: number;
  /** indexAfterRV answers that were wrong: must be 0. */
  badSearch: number;
  searches: number;
  firstError: string | null;
  /** 'follow': events seen in order, and resumes after falling behind. */
  followed: number;
  resumes: number;
  /** 'follow': indices jumped over by resumes (followed + skipped = all indices). */
  skipped: number;
  waits: number;
  /** Reader retries (slot changed under a read): shows the seqlock path ran. */
  retries: number;
}

function run(data: ReaderWorkerData): ReaderWorkerResult {
  const reader = new HistoryRingReader(data.handle);
  const control = new Int32Array(data.control);
  const rec = createRingRecord(64);
  const res: ReaderWorkerResult = {
    reads: 0,
    ok: 0,
    overwritten: 0,
    notPublished: 0,
    torn: 0,
    staleReads: 0,
    staleOk: 0,
    badSearch: 0,
    searches: 0,
    firstError: null,
    followed: 0,
    resumes: 0,
    skipped: 0,
    waits: 0,
    retries: 0,
  };
  const fail = (msg: string): void => {
    res.torn++;
    if (res.firstError === null) res.firstError = msg;
  };
  const check = (abs: number, payload: boolean): void => {
    res.reads++;
    if (payload) {
      const d = reader.decode(abs);
      if (d.status === ReadStatus.OK) {
        res.ok++;
        const err = checkEvent(abs, d.rv, d.event);
        if (err !== null) fail(`decode(${abs}): ${err}`);
      } else if (d.status === ReadStatus.OVERWRITTEN) res.overwritten++;
      else res.notPublished++;
    } else {
      const st = reader.readMeta(abs, rec);
      if (st === ReadStatus.OK) {
        res.ok++;
        if (rec.absIndex !== abs || rec.rv !== rvOf(abs) || rec.type !== typeCodeOf(abs)) {
          fail(`readMeta(${abs}): rv ${rec.rv} type ${rec.type}`);
        } else if (rec.nsHash !== hash32(namespaceOf(abs)) || rec.nameHash !== hash32(`pod-${abs}`)) {
          fail(`readMeta(${abs}): hashes`);
        }
      } else if (st === ReadStatus.OVERWRITTEN) res.overwritten++;
      else res.notPublished++;
    }
  };

  if (data.mode === 'refs') {
    const prev = refPrevTable(data.refEvents!, data.refKeys!);
    let x = 99;
    const rand = (n: number): number => {
      x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
      return x % n;
    };
    const read = (abs: number): void => {
      res.reads++;
      const st = reader.read(abs, rec);
      if (st === ReadStatus.OK) {
        res.ok++;
        const err = rec.rv === rvOf(abs) ? refCheck(abs, prev[abs]!, rec) : `rv ${rec.rv}`;
        if (err !== null) fail(`read(${abs}): ${err}`);
      } else if (st === ReadStatus.OVERWRITTEN) res.overwritten++;
      else res.notPublished++;
    };
    while (Atomics.load(control, 0) === 0) {
      const pub = reader.publishedIndex;
      const old = reader.oldestIndex;
      if (pub === 0) continue;
      // The eviction front (whose previous objects are the oldest bytes), the newest, the middle.
      read(old);
      read(old + rand(4));
      read(pub - 1);
      read(old + rand(Math.max(1, pub - old)));
    }
    res.retries = reader.retries;
    return res;
  }

  if (data.mode === 'hammer') {
    let x = 12345;
    const rand = (n: number): number => {
      x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
      return x % n;
    };
    for (let round = 1; Atomics.load(control, 0) === 0; round++) {
      const pub = reader.publishedIndex;
      const old = reader.oldestIndex;
      if (pub === 0) continue;
      // Race the eviction front (payload copies: the bytes being reused), the
      // newest events and the middle.
      check(old, true);
      check(old + 1, true);
      check(old + rand(4), true);
      check(pub - 1, false);
      check(old + rand(Math.max(1, pub - old)), (res.reads & 1) === 0);
      // Definitely evicted: at most maxCapacity events are held.
      const stale = pub - data.maxCapacity - 1 - rand(50);
      if (stale >= 0) {
        res.reads++;
        res.staleReads++;
        const st = reader.read(stale, rec);
        if (st !== ReadStatus.OVERWRITTEN) {
          res.staleOk++;
          if (res.firstError === null) res.firstError = `stale index ${stale} answered ${st}`;
        }
      }
      // Binary search: the first index after rvOf(x) is x + 1, or the RV is too old.
      if ((round & 3) === 0 && pub - old > 2) {
        const xi = Math.max(0, old - 3 + rand(pub - old));
        if (xi + 1 < pub) {
          res.searches++;
          const i = reader.indexAfterRV(rvOf(xi));
          if (i === TOO_OLD ? !(xi < reader.oldestIndex) : i !== xi + 1) {
            res.badSearch++;
            if (res.firstError === null) res.firstError = `indexAfterRV(rv of ${xi}) = ${i}`;
          }
        }
      }
    }
    res.retries = reader.retries;
    return res;
  }

  // 'follow': in order, park when caught up.
  let pos = 0;
  for (;;) {
    const seen = reader.publishCount;
    const st = reader.read(pos, rec);
    if (st === ReadStatus.OK) {
      res.reads++;
      res.ok++;
      res.followed++;
      if (rec.rv !== rvOf(pos)) fail(`follow ${pos}: rv ${rec.rv}`);
      pos++;
    } else if (st === ReadStatus.OVERWRITTEN) {
      res.overwritten++;
      res.resumes++;
      // Fell behind: resume after the last RV we saw (as a resync would: 410 if too old).
      const i = reader.indexAfterRV(pos === 0 ? 0 : rvOf(pos - 1));
      const to = i === TOO_OLD ? reader.oldestIndex : i;
      res.skipped += to - pos;
      pos = to;
    } else {
      const fin = Atomics.load(control, 1);
      if (fin >= 0 && pos >= fin) {
        res.retries = reader.retries;
        return res;
      }
      res.waits++;
      reader.waitForPublish(seen, 20);
    }
  }
}

if (!isMainThread && parentPort !== null) {
  const data = workerData as ReaderWorkerData;
  parentPort.postMessage('ready');
  parentPort.postMessage(run(data));
}
