/**
 * Worker script for spsc-channel.test.ts. Roles (workerData.role):
 *
 * - 'producer': pushes refs start .. start+count-1 (variant = ref % 3), parking
 *   on waitForSpaceSync when full, then close(END).
 * - 'consumer': pops until POP_CLOSED, parking on waitForDataSync when empty,
 *   checking every ref arrives once and in order with its variant.
 * - 'handoff-producer': waits until the channel's writer owner is SYNC_WORKER
 *   (handed off by the main thread), then pushes like 'producer' and closes.
 * - 'batched-producer': pushes like 'producer' with pushBatched, publishing
 *   every 7 references and whenever the channel is full (before it parks).
 *
 * Loaded directly by the test runner (node --test dist/test/) it does nothing.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { POP_CLOSED, POP_EMPTY, SpscChannel, type SpscChannelHandle } from '../../src/ring/spsc-channel.js';
import { Terminal, WriterOwner, type Variant } from '../../src/protocol/channel-variants.js';

export interface SpscWorkerData {
  role: 'producer' | 'consumer' | 'handoff-producer' | 'batched-producer';
  handle: SpscChannelHandle;
  start: number;
  count: number;
}

export interface SpscWorkerResult {
  role: string;
  count: number;
  errors: number;
  firstError: string | null;
  terminal: number;
  parks: number;
  wakeups: number;
}

const SPINS = 200;

function produce(ch: SpscChannel, start: number, count: number, res: SpscWorkerResult): void {
  for (let ref = start; ref < start + count; ref++) {
    let spins = 0;
    while (!ch.tryPush(ref, (ref % 3) as Variant)) {
      if (++spins > SPINS) {
        res.parks++;
        ch.waitForSpaceSync(50);
        spins = 0;
      }
    }
    res.count++;
  }
  ch.close(Terminal.END);
}

function produceBatched(ch: SpscChannel, start: number, count: number, res: SpscWorkerResult): void {
  for (let ref = start; ref < start + count; ref++) {
    let spins = 0;
    while (!ch.pushBatched(ref, (ref % 3) as Variant)) {
      ch.publishPushes(); // what it wrote is the consumer's before it waits for room
      if (++spins > SPINS) {
        res.parks++;
        ch.waitForSpaceSync(50);
        spins = 0;
      }
    }
    if (ch.pendingPushes >= 7) ch.publishPushes();
    res.count++;
  }
  ch.close(Terminal.END); // publishes the last run first
}

function consume(ch: SpscChannel, start: number, res: SpscWorkerResult): void {
  let expected = start;
  let spins = 0;
  for (;;) {
    const ref = ch.pop();
    if (ref >= 0) {
      spins = 0;
      if (ref !== expected || ch.lastVariant !== ref % 3) {
        res.errors++;
        if (res.firstError === null) res.firstError = `got ${ref}/${ch.lastVariant}, expected ${expected}`;
        expected = ref;
      }
      expected++;
      res.count++;
    } else if (ref === POP_EMPTY) {
      if (++spins > SPINS) {
        res.parks++;
        ch.waitForDataSync(50);
        spins = 0;
      }
    } else if (ref === POP_CLOSED) {
      res.terminal = ch.terminal;
      return;
    }
  }
}

function run(data: SpscWorkerData): SpscWorkerResult {
  const ch = new SpscChannel(data.handle);
  const res: SpscWorkerResult = {
    role: data.role,
    count: 0,
    errors: 0,
    firstError: null,
    terminal: -1,
    parks: 0,
    wakeups: 0,
  };
  if (data.role === 'consumer') consume(ch, data.start, res);
  else if (data.role === 'batched-producer') produceBatched(ch, data.start, data.count, res);
  else {
    if (data.role === 'handoff-producer') {
      const wait = new Int32Array(new SharedArrayBuffer(4));
      while (ch.writerOwner !== WriterOwner.SYNC_WORKER) Atomics.wait(wait, 0, 0, 1);
    }
    produce(ch, data.start, data.count, res);
  }
  res.wakeups = ch.wakeups;
  return res;
}

if (!isMainThread && parentPort !== null) {
  parentPort.postMessage(run(workerData as SpscWorkerData));
}
