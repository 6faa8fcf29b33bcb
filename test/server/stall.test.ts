/**
 * The KEP's integration test with a real stalled client, over real sockets.
 *
 * A client opens a watch and then stops reading: a raw TCP HTTP/1.1 client
 * pauses its socket, or an HTTP/2 client with a small stream window
 * (initialWindowSize 16 KiB) stops consuming its stream. The test writes big
 * objects (8 KiB each, channelCapacity 10) until the engine reports the
 * stall (alpha/beta: apiserver_watch_cache_watcher_stalls_total > 0; off:
 * apiserver_terminated_watchers_total{reason="unresponsive"} > 0), so the
 * socket buffers, the stream window and the channel are all full, then far
 * more than all of that again, and only then lets the client read again.
 *
 * - alpha and beta: every event arrives exactly once, in RV order, with no
 *   ERROR, the watch stays open (a later event still arrives), nothing was
 *   terminated; a watcher that kept reading got everything too.
 * - off: the server force-closed the watch during the stall: the stream ends
 *   cleanly with no ERROR event, with fewer events than were written (an
 *   exact prefix of them), and terminated{reason="unresponsive"} > 0.
 * Writes are paced (5 per event-loop turn, below the channel size) so only a
 * client that stops reading can fill a channel. No timing assertions.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { H2Watch, RawWatch, waitUntil, type WatchClient, type WireEvent } from '../support/http-client.js';
import { pod, startFixture, type Fixture } from './server-fixture.js';

const PATH = '/api/v1/namespaces/default/pods';
const PAYLOAD_BYTES = 8 * 1024;
const PER_TURN = 5;
const EXTRA_AFTER_STALL = 300;
const MAX_EVENTS = 20_000;

function rvs(events: WireEvent[]): number[] {
  return events.map((e) => Number(e.object.metadata.resourceVersion));
}

/** Write paced 8 KiB pods until `stalled()` holds, then EXTRA_AFTER_STALL more; returns the RVs written. */
async function writeThroughStall(f: Fixture, prefix: string, stalled: () => Promise<boolean>): Promise<number[]> {
  const written: number[] = [];
  let extra = -1;
  while (extra < EXTRA_AFTER_STALL) {
    for (let i = 0; i < PER_TURN; i++) {
      const obj = await f.store().create(pod(`${prefix}-${written.length}`, 'default', PAYLOAD_BYTES));
      written.push(Number(obj.metadata.resourceVersion));
    }
    await new Promise((r) => setImmediate(r));
    if (extra >= 0) extra += PER_TURN;
    else if (await stalled()) extra = 0;
    if (written.length > MAX_EVENTS)
      throw new Error(`no stall after ${written.length} events of ${PAYLOAD_BYTES} bytes`);
  }
  return written;
}

function openStalledClient(f: Fixture, transport: 'http1' | 'h2', path: string): WatchClient {
  return transport === 'http1'
    ? new RawWatch(f.port, path)
    : new H2Watch(f.url, path, { initialWindowSize: 16 * 1024 });
}

for (const mode of ['alpha', 'beta', 'off'] as const) {
  describe(`stalled client, mode ${mode}`, () => {
    for (const transport of ['http1', 'h2'] as const) {
      test(`${transport}: a client that stops reading and resumes`, async () => {
        const f = await startFixture({ mode, channelCapacity: 10 });
        try {
          const start = f.cache().resourceVersion;
          const path = `${PATH}?watch=true&resourceVersion=${start}`;
          const healthy = new RawWatch(f.port, path);
          const stalled = openStalledClient(f, transport, path);
          await Promise.all([healthy.response, stalled.response]);
          assert.equal(stalled.status, 200);
          stalled.pause();

          const unresponsive = (): Promise<number> =>
            f.metric('apiserver_terminated_watchers_total', { reason: 'unresponsive' });
          const stalls = (): Promise<number> => f.metric('apiserver_watch_cache_watcher_stalls_total');
          const written = await writeThroughStall(f, `${mode}-${transport}`, async () =>
            mode === 'off' ? (await unresponsive()) > 0 : (await stalls()) > 0,
          );
          const last = written[written.length - 1]!;
          assert.ok(stalled.events.length < written.length, 'the stalled client was really behind');

          stalled.resume();
          if (mode === 'off') {
            await stalled.waitFor(() => stalled.endedCleanly, 'the force-closed stream to end', 60_000);
            const got = rvs(stalled.events);
            assert.ok(!stalled.events.some((e) => e.type === 'ERROR'), 'a force-close sends no ERROR event');
            assert.ok(got.length < written.length, `fewer events than written (${got.length} < ${written.length})`);
            assert.deepEqual(got, written.slice(0, got.length), 'what did arrive is an in-order prefix');
            assert.ok((await unresponsive()) > 0);
            // the healthy watcher may be taxed by the shared dispatch wait, but never sees gaps or repeats
            const h = rvs(healthy.events);
            assert.deepEqual(h, written.slice(0, h.length));
          } else {
            await stalled.waitFor(
              () => stalled.events.length >= written.length || stalled.closed,
              `all ${written.length} events after resuming`,
              60_000,
            );
            await healthy.waitFor(
              () => healthy.events.length >= written.length,
              'all events on the healthy watcher',
              60_000,
            );
            assert.ok(!stalled.events.some((e) => e.type === 'ERROR'), 'no ERROR event');
            assert.deepEqual(rvs(stalled.events), written, 'every event exactly once, in RV order');
            assert.deepEqual(rvs(healthy.events), written);
            assert.equal(stalled.closed, false, 'the watch stays open');
            const more = await f.store().create(pod(`${mode}-${transport}-after`));
            await stalled.waitFor(
              () => stalled.events.length === written.length + 1,
              'a live event after the catch-up',
            );
            assert.equal(stalled.events.at(-1)!.object.metadata.resourceVersion, more.metadata.resourceVersion);
            assert.ok((await stalls()) > 0, 'the watcher did stall');
            assert.equal(await unresponsive(), 0, 'nobody was force-closed');
          }
          assert.ok(last > start);
          stalled.close();
          healthy.close();
          await waitUntil(
            () => f.server.activeWatches === 0 && f.cache().watcherCount === 0,
            'every watch to end after the clients left',
          );
        } finally {
          await f.close();
        }
      });
    }
  });
}
