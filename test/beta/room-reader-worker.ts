/**
 * Worker script for worker-room.test.ts: a consumer on another thread. It
 * posts `ready`, waits until the sync worker announces that it waits for
 * room (the control block's ROOM_WAITING), reads a quarter of the channel
 * (the low-water mark), signals the room as a consumer's pop does
 * (ControlBlock.signalRoom) and posts the references it read.
 *
 * Loaded directly by the test runner (node --test dist/test/) it does nothing.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { ControlBlock } from '../../src/beta/control-block.js';
import { SpscChannel, type SpscChannelHandle } from '../../src/ring/spsc-channel.js';

export interface RoomReaderData {
  channel: SpscChannelHandle;
  control: SharedArrayBuffer;
}

/** ControlBlock's ROOM_WAITING word (Int32 index). */
const ROOM_WAITING = 7;

if (!isMainThread && parentPort !== null) {
  const { channel, control } = workerData as RoomReaderData;
  const ch = new SpscChannel(channel);
  const words = new Int32Array(control);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  parentPort.postMessage({ ready: true });
  while (Atomics.load(words, ROOM_WAITING) !== 1) Atomics.wait(pause, 0, 0, 1);
  const got: number[] = [];
  while (ch.free * 4 < ch.capacity) got.push(ch.pop());
  new ControlBlock(control).signalRoom(ch.free, ch.capacity);
  parentPort.postMessage({ got });
}
