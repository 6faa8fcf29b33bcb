/**
 * Test support: a producer thread (spsc-worker.ts, in `role`) pushes refs
 * 0 .. count-1 into a new channel of `capacity` while this thread reads it
 * with popBatched, parking on waitForDataSync when it is empty. Answers what
 * the producer reported and what arrived here: out-of-order or wrong-variant
 * references, the next expected one, and the terminal code.
 */
import { Worker } from 'node:worker_threads';
import { POP_CLOSED, SpscChannel } from '../../src/ring/spsc-channel.js';
import { WriterOwner } from '../../src/protocol/channel-variants.js';
import type { SpscWorkerData, SpscWorkerResult } from './spsc-worker.js';

export interface ThreadRead {
  producer: SpscWorkerResult;
  /** References that were not the next one in order, or had the wrong variant. */
  errors: number;
  /** One past the last reference read. */
  expected: number;
  terminal: number;
}

export async function readFromProducerThread(
  role: SpscWorkerData['role'],
  capacity: number,
  count: number,
): Promise<ThreadRead> {
  const producer = SpscChannel.create(capacity, WriterOwner.SYNC_WORKER);
  const consumer = new SpscChannel(producer.handle);
  const data: SpscWorkerData = { role, handle: producer.handle, start: 0, count };
  const worker = new Worker(new URL('./spsc-worker.js', import.meta.url), { workerData: data });
  const result = new Promise<SpscWorkerResult>((resolve, reject) => {
    worker.once('message', (m: SpscWorkerResult) => resolve(m));
    worker.once('error', reject);
  });
  let expected = 0;
  let errors = 0;
  for (;;) {
    const ref = consumer.popBatched();
    if (ref >= 0) {
      if (ref !== expected || consumer.lastVariant !== ref % 3) errors++;
      expected = ref + 1;
      continue;
    }
    if (ref === POP_CLOSED) break;
    consumer.waitForDataSync(50); // publishes the batch first: the producer parked for space wakes
  }
  const res = await result;
  await worker.terminate();
  return { producer: res, errors, expected, terminal: consumer.terminal };
}
